import CairnTestSupport
import Foundation
import Glibc
import Testing

/// The `cairn` commands against what users feed them and what they find: streams of any size and
/// of garbage, output that is not a file, a store that is damaged, a torn tail a writable open
/// cuts, an entity with sub-entities.
@Suite struct CommandStreamAndStoreStateTests {
    /// Runs `script` with `sh -c` in `directory`, `$CAIRN` naming the executable; waits at most
    /// `timeout` (then kills it and fails).
    func shell(_ script: String, in directory: String, timeout: Duration = .seconds(120)) async throws -> (status: Int32, output: String) {
        var executable = try #require(cairnExecutable(), "the cairn executable is built next to the tests")
        if !executable.hasPrefix("/") { executable = FileManager.default.currentDirectoryPath + "/" + executable }
        let process = try ChildProcess("/bin/sh", ["-c", "CAIRN=\"$0\"; " + script, executable], in: directory, includeStandardError: true)
        // Waited for on a thread of its own: a pool thread may not come back in time under a
        // parallel test run.
        let (status, killed) = try await onOwnThread { () -> (Int32, Bool) in
            let deadline = ContinuousClock.now + timeout
            while process.isRunning && ContinuousClock.now < deadline { usleep(20_000) }
            let killed = process.isRunning
            if killed { process.kill() }
            return (process.waitUntilExit(), killed)
        }
        if killed { Issue.record("still running after \(timeout): \(script)") }
        return (status, String(decoding: process.outputBytes, as: UTF8.self))
    }

    static let people = """
        {"format": "cairn-model", "version": 1, "entities": [{"name": "Person", "attributes": [
          {"name": "ticket", "type": "integer64"}, {"name": "name", "type": "string"}], "uniquenessConstraints": [["ticket"]]}]}
        """

    /// A directory with `model.json` (the people model).
    func directoryWithModel() throws -> TemporaryDirectory {
        let directory = TemporaryDirectory()
        try Data(Self.people.utf8).write(to: URL(fileURLWithPath: directory.path + "/model.json"))
        return directory
    }

    // MARK: Streams (standard input, pipes, devices)

    /// Virtual memory the import may use (`ulimit -v`, KiB): far less than an unbounded read of
    /// these streams takes, enough for the executable.
    static let memoryLimit = 1_500_000

    @Test func aDeviceOrAPipeOfGarbageFailsAtItsFirstByteWithinBoundedMemory() async throws {
        let directory = try directoryWithModel()
        let limit = "ulimit -v \(Self.memoryLimit); "
        let runs = [
            limit + "exec \"$CAIRN\" import s.store --entity Person /dev/zero --model model.json",
            limit + "exec \"$CAIRN\" import s.store --entity Person - --model model.json < /dev/zero",
            limit + "head -c 1073741824 /dev/zero | \"$CAIRN\" import s.store --entity Person - --model model.json",
            // Never ends by itself: the import must stop reading.
            limit + "yes garbage | \"$CAIRN\" import s.store --entity Person - --model model.json"
        ]
        for script in runs {
            // Each ends by itself, at the first byte (a hang is killed after a minute and fails).
            let result = try await shell(script, in: directory.path, timeout: .seconds(60))
            #expect(result.status == 1, "\(script): \(result.status) \(result.output)")
            #expect(result.output.contains("invalid JSON") && result.output.contains("(byte 0)"), "\(script): \(result.output)")
        }
        // A mapping file is read within a bound too.
        let mapping = try await shell(
            limit + "exec \"$CAIRN\" import s.store --entity Person /dev/null --model model.json --mapping /dev/zero", in: directory.path)
        #expect(mapping.status == 2 && mapping.output.contains("is larger than"), "\(mapping.output)")
    }

    @Test func aPipeOfValidJSONLargerThanAPieceImportsAndAnInvalidByteAfterItIsPlaced() async throws {
        let directory = try directoryWithModel()
        // JSON Lines of about 3 MiB, with a string of 2.5 MiB across pieces, then an array.
        var lines = (0..<40_000).map { #"{"ticket": \#($0), "name": "person \#($0) \#(String(repeating: "é", count: $0 % 7))"}"# }
        lines.append(#"{"ticket": 40000, "name": ""# + String(repeating: "long \\u00e9 ", count: 250_000) + #""}"#)
        lines.append("[" + (40_001..<40_100).map { #"{"ticket": \#($0)}"# }.joined(separator: ",\n ") + "]")
        let text = lines.joined(separator: "\n") + "\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: directory.path + "/people.jsonl"))
        let imported = try await shell(
            "ulimit -v \(Self.memoryLimit); cat people.jsonl | \"$CAIRN\" import s.store --entity Person - --model model.json --json", in: directory.path)
        #expect(imported.status == 0 && imported.output.contains(#""inserted":40100"#), "\(imported.output.suffix(500))")
        let count = try await shell("exec \"$CAIRN\" query s.store --entity Person --count", in: directory.path)
        #expect(count.output.trimmingCharacters(in: .whitespacesAndNewlines) == "40100")

        // An invalid byte far after the first piece: its offset, line and column in the whole stream.
        let broken = try await shell(
            "(cat people.jsonl; printf '{\"ticket\": 1}\\n{\"ticket\": 2,\\n x}') | \"$CAIRN\" import t.store --entity Person - --model model.json",
            in: directory.path)
        let offset = text.utf8.count + #"{"ticket": 1}"#.utf8.count + 1 + #"{"ticket": 2,"#.utf8.count + 2
        let line = text.utf8.filter { $0 == 0x0A }.count + 3
        #expect(broken.status == 1, "\(broken.output)")
        #expect(broken.output.contains("invalid JSON: line \(line), column 2 (byte \(offset))"), "\(broken.output)")
        let partial = try await shell("exec \"$CAIRN\" query t.store --entity Person --count", in: directory.path)
        #expect(partial.output.hasPrefix("0"), "nothing of a stream that fails is imported: \(partial.output)")
        // A stream that ends inside a value fails at its end; standard input from a file is mapped.
        let cut = try await shell("head -c 100 people.jsonl | \"$CAIRN\" import u.store --entity Person - --model model.json", in: directory.path)
        #expect(cut.status == 1 && cut.output.contains("invalid JSON"), "\(cut.output)")
        let redirected = try await shell("exec \"$CAIRN\" import s.store --entity Person - --json < people.jsonl", in: directory.path)
        #expect(redirected.status == 0 && redirected.output.contains(#""unchanged":40100"#), "\(redirected.output.suffix(300))")
    }

    // MARK: Output that is not a regular file

    @Test func exportWritesToPipesFIFOsAndDevices() async throws {
        let directory = try directoryWithModel()
        let setup = try await shell(
            #"echo '[{"ticket": 1, "name": "Ada"}, {"ticket": 2, "name": "Bob"}]' | "$CAIRN" import s.store --entity Person - --model model.json"#,
            in: directory.path)
        #expect(setup.status == 0, "\(setup.output)")
        let expected = #"{"ticket":1,"name":"Ada"}"# + "\n" + #"{"ticket":2,"name":"Bob"}"# + "\n"
        let export = "\"$CAIRN\" export s.store --entity Person --sort ticket --format jsonl"
        let piped = try await shell(export + " --output /dev/stdout 2>/dev/null | cat", in: directory.path)
        #expect(piped.status == 0 && piped.output == expected, "\(piped.output)")
        let devNull = try await shell(export + " --output /dev/null", in: directory.path)
        #expect(devNull.status == 0 && devNull.output.contains("exported 2 objects"), "\(devNull.output)")
        let fifo = try await shell(
            "mkfifo out.fifo && (cat out.fifo > copied.jsonl &) && " + export + " --output out.fifo && sleep 0.2 && cat copied.jsonl", in: directory.path)
        #expect(fifo.status == 0 && fifo.output.hasSuffix(expected), "\(fifo.output)")
        let file = try await shell(export + " --output out.jsonl 2>/dev/null && cat out.jsonl", in: directory.path)
        #expect(file.status == 0 && file.output == expected, "\(file.output)")
    }

    // MARK: Damaged stores

    @Test func everyCommandReportsTheStoresOwnErrorWithStatusOne() async throws {
        let directory = try directoryWithModel()
        let setup = try await shell(#"echo '{"ticket": 1}' | "$CAIRN" import s.store --entity Person - --model model.json"#, in: directory.path)
        #expect(setup.status == 0, "\(setup.output)")
        // A manifest that does not decode (and no fallback).
        try Data(repeating: 0x5A, count: 64).write(to: URL(fileURLWithPath: directory.path + "/s.store/MANIFEST"))
        for fallback in ["MANIFEST.prev", "MANIFEST.tmp"] { try? FileManager.default.removeItem(atPath: directory.path + "/s.store/" + fallback) }
        let commands = [
            "import s.store --entity Person people.json", "import s.store --entity Person people.json --model model.json",
            "export s.store --entity Person", "query s.store --entity Person", "dump s.store", "compact s.store", "stats s.store",
            "model s.store"
        ]
        try Data(#"{"ticket": 2}"#.utf8).write(to: URL(fileURLWithPath: directory.path + "/people.json"))
        for command in commands {
            let result = try await shell("exec \"$CAIRN\" " + command, in: directory.path)
            #expect(result.status == 1, "\(command): \(result.status) \(result.output)")
            #expect(!result.output.contains("no store yet") && result.output.contains("MANIFEST"), "\(command): \(result.output)")
        }
        // A store that is not there is still created by import, and refused by the others.
        let fresh = try await shell("exec \"$CAIRN\" import new.store --entity Person people.json --model model.json", in: directory.path)
        #expect(fresh.status == 0, "\(fresh.output)")
        let missing = try await shell("exec \"$CAIRN\" import none.store --entity Person people.json", in: directory.path)
        #expect(missing.status == 1 && missing.output.contains("no store at none.store") && missing.output.contains("--model"), "\(missing.output)")
    }

    @Test func aWritableOpenThatCutsATornTailSaysSo() async throws {
        let directory = try directoryWithModel()
        for store in ["a.store", "b.store"] {
            let setup = try await shell(#"echo '{"ticket": 1}' | "$CAIRN" import \#(store) --entity Person - --model model.json"#, in: directory.path)
            #expect(setup.status == 0, "\(setup.output)")
            let segment = try #require(try segmentFiles(directory.path + "/" + store).last)
            try write(try contents(segment) + Array(repeating: 0xAB, count: 100), to: segment)
        }
        try Data(#"{"ticket": 2}"#.utf8).write(to: URL(fileURLWithPath: directory.path + "/people.json"))
        for command in ["import a.store --entity Person people.json", "compact b.store"] {
            let result = try await shell("exec \"$CAIRN\" " + command, in: directory.path)
            let store = directory.path + "/" + command.split(separator: " ")[1]
            let torn = try FileManager.default.contentsOfDirectory(atPath: store).filter { $0.contains(".torn-") }
            #expect(result.status == 0 && torn.count == 1, "\(command): \(result.output)")
            let warnings = result.output.split(separator: "\n").filter { $0.hasPrefix("cairn: warning:") }
            #expect(warnings.count == 1 && warnings.first?.contains("cut 100 bytes") == true, "\(command): \(result.output)")
            #expect(warnings.first?.contains(torn.first ?? "?") == true, "\(command): \(result.output)")
        }
    }

    // MARK: Sub-entities

    @Test func queryPrintsAParentWithItsSubEntitiesInEveryFormat() async throws {
        let directory = TemporaryDirectory()
        let model = """
            {"format": "cairn-model", "version": 1, "entities": [
              {"name": "Abstract", "abstract": true, "attributes": [{"name": "identifier", "type": "string"}], "uniquenessConstraints": [["identifier"]]},
              {"name": "ConcreteA", "parent": "Abstract", "attributes": [{"name": "foo", "type": "string"}]},
              {"name": "ConcreteB", "parent": "Abstract", "attributes": [{"name": "bar", "type": "integer64"}]}]}
            """
        try Data(model.utf8).write(to: URL(fileURLWithPath: directory.path + "/model.json"))
        let a = try await shell(
            #"echo '[{"identifier": "a1", "foo": "x"}]' | "$CAIRN" import s.store --entity ConcreteA - --model model.json"#, in: directory.path)
        let b = try await shell(#"echo '[{"identifier": "b1", "bar": 7}]' | "$CAIRN" import s.store --entity ConcreteB -"#, in: directory.path)
        #expect(a.status == 0 && b.status == 0, "\(a.output) \(b.output)")
        let query = "exec \"$CAIRN\" query s.store --entity Abstract --sort identifier"
        let table = try await shell(query, in: directory.path)
        #expect(table.status == 0, "\(table.output)")
        let rows = table.output.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
        #expect(rows.first == ["id", "entity", "identifier", "foo", "bar"], "\(table.output)")
        #expect(rows.count == 5 && rows[2].dropFirst() == ["ConcreteA", "a1", "x"] && rows[3].dropFirst() == ["ConcreteB", "b1", "7"], "\(table.output)")
        for format in ["json", "jsonl"] {
            let result = try await shell(query + " --format " + format, in: directory.path)
            #expect(result.status == 0, "\(format): \(result.output)")
            let objects: [[String: Any]] =
                format == "json"
                ? try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [[String: Any]])
                : try result.output.split(separator: "\n").map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
            let values = objects.map { ($0["entity"] as? String, $0["values"] as? [String: Any]) }
            #expect(values.map(\.0) == ["ConcreteA", "ConcreteB"], "\(format): \(result.output)")
            #expect(values.first?.1?["foo"] as? String == "x" && values.last?.1?["bar"] as? Int == 7, "\(format): \(result.output)")
        }
        let counted = try await shell(query + " --count", in: directory.path)
        #expect(counted.output.hasPrefix("2"), "\(counted.output)")
    }
}
