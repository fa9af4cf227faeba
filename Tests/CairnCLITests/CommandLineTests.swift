import CairnTestSupport
import Foundation
import Testing
@testable import CairnLog

@Suite struct CommandLineTests {
    /// Runs `cairn` and returns its exit status and standard output.
    func cairn(_ arguments: String...) throws -> (status: Int32, output: String) {
        try cairn(arguments)
    }

    /// Runs `cairn` (in `directory` when given) and returns its exit status and standard output
    /// and error, interleaved.
    func cairn(_ arguments: [String], in directory: String? = nil) throws -> (status: Int32, output: String) {
        let executable = try #require(cairnExecutable(), "the cairn executable is built next to the tests")
        let process = try ChildProcess(executable, arguments, in: directory, includeStandardError: true)
        let status = process.waitUntilExit()
        return (status, String(decoding: process.outputBytes, as: UTF8.self))
    }

    @Test func demoVerifyAndStats() throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        let demo = try cairn("demo", "--dir", store, "--books", "600")
        #expect(demo.status == 0, "\(demo.output)")
        #expect(demo.output.contains("imported 600 books") && demo.output.contains("reopened: Author"), "\(demo.output)")

        let verify = try cairn("verify", store)
        #expect(verify.status == 0 && verify.output.contains("ok: "), "\(verify.output)")

        let stats = try cairn("stats", store, "--json")
        #expect(stats.status == 0)
        let json = try JSONSerialization.jsonObject(with: Data(stats.output.utf8)) as? [String: Any]
        #expect((json?["frames"] as? Int ?? 0) > 3)
        #expect((json?["entities"] as? [String: Int])?["Book"] == 600)
        #expect((json?["compressionRatio"] as? Double ?? 0) > 1.4)

        let dump = try cairn("dump", store, "--entity", "Member")
        #expect(dump.status == 0)
        let line = try #require(dump.output.split(separator: "\n").first)
        let member = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        #expect(member?["entity"] as? String == "Member")
        #expect(((member?["relationships"] as? [String: Any])?["loans"] as? [String])?.count == 3)

        let model = try cairn("model", store)
        #expect(model.status == 0 && model.output.contains("\"cairn-model\""))

        // The table form of stats lists each entity with its live objects; a dump without
        // --entity prints every object, one JSON line each.
        let table = try cairn("stats", store)
        let bookLine = table.output.split(separator: "\n").first { $0.contains("Book") }
        #expect(table.status == 0 && bookLine?.contains("600") == true, "\(table.output)")
        let everything = try cairn("dump", store)
        let entities = try everything.output.split(separator: "\n").map { line in
            (try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["entity"] as? String ?? ""
        }
        #expect(everything.status == 0 && entities.filter { $0 == "Book" }.count == 600 && Set(entities).isSuperset(of: ["Author", "Book", "Member"]))
    }

    @Test func compactRewritesAStoreOfflineAndRefusesOneThatIsOpen() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        #expect(try cairn("demo", "--dir", store, "--books", "300").status == 0)
        let before = try cairn("dump", store)
        // Another process (this one) holds the store: compact refuses, naming it.
        let holder = try Log.open(at: store)
        let refused = try cairn("compact", store)
        #expect(refused.status == 1 && refused.output.contains("process \(getpid())"), "\(refused.output)")
        try await holder.close()

        let compacted = try cairn("compact", store, "--level", "high")
        #expect(compacted.status == 0, "\(compacted.output)")
        #expect(compacted.output.contains("compacted \(store) at LSN") && compacted.output.contains("->"), "\(compacted.output)")
        #expect(try cairn("dump", store).output == before.output)
        let verify = try cairn("verify", store)
        #expect(verify.status == 0 && verify.output.contains("base"), "\(verify.output)")
        #expect(try cairn("compact", store, "--level", "slow").status == 2)
    }

    /// `cairn compact` killed (SIGKILL) at random moments, before, during and after it writes
    /// and installs its base: the store reads exactly as before each time and verifies clean;
    /// the compaction that runs to its end afterwards removes what the killed ones left.
    @Test func compactKilledAtRandomMomentsLosesNothing() throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        let demo = try cairn("demo", "--dir", store, "--books", "20000")
        #expect(demo.status == 0, "\(demo.output)")
        let before = try cairn("dump", store).output
        let executable = try #require(cairnExecutable(), "the cairn executable is built next to the tests")
        // How long a whole run takes here and now (this machine's speed varies, and other
        // tests run beside this one): the kills fall anywhere in it.
        let started = ContinuousClock.now
        let whole = try cairn("compact", store)
        #expect(whole.status == 0, "\(whole.output)")
        let milliseconds = max(20, Int((ContinuousClock.now - started) / .milliseconds(1)))
        var generator = TestSeed.generator()
        var killed = 0
        for cycle in 0..<10 {
            let process = try ChildProcess(
                executable, ["compact", store, "--level", cycle % 2 == 0 ? "fast" : "high"], includeStandardError: true)
            // A blocking sleep: a task's sleep ends only when a thread of the shared pool is
            // free, which the other tests' waits can delay past the whole run.
            usleep(UInt32(1000 * Int.random(in: 0..<milliseconds, using: &generator)))
            if process.isRunning {
                killed += 1
                process.kill()
            } else {
                #expect(process.waitUntilExit() == 0, "cycle \(cycle): \(String(decoding: process.outputBytes, as: UTF8.self))")
            }
            _ = process.waitUntilExit()
            #expect(try cairn("dump", store).output == before, "cycle \(cycle) (CAIRN_TEST_SEED=\(TestSeed.base))")
            let verify = try cairn("verify", store)
            #expect(verify.status == 0, "cycle \(cycle): \(verify.output)")
        }
        #expect(killed > 0, "some compactions were killed while they ran (a whole run took \(milliseconds) ms)")
        let finished = try cairn("compact", store)
        #expect(finished.status == 0, "\(finished.output)")
        #expect(try cairn("dump", store).output == before)
        let names = try FileManager.default.contentsOfDirectory(atPath: store)
        #expect(!names.contains { $0.hasSuffix(".tmp") }, "left-overs of the killed compactions: \(names)")
    }

    @Test func dumpAndQueryReadThePastWithinTheKeptHistory() throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        #expect(try cairn("demo", "--dir", store, "--books", "100").status == 0)
        var readOnly = LogOptions()
        readOnly.readOnly = true
        let lsn = try Log.open(at: store, options: readOnly).lastLSN
        let now = try cairn("dump", store)
        #expect(try cairn("dump", store, "--as-of", "\(lsn.rawValue)").output == now.output)
        // As of LSN 2 (the first save after the model record) the store held less.
        let early = try cairn("query", store, "--entity", "Book", "--count", "--as-of", "2")
        #expect(early.status == 0, "\(early.output)")
        let compacted = try cairn("compact", store, "--retain-history", "2")
        #expect(compacted.status == 0, "\(compacted.output)")
        #expect(try cairn("query", store, "--entity", "Book", "--count", "--as-of", "2").output == early.output)
        #expect(try cairn("compact", store).status == 0)
        let refused = try cairn("dump", store, "--as-of", "2")
        #expect(refused.status == 1 && refused.output.contains("oldest state the store keeps, LSN \(lsn.rawValue)"), "\(refused.output)")
    }

    @Test func backupCopiesAStoreInUseAndBringsTheCopyUpToDate() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        let backup = directory.store("backup")
        #expect(try cairn("demo", "--dir", store, "--books", "200").status == 0)
        // The store is open for writing by this process meanwhile.
        let writer = try Log.open(at: store)
        let first = try cairn("backup", store, backup)
        #expect(first.status == 0 && first.output.contains("backed up \(store) to \(backup) as of LSN"), "\(first.output)")
        try await writer.close()
        let verify = try cairn("verify", backup)
        #expect(verify.status == 0, "\(verify.output)")
        #expect(try cairn("dump", backup).output == cairn("dump", store).output)
        // Compacted, then backed up again: the backup follows.
        #expect(try cairn("compact", store).status == 0)
        let second = try cairn("backup", store, backup)
        #expect(second.status == 0 && second.output.contains("removed"), "\(second.output)")
        #expect(try cairn("verify", backup).status == 0)
    }

    @Test func queryFiltersSortsPagesCountsAndExplains() throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        #expect(try cairn("demo", "--dir", store, "--books", "200").status == 0)
        let all = try cairn("query", store, "--entity", "Book", "--count")
        #expect(all.status == 0 && all.output.trimmingCharacters(in: .whitespacesAndNewlines) == "200", "\(all.output)")
        let recent = try cairn(
            "query", store, "--entity", "Book", "--where", "year >= 2000 AND title CONTAINS[c] 'the'",
            "--sort=-year,title", "--limit", "3", "--format", "jsonl")
        let lines = recent.output.split(separator: "\n")
        #expect(recent.status == 0 && lines.count == 3, "\(recent.output)")
        let years = try lines.map { line -> Int in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return ((object?["values"] as? [String: Any])?["year"] as? Int) ?? 0
        }
        #expect(years == years.sorted(by: >) && years.allSatisfy { $0 >= 2000 })
        func objects(_ output: String) throws -> [[String: Any]] {
            try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]] ?? []
        }
        let json = try cairn("query", store, "--entity", "Author", "--offset", "1", "--limit", "2", "--format", "json")
        let three = try cairn("query", store, "--entity", "Author", "--limit", "3", "--format", "json")
        #expect(try objects(json.output).count == 2, "\(json.output)")
        #expect(
            try objects(json.output).map { $0["id"] as? String } == objects(three.output).dropFirst().map { $0["id"] as? String },
            "the offset skips the first object")
        // A trailing ~ sorts ignoring case; --count counts what --where keeps.
        let names = try cairn("query", store, "--entity", "Author", "--sort=name~", "--format", "json")
        let sorted = try objects(names.output).compactMap { ($0["values"] as? [String: Any])?["name"] as? String }
        #expect(sorted.count > 3 && sorted == sorted.sorted { $0.lowercased() < $1.lowercased() }, "\(names.output)")
        let counted = try cairn("query", store, "--entity", "Book", "--where", "year >= 2000", "--count")
        let listed = try cairn("query", store, "--entity", "Book", "--where", "year >= 2000", "--format", "jsonl")
        #expect(Int(counted.output.trimmingCharacters(in: .whitespacesAndNewlines)) == listed.output.split(separator: "\n").count)
        #expect((1..<200).contains(listed.output.split(separator: "\n").count), "\(listed.output.prefix(200))")
        let table = try cairn("query", store, "--entity", "Author", "--limit", "2")
        #expect(table.output.contains("name") && table.output.contains("(2 objects)"), "\(table.output)")
        let plan = try cairn("query", store, "--entity", "Book", "--where", "isbn == '978-0-0-1'", "--explain")
        #expect(plan.output.contains("uniqueness index") && !plan.output.contains("unsaved"), "\(plan.output)")
        let broken = try cairn("query", store, "--entity", "Book", "--where", "year >")
        #expect(broken.status != 0 && broken.output.contains("column 7"), "\(broken.output)")
        let unknown = try cairn("query", store, "--entity", "Book", "--where", "colour == 'red'")
        #expect(unknown.status != 0 && unknown.output.contains("colour"), "\(unknown.output)")
    }

    @Test func optionValuesThatBeginWithADashAreTakenAsTyped() throws {
        let directory = TemporaryDirectory()
        // A relative path that begins with `-`, for demo --dir and create --model.
        let demo = try cairn(["demo", "--dir", "-library.store", "--books", "100"], in: directory.path)
        #expect(demo.status == 0, "\(demo.output)")
        let store = directory.path + "/-library.store"
        func years(_ output: String) throws -> [Int] {
            try output.split(separator: "\n").map { line in
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                return ((object?["values"] as? [String: Any])?["year"] as? Int) ?? 0
            }
        }
        // A descending first sort key, written as a user types it.
        let spaced = try cairn("query", store, "--entity", "Book", "--sort", "-year,title", "--format", "jsonl")
        #expect(spaced.status == 0, "\(spaced.output)")
        let descending = try years(spaced.output)
        #expect(descending.count == 100 && descending == descending.sorted(by: >), "\(spaced.output.prefix(300))")
        let joined = try cairn("query", store, "--entity", "Book", "--sort=-year,title", "--format", "jsonl")
        #expect(joined.output == spaced.output)
        // A predicate that begins with a negative number.
        let negative = try cairn("query", store, "--entity", "Book", "--where", "-5 < year", "--count")
        #expect(negative.status == 0 && negative.output.trimmingCharacters(in: .whitespacesAndNewlines) == "100", "\(negative.output)")
        let explained = try cairn("query", store, "--entity", "Book", "--where", "-5 < year", "--sort", "-title", "--explain")
        #expect(explained.status == 0 && explained.output.contains("sort by -title"), "\(explained.output)")
        // A negative offset or limit reaches the command's own check instead of passing for an option.
        for option in ["--offset", "--limit"] {
            let refused = try cairn("query", store, "--entity", "Book", option, "-1")
            #expect(refused.status != 0 && refused.output.contains("\(option) takes 0 or more"), "\(refused.output)")
        }
        let books = try cairn("demo", "--dir", store, "--books", "-3")
        #expect(books.status != 0 && books.output.contains("--books takes"), "\(books.output)")
        // Model files and versions named with a leading `-`.
        try write(
            Array(#"{"format":"cairn-model","version":1,"entities":[{"name":"Note","attributes":[{"name":"text","type":"string"}]}]}"#.utf8),
            to: directory.path + "/-model.json")
        let created = try cairn(["create", "notes.store", "--model", "-model.json"], in: directory.path)
        #expect(created.status == 0 && created.output.contains("Note"), "\(created.output)")
        let printed = try cairn(["model", "--model", "-model.json"], in: directory.path)
        #expect(printed.status == 0 && printed.output.contains("\"Note\""), "\(printed.output)")
        let version = try cairn(["model", "--model", "-model.json", "--model-version", "-v2"], in: directory.path)
        #expect(!version.output.contains("Missing value"), "\(version.output)")
    }

    @Test func versionAndTheExitStatusesOfEveryCommand() throws {
        let version = try cairn("--version")
        #expect(version.status == 0 && version.output.wholeMatch(of: /cairn \d+\.\d+\.\d+\n/) != nil, "\(version.output)")
        let help = try cairn("--help")
        #expect(help.status == 0 && help.output.contains("Exit status") && help.output.contains("2  wrong usage"), "\(help.output)")

        let directory = TemporaryDirectory()
        let store = directory.store()
        let modelFile = directory.path + "/model.json"
        try write(
            Array(#"{"format":"cairn-model","version":1,"entities":[{"name":"Note","attributes":[{"name":"text","type":"string"}]}]}"#.utf8), to: modelFile)
        // 0: every command doing what it is asked.
        let successes = [
            ["demo", "--dir", store, "--books", "20"], ["create", directory.store("notes"), "--model", modelFile], ["model", store],
            ["dump", store, "--entity", "Author"], ["query", store, "--entity", "Book", "--count"], ["verify", store], ["stats", store]
        ]
        for arguments in successes {
            let result = try cairn(arguments)
            #expect(result.status == 0, "\(arguments): \(result.output.suffix(300))")
        }
        // 2: wrong usage, for every command: an unknown option, a missing or malformed argument,
        // a name or predicate the model does not have.
        var usage = ["demo", "create", "model", "dump", "query", "verify", "stats"].map { [$0, "--no-such-option"] }
        usage += [
            ["--no-such-option"], ["no-such-command"], ["demo", "--books", "0"], ["demo", "--books", "many"], ["create", store],
            ["model"], ["model", store, "--model", modelFile], ["model", store, "--format", "yaml"], ["dump"], ["dump", store, "--entity", "Nope"],
            ["query", store], ["query", store, "--entity", "Nope"], ["query", store, "--entity", "Book", "--where", "year >"],
            ["query", store, "--entity", "Book", "--where", "colour == 'red'"], ["query", store, "--entity", "Book", "--sort", "-colour"],
            ["query", store, "--entity", "Book", "--limit", "-1"], ["verify"], ["stats"]
        ]
        for arguments in usage {
            let result = try cairn(arguments)
            #expect(result.status == 2, "\(arguments): \(result.output.suffix(300))")
        }
        // 1: a missing store, a model that does not load, a damaged store.
        let missing = directory.store("missing")
        var failures = [
            ["model", missing], ["dump", missing], ["query", missing, "--entity", "Book"], ["verify", missing], ["stats", missing],
            ["create", directory.store("other"), "--model", directory.path + "/no-such-model.json"]
        ]
        let damaged = directory.store("damaged")
        try copyDirectory(store, to: damaged)
        let segment = try #require(try segmentFiles(damaged).last)
        var bytes = try contents(segment)
        bytes[SegmentHeader.size + FrameHeader.size + 3] ^= 0x10
        try write(bytes, to: segment)
        failures += [
            ["demo", "--dir", damaged, "--books", "5"], ["create", damaged, "--model", modelFile], ["model", damaged], ["dump", damaged],
            ["query", damaged, "--entity", "Book"], ["verify", damaged], ["stats", damaged]
        ]
        for arguments in failures {
            let result = try cairn(arguments)
            #expect(result.status == 1, "\(arguments): \(result.output.suffix(300))")
        }
    }

    @Test func dumpAndQueryPrintDatesInOneForm() throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        #expect(try cairn("demo", "--dir", store, "--books", "20").status == 0)
        func dues(_ lines: [Substring]) throws -> [String] {
            try lines.map { line in
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                return ((object?["values"] as? [String: Any])?["due"] as? String) ?? ""
            }
        }
        let dump = try cairn("dump", store, "--entity", "Loan")
        let dumped = try dues(dump.output.split(separator: "\n"))
        #expect(dumped.count == 3, "\(dump.output)")
        for due in dumped {
            #expect(due.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil, "\(due)")
        }
        let jsonl = try cairn("query", store, "--entity", "Loan", "--format", "jsonl")
        #expect(try dues(jsonl.output.split(separator: "\n")) == dumped)
        let table = try cairn("query", store, "--entity", "Loan")
        #expect(dumped.allSatisfy { table.output.contains($0) }, "\(table.output)")
    }

    @Test func modelsInEveryFormCreateAndPrint() throws {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures/Models").path
        let directory = TemporaryDirectory()
        let bundle = fixtures + "/Library.xcdatamodeld"
        let created = try cairn("create", directory.store(), "--model", bundle)
        #expect(created.status == 0 && created.output.contains("Author, Book, Publisher"), "\(created.output)")
        let json = try cairn("model", directory.store(), "--format", "json")
        #expect(json.status == 0 && json.output.contains("\"cairn-model\""), "\(json.output)")
        let xml = try cairn("model", directory.store(), "--format", "xml")
        #expect(xml.status == 0 && xml.output.contains("<model ") && xml.output.contains("elementID=\"title\""), "\(xml.output)")
        // What `model` prints, `create` takes back: the JSON and the XML give the same model.
        try Data(json.output.utf8).write(to: URL(fileURLWithPath: directory.path + "/model.json"))
        try Data(xml.output.utf8).write(to: URL(fileURLWithPath: directory.path + "/contents"))
        let fromJSON = try cairn("model", "--model", directory.path + "/model.json", "--format", "xml")
        let fromXML = try cairn("model", "--model", directory.path + "/contents", "--format", "xml")
        #expect(fromJSON.output == xml.output && fromXML.output == xml.output)
        let v1 = try cairn("model", "--model", bundle, "--model-version", "Library", "--format", "json")
        #expect(v1.status == 0 && v1.output.contains("\"born\""))
        let broken = try cairn("model", "--model", fixtures + "/Broken/unknown-attribute-type.xml")
        #expect(broken.status != 0 && broken.output.contains("unknown-attribute-type.xml:4"), "\(broken.output)")
        // A model Core Data loads loads, with a warning line naming the file, line and attribute.
        let loads = try cairn("model", "--model", fixtures + "/CoreDataLoads/number-default-yes-no.xml")
        #expect(loads.status == 0 && loads.output.contains("warning: ") && loads.output.contains("number-default-yes-no.xml:4"), "\(loads.output)")
        #expect(loads.output.contains("(Order.isPaid)"), "\(loads.output)")
        // A bundle with a version that cannot be read loads its current one, with a warning.
        let notes = try cairn("model", "--model", fixtures + "/Notes.xcdatamodeld")
        #expect(notes.status == 0 && notes.output.contains("warning: model version Notes is not loaded"), "\(notes.output)")
        #expect(notes.output.contains("\"Note\""))
    }

    @Test func verifyReportsATornTailAndRepairSavesAndCutsIt() throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        #expect(try cairn("demo", "--dir", store, "--books", "50").status == 0)
        let segment = try #require(try segmentFiles(store).last)
        let original = try contents(segment)
        let garbage: [UInt8] = Array(repeating: 0xAB, count: 100)
        try write(original + garbage, to: segment)

        let damaged = try cairn("verify", store)
        #expect(damaged.status == 1)
        #expect(damaged.output.contains("TORN TAIL at offset \(original.count)"), "\(damaged.output)")

        let repaired = try cairn("verify", "--repair", store)
        #expect(repaired.status == 0, "\(repaired.output)")
        let side = segment + ".torn-\(original.count)"
        #expect(try contents(side) == garbage)
        #expect(try contents(segment) == original)
        #expect(try cairn("verify", store).status == 0)
        #expect(try readAll(store).count > 3)
    }

    @Test func createModelAndDumpWorkFromAModelFile() throws {
        let directory = TemporaryDirectory()
        let modelFile = directory.path + "/model.json"
        try write(
            Array(#"{"format":"cairn-model","version":1,"entities":[{"name":"Note","attributes":[{"name":"text","type":"string"}]}]}"#.utf8), to: modelFile)
        let created = try cairn("create", directory.store(), "--model", modelFile)
        #expect(created.status == 0, "\(created.output)")
        let model = try cairn("model", directory.store())
        #expect(model.output.contains("\"Note\""))
        let dump = try cairn("dump", directory.store())
        #expect(dump.status == 0 && dump.output.isEmpty)
        try write(Array("{".utf8), to: modelFile)
        let bad = try cairn("create", directory.store("other"), "--model", modelFile)
        #expect(bad.status != 0 && bad.output.contains("does not decode"), "\(bad.output)")
    }

    @Test func verifyNamesFileAndOffsetOfCorruption() throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        #expect(try cairn("demo", "--dir", store, "--books", "50").status == 0)
        let segment = try #require(try segmentFiles(store).last)
        var bytes = try contents(segment)
        bytes[SegmentHeader.size + FrameHeader.size + 3] ^= 0x10
        try write(bytes, to: segment)
        let result = try cairn("verify", store)
        #expect(result.status == 1)
        #expect(result.output.contains(segment) && result.output.contains("offset \(SegmentHeader.size)"), "\(result.output)")
        let repair = try cairn("verify", "--repair", store)
        #expect(repair.status != 0, "corruption is not a torn tail: repair refuses to cut")
        #expect(try contents(segment) == bytes)
    }

    @Test func readOnlyCommandsWarnAboutAnIgnoredTailAndStatsFailsOnDamage() throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        #expect(try cairn("demo", "--dir", store, "--books", "50").status == 0)
        let segment = try #require(try segmentFiles(store).last)
        let original = try contents(segment)
        #expect(try cairn("stats", store).status == 0)
        // A bit flipped in the last frame (the demo's last save) turns it into a torn tail.
        var bytes = original
        bytes[bytes.count - 5] ^= 0x20
        try write(bytes, to: segment)
        for arguments in [["dump", store], ["query", store, "--entity", "Book", "--count"], ["stats", store]] {
            let result = try cairn(arguments)
            let warnings = result.output.split(separator: "\n").filter { $0.hasPrefix("cairn: warning:") }
            #expect(warnings.count == 1, "\(arguments[0]): \(result.output.suffix(400))")
            #expect(warnings.first?.contains(segment) == true || warnings.first?.contains(URL(fileURLWithPath: segment).lastPathComponent) == true)
            #expect(result.status == (arguments[0] == "stats" ? 1 : 0), "\(arguments[0]) exits \(result.status)")
        }
        #expect(try cairn("verify", store).status == 1)
    }

    @Test func verifyReadsEveryRecordNotOnlyEveryFrame() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        #expect(try cairn("demo", "--dir", store, "--books", "20").status == 0)
        #expect(try cairn("verify", store).output.contains("every record readable"))
        // A whole, checksummed frame whose record the store refuses (an unknown record kind).
        let log = try Log.open(at: store)
        let lsn = try await log.append([9, 1, 0, 0, 0])
        try await log.close()
        let result = try cairn("verify", store)
        #expect(result.status == 1, "\(result.output)")
        #expect(result.output.contains("DAMAGED: records") && result.output.contains("LSN \(lsn)"), "\(result.output)")
    }
}
