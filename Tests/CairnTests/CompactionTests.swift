import CairnLog
import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// Compaction at the store's level: the state after it equals the state before, the store
/// shrinks, the log goes on after the base, and the model history survives.
@Suite struct CompactionTests {
    /// Options of a store that compacts only when asked: segments of `segmentSize` (the
    /// default when nil), on `io` when given.
    static func manual(segmentSize: Int? = nil, io: (any FileIO)? = nil) -> StoreOptions {
        var options = StoreOptions()
        if let segmentSize { options.segmentSize = segmentSize }
        options.automaticCompaction = .disabled
        if let io { options.fileIO = io }
        return options
    }

    /// Items and tags; `addingText` gives items one more attribute, `added` (a model to migrate to).
    static func model(addingText: Bool = false) throws -> Model {
        try Model {
            Entity("Item") {
                Attribute("code", .string, optional: false)
                Unique("code")
                Attribute("round", .integer64, indexed: true)
                Attribute("note", .string)
                Attribute("blob", .binary)
                if addingText { Attribute("added", .string, default: "none") }
                Relationship("tags", to: "Tag", inverse: "items", .toMany(ordered: false))
            }
            Entity("Tag") {
                Attribute("name", .string)
                Relationship("items", to: "Item", inverse: "tags", .toMany(ordered: false))
            }
        }
    }

    /// 300 items and 5 tags; each item overwritten 10 times (one save per round), a third of
    /// them deleted, one item given a value larger than a base block.
    static func overwriteWorkload(_ store: Store) async throws {
        let context = store.newBackgroundContext()
        var tags: [ManagedObject] = []
        for index in 0..<5 {
            let tag = try context.insert("Tag")
            try tag.setValue(.string("tag \(index)"), forKey: "name")
            tags.append(tag)
        }
        var items: [ManagedObject] = []
        for index in 0..<300 {
            let item = try context.insert("Item")
            try item.setValue(.string("code-\(index)"), forKey: "code")
            try item.setValue(.integer(0), forKey: "round")
            items.append(item)
        }
        try await context.save()
        for round in 1...10 {
            for (index, item) in items.enumerated() {
                try item.setValue(.integer(Int64(round)), forKey: "round")
                try item.setValue(.string("round \(round) of item \(index)"), forKey: "note")
                if round == 10 { try item.setObjects([tags[index % 5]], forKey: "tags") }
            }
            try await context.save()
        }
        try items[7].setValue(.binary([UInt8](repeating: 0xA5, count: 600_000)), forKey: "blob")
        for (index, item) in items.enumerated() where index % 3 == 0 { try item.delete() }
        try await context.save()
    }

    /// One more round of the workload: every item's round and note replaced, in one save.
    static func overwriteWorkloadRound(_ store: Store, round: Int) async throws {
        let context = store.newBackgroundContext()
        for item in try context.fetch(FetchRequest("Item")) {
            try item.setValue(.integer(Int64(round)), forKey: "round")
            try item.setValue(.string("round \(round) of \(try item.value(forKey: "code", as: String.self))"), forKey: "note")
        }
        try await context.save()
    }

    /// Copies a store directory (a store opened from it is then a pure replay of the same log).
    static func copy(_ source: String, to destination: String) throws {
        try FileManager.default.copyItem(atPath: source, toPath: destination)
        try? FileManager.default.removeItem(atPath: destination + "/LOCK")
    }

    @Test(arguments: CompactionLevel.allCases)
    func compactionKeepsTheStateShrinksTheStoreAndTheLogGoesOn(level: CompactionLevel) async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        let model = try Self.model()
        let options = Self.manual(segmentSize: 64 << 10)
        let store = try Store(at: path, model: model, options: options)
        try await Self.overwriteWorkload(store)
        let before = try GoldenGraphStoreTests.dump(store)
        let lastLSN = store.lastSaveLSN
        try Self.copy(path, to: directory.store("replayed"))

        let report = try await store.compact(level: level)
        #expect(report.lsn == lastLSN)
        #expect(report.objects == 200 + 5)
        #expect(report.bytesAfter < report.bytesBefore, "\(report)")
        #expect(!report.removedFiles.isEmpty)
        #expect(try GoldenGraphStoreTests.dump(store) == before)
        // Saves go on after the base; LSNs continue.
        let context = store.newBackgroundContext()
        let added = try context.insert("Item")
        try added.setValue(.string("after"), forKey: "code")
        try await context.save()
        #expect(store.lastSaveLSN == lastLSN.next)
        let after = try GoldenGraphStoreTests.dump(store)
        try await store.close()

        let reopened = try Store(at: path, model: model, options: options)
        #expect(try GoldenGraphStoreTests.dump(reopened) == after)
        #expect(reopened.lastSaveLSN == lastLSN.next)
        let view = reopened.newBackgroundContext()
        // The uniqueness and attribute indexes answer as before.
        let item = try #require(try view.fetchFirst(FetchRequest("Item", predicate: .equal("code", "code-8"))))
        #expect(try item.value(forKey: "round", as: Int64.self) == 10)
        #expect(try item.value(forKey: "note", as: String?.self) == "round 10 of item 8")
        #expect(try view.fetchFirst(FetchRequest("Item", predicate: .equal("code", "code-9"))) == nil)
        #expect(try view.count(FetchRequest("Item", predicate: .equal("round", .integer(10)))) == 200)
        #expect(try view.fetchFirst(FetchRequest("Item", predicate: .equal("code", "code-7")))?.value(forKey: "blob", as: Data?.self)?.count == 600_000)
        let duplicate = try view.insert("Item")
        try duplicate.setValue(.string("code-8"), forKey: "code")
        await #expect(throws: StoreError.self) { try await view.save() }
        view.rollback()
        // New objects get new keys.
        let fresh = try view.insert("Item")
        try fresh.setValue(.string("fresh"), forKey: "code")
        try await view.save()
        #expect(fresh.objectID.key > added.objectID.key)
        try await reopened.close()

        // The same log replayed in full gives the same objects as the base.
        let replayed = try Store(at: directory.store("replayed"), model: model, options: options)
        #expect(try GoldenGraphStoreTests.dump(replayed) == before)
        try await replayed.close()
        let inspection = try LogInspection.inspect(directory: path)
        #expect(inspection.isHealthy && inspection.base != nil)
    }

    @Test func aCompactedStoreKeepsItsModelHistoryAndCompactsAgain() async throws {
        try #require(FileManager.default.fileExists(atPath: GoldenGraphStoreTests.version1 + "/MANIFEST"), "fixture missing")
        let directory = TemporaryDirectory()
        let path = directory.store()
        try Self.copy(GoldenGraphStoreTests.version1, to: path)
        let models = try Store.storedModels(at: path)
        #expect(models.count == 2)
        let model = try GoldenGraphStoreTests.model(version: 2)
        let store = try Store(at: path, model: model)
        let expected = try String(contentsOfFile: GoldenGraphStoreTests.version1Dump, encoding: .utf8)
        try await store.compact(level: .high)
        #expect(try GoldenGraphStoreTests.dump(store) == expected)
        try await store.close()
        #expect(try Store.storedModels(at: path) == models)
        let reopened = try Store(at: path, model: model)
        #expect(try GoldenGraphStoreTests.dump(reopened) == expected)
        // A second compaction with nothing new replaces the base.
        let again = try await reopened.compact()
        #expect(again.removedFiles.contains { $0.hasSuffix(".base") })
        try await reopened.close()
        #expect(
            try GoldenGraphStoreTests.dump(
                try Store(
                    at: path, model: model,
                    options: {
                        var o = StoreOptions(); o.readOnly = true; return o
                    }())) == expected)
    }

    @Test func savesGoOnWhileACompactionRuns() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        let model = try Self.model()
        let store = try Store(at: path, model: model)
        try await Self.overwriteWorkload(store)
        async let compacted = store.compact()
        var saved: [String] = []
        for index in 0..<50 {
            let context = store.newBackgroundContext()
            let item = try context.insert("Item")
            try item.setValue(.string("during-\(index)"), forKey: "code")
            try await context.save()
            saved.append("during-\(index)")
        }
        _ = try await compacted
        let expected = try GoldenGraphStoreTests.dump(store)
        try await store.close()
        let reopened = try Store(at: path, model: model)
        #expect(try GoldenGraphStoreTests.dump(reopened) == expected)
        #expect(try reopened.count(of: "Item") == 200 + 50)
        try await reopened.close()
    }

    @Test func anInMemoryStoreHasNothingToCompact() async throws {
        let store = Store(inMemory: try Self.model())
        await #expect(throws: StoreError.self) { try await store.compact() }
    }
}
