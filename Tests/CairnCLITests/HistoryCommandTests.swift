import Cairn
import CairnTestSupport
import Foundation
import Testing

/// `cairn history`: one line per transaction, text or JSON, after a token or an LSN, for some
/// entities; a clear error past the horizon.
@Suite struct HistoryCommandTests {
    func cairn(_ arguments: String...) throws -> (status: Int32, output: String) {
        let executable = try #require(cairnExecutable(), "the cairn executable is built next to the tests")
        let process = try ChildProcess(executable, arguments, includeStandardError: true)
        let status = process.waitUntilExit()
        return (status, String(decoding: process.outputBytes, as: UTF8.self))
    }

    func jsonLines(_ output: String) throws -> [[String: Any]] {
        try output.split(separator: "\n").map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    }

    @Test func historyPrintsEachSaveAfterATokenOrAnLSN() throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        #expect(try cairn("demo", "--dir", store, "--books", "120").status == 0)
        let all = try cairn("history", store, "--json")
        #expect(all.status == 0, "\(all.output)")
        let lines = try jsonLines(all.output)
        let lsns = lines.compactMap { $0["lsn"] as? Int }
        #expect(lsns == Array(1...lsns.count), "one line per save, in order, from the model record")
        #expect(lines.first?["model"] != nil)
        let changes = lines.flatMap { $0["changes"] as? [[String: Any]] ?? [] }
        let insertedBooks = changes.filter { $0["kind"] as? String == "inserted" && $0["entity"] as? String == "Book" }
        #expect(insertedBooks.count == 120)
        #expect(insertedBooks.allSatisfy { ($0["values"] as? [String: Any])?["title"] is String && ($0["id"] as? String)?.hasPrefix("cairn://") == true })

        // After a token (as printed) or an LSN: the lines after it; for one entity, its changes.
        let token = try #require(lines[2]["token"] as? String)
        let sinceToken = try jsonLines(try cairn("history", store, "--since", token, "--json").output)
        #expect(sinceToken.compactMap { $0["lsn"] as? Int } == Array(lsns.dropFirst(3)))
        let text = try cairn("history", store, "--since", "3", "--entity", "Member")
        #expect(text.status == 0 && !text.output.isEmpty)
        for line in text.output.split(separator: "\n") {
            #expect(line.hasPrefix("LSN ") && line.contains("Member/p") && !line.contains("Book/p"), "\(line)")
        }

        // Compacted: history before the horizon is refused, naming it; wrong usage is status 2.
        #expect(try cairn("compact", store).status == 0)
        let gone = try cairn("history", store, "--since", "3")
        #expect(gone.status == 1 && gone.output.contains("horizon"), "\(gone.output)")
        #expect(try cairn("history", store, "--since", "three").status == 2)
        let after = try cairn("history", store, "--since", String(lsns.count))
        #expect(after.status == 0 && after.output.isEmpty, "\(after.output)")
    }

    @Test func relationshipTargetsAreNamedInTheModelTheSaveWasWrittenIn() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        // Version 2 adds an entity whose name sorts first: every entity's index moves by one.
        func model(_ version: Int) throws -> Model {
            try Model {
                if version == 2 { Entity("Aside") { Attribute("text", .string) } }
                Entity("Note") {
                    Attribute("text", .string)
                    Relationship("tag", to: "Tag", inverse: "notes")
                }
                Entity("Tag") {
                    Attribute("name", .string)
                    Relationship("notes", to: "Note", inverse: "tag", .toMany(ordered: false))
                }
            }
        }
        let writer = try Store(at: path, model: try model(1))
        let context = writer.newBackgroundContext()
        let tag = try context.insert("Tag")
        try tag.setValue(.string("red"), forKey: "name")
        let note = try context.insert("Note")
        try note.setValue(.string("first"), forKey: "text")
        try note.setObject(tag, forKey: "tag")
        try await context.save()
        let (noteKey, tagKey) = (note.objectID.key, tag.objectID.key)
        try await writer.close()
        var options = StoreOptions()
        options.modelMismatch = .migrate
        try await Store(at: path, model: try model(2), options: options).close()

        let text = try cairn("history", path, "--since", "1")
        #expect(text.status == 0, "\(text.output)")
        let saved = try #require(text.output.split(separator: "\n").first { $0.hasPrefix("LSN 2 ") }, "\(text.output)")
        #expect(saved.contains("Note/p\(noteKey) inserted") && saved.contains("\"tag\":\"Tag/p\(tagKey)\""), "\(saved)")
        #expect(saved.contains("\"notes\":[\"Note/p\(noteKey)\"]"), "\(saved)")
        let json = try jsonLines(try cairn("history", path, "--since", "1", "--json").output)
        let changes = try #require(json.first?["changes"] as? [[String: Any]])
        let inserted = try #require(changes.first { $0["entity"] as? String == "Note" })
        let target = try #require((inserted["values"] as? [String: Any])?["tag"] as? String)
        #expect(target.hasSuffix("/Tag/p\(tagKey)") && (inserted["id"] as? String)?.hasSuffix("/Note/p\(noteKey)") == true, "\(inserted)")
    }
}

/// `cairn history --follow`: the saves kept, then each new one as the writer (here, this
/// process) makes it.
@Suite struct HistoryFollowCommandTests {
    @Test func followPrintsEachNewSaveAsTheWriterMakesIt() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        let model = try Model {
            Entity("Note") {
                Attribute("text", .string)
            }
        }
        let writer = try Store(at: path, model: model)
        let context = writer.newBackgroundContext(name: "notes")
        try context.insert("Note").setValue(.string("before"), forKey: "text")
        try await context.save()
        let executable = try #require(cairnExecutable(), "the cairn executable is built next to the tests")
        let follower = try ChildProcess(executable, ["history", path, "--follow", "--json"], includeStandardError: true)
        defer { follower.kill() }
        func lines() -> [String] { String(decoding: follower.outputBytes, as: UTF8.self).split(separator: "\n").map(String.init) }
        for _ in 0..<10_000 where lines().count < 2 { try await Task.sleep(for: .milliseconds(1)) }
        for index in 0..<5 {
            try context.insert("Note").setValue(.string("note \(index)"), forKey: "text")
            try await context.save()
        }
        for _ in 0..<10_000 where lines().count < 7 { try await Task.sleep(for: .milliseconds(1)) }
        let printed = lines()
        #expect(printed.count == 7, "\(printed)")
        #expect(printed.compactMap { Int($0.split(separator: ",").first?.split(separator: ":").last ?? "") } == Array(1...7))
        #expect(printed.last?.contains("note 4") == true && printed.last?.contains("\"context\":\"notes\"") == true, "\(printed)")
        try await writer.close()
    }

    @Test func followGoesOnPastACompactionOfUnprintedSavesAndExitsWhenFollowingStops() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        func model(_ version: Int) throws -> Model {
            try Model {
                Entity("Note") {
                    Attribute("text", .string)
                    if version == 2 { Attribute("pinned", .boolean, default: false) }
                }
                Entity("Tag") { Attribute("name", .string) }
            }
        }
        var writer = try Store(at: path, model: try model(1))
        let context = writer.newBackgroundContext()
        try context.insert("Note").setValue(.string("first"), forKey: "text")
        try await context.save()
        let executable = try #require(cairnExecutable(), "the cairn executable is built next to the tests")
        let follower = try ChildProcess(executable, ["history", path, "--follow", "--entity", "Note"], includeStandardError: true)
        defer { follower.kill() }
        func text() -> String { String(decoding: follower.outputBytes, as: UTF8.self) }
        for _ in 0..<10_000 where !text().contains("first") { try await Task.sleep(for: .milliseconds(1)) }
        // Saves of another entity, compacted away: the follower's last printed save is behind
        // the horizon; it goes on with the next note.
        for index in 0..<20 {
            try context.insert("Tag").setValue(.string("tag \(index)"), forKey: "name")
            try await context.save()
        }
        _ = try await writer.compact()
        try context.insert("Note").setValue(.string("second"), forKey: "text")
        try await context.save()
        for _ in 0..<10_000 where !text().contains("second") { try await Task.sleep(for: .milliseconds(1)) }
        #expect(text().contains("second") && follower.isRunning, "\(text())")
        // The writer migrates the store: following stops for good, and the command says so.
        try await writer.close()
        writer = try Store(at: path, model: try model(2))
        for _ in 0..<10_000 where follower.isRunning { try await Task.sleep(for: .milliseconds(1)) }
        #expect(!follower.isRunning && follower.waitUntilExit() != 0)
        #expect(text().contains("following stopped") && text().contains("migrated"), "\(text())")
        try await writer.close()
    }
}
