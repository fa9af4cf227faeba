import CairnTestSupport
import Foundation
import Testing

/// `cairn import` killed with SIGKILL at random moments: after reopening, each import is whole
/// or absent (a chunked one: whole chunks), earlier imports are intact, and `cairn verify` is
/// clean. `CAIRN_CRASH_CYCLES` sets the number of cycles (default 8).
@Suite(.serialized) struct ImportCrashTests {
    static let model = """
        {"format": "cairn-model", "version": 1, "entities": [{"name": "Person", "attributes": [
          {"name": "ticket", "type": "integer64"}, {"name": "batch", "type": "integer64"}, {"name": "name", "type": "string"}],
          "uniquenessConstraints": [["ticket"]]}]}
        """

    func run(_ arguments: [String], in directory: String) throws -> (status: Int32, output: String) {
        let executable = try #require(cairnExecutable(), "the cairn executable is built next to the tests")
        let process = try ChildProcess(executable, arguments, in: directory, includeStandardError: true)
        let status = process.waitUntilExit()
        return (status, String(decoding: process.outputBytes, as: UTF8.self))
    }

    @Test func killedImportsAreWholeOrAbsent() async throws {
        let cycles = ProcessInfo.processInfo.environment["CAIRN_CRASH_CYCLES"].flatMap(Int.init) ?? 8
        let executable = try #require(cairnExecutable(), "the cairn executable is built next to the tests")
        let folder = TemporaryDirectory()
        try Data(Self.model.utf8).write(to: URL(fileURLWithPath: folder.path + "/model.json"))
        var generator = TestSeed.generator()
        let records = 40_000
        let chunk = 5_000
        var expected: [Int: Int] = [:]  // batch → records it holds after its cycle
        for cycle in 0..<cycles {
            let lines = (0..<records).map { #"{"ticket": \#(cycle * 1_000_000 + $0), "batch": \#(cycle), "name": "person \#($0) of \#(cycle)"}"# }
            let file = folder.path + "/batch-\(cycle).jsonl"
            try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: file))
            let chunked = cycle % 2 == 1
            var arguments = ["import", "s.store", "--entity", "Person", file, "--model", "model.json"]
            if chunked { arguments += ["--chunk", String(chunk)] }
            let process = try ChildProcess(executable, arguments, in: folder.path, includeStandardError: true)
            try await Task.sleep(for: .milliseconds(Int.random(in: 20...900, using: &generator)))
            process.kill()
            _ = process.waitUntilExit()

            guard FileManager.default.fileExists(atPath: folder.path + "/s.store") else { continue }
            let verify = try run(["verify", "s.store"], in: folder.path)
            #expect(verify.status == 0, "cycle \(cycle): \(verify.output)")
            let counts = try run(["query", "s.store", "--entity", "Person", "--where", "batch == \(cycle)", "--count"], in: folder.path)
            guard counts.status == 0 else {
                // Killed before the store held its model: nothing of this batch can be there.
                #expect(counts.output.contains("no model"), "cycle \(cycle): \(counts.output)")
                continue
            }
            let count = Int(counts.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
            if chunked {
                #expect(count % chunk == 0 && count <= records, "cycle \(cycle): \(count) records, not whole chunks")
            } else {
                #expect(count == 0 || count == records, "cycle \(cycle): \(count) of \(records) records: a partial import")
            }
            expected[cycle] = count
            print("import crash cycle \(cycle)\(chunked ? " (chunked)" : ""): \(count) of \(records) records kept")
            for (batch, held) in expected where batch < cycle {
                let again = try run(["query", "s.store", "--entity", "Person", "--where", "batch == \(batch)", "--count"], in: folder.path)
                #expect(Int(again.output.trimmingCharacters(in: .whitespacesAndNewlines)) == held, "cycle \(cycle): batch \(batch) changed")
            }
        }
        #expect(expected.values.contains { $0 > 0 }, "some import got far enough to save before being killed")
    }
}
