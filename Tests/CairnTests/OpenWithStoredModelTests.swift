import CairnLog
import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// `Store(at:options:)`: a store opened with the model it was written with, read in the pass
/// that replays the log; nothing is created where there is no store.
@Suite struct OpenWithStoredModelTests {
    static func model(extra: [Attribute] = []) throws -> Model {
        try Model([
            Entity("Note", attributes: [Attribute("title", .string, optional: false), Attribute("words", .integer64)] + extra)
        ])
    }

    static var readOnly: StoreOptions {
        var options = StoreOptions()
        options.readOnly = true
        return options
    }

    @Test func aStoreOpensWithTheModelItWasWrittenWith() async throws {
        let folder = TemporaryDirectory()
        let model = try Self.model()
        let store = try Store(at: folder.store(), model: model)
        let context = store.viewContext
        for index in 0..<3 { _ = try context.make("Note", ["title": .string("n\(index)"), "words": .integer(Int64(index))]) }
        try await context.save()
        try await store.close()

        for options in [Self.readOnly, StoreOptions()] {
            let opened = try Store(at: folder.store(), options: options)
            #expect(opened.model == model)
            #expect(try opened.count(of: "Note") == 3)
            #expect(try opened.newBackgroundContext().count(FetchRequest("Note", predicate: .comparison(key: "words", .greater, .integer(0)))) == 2)
            try await opened.close()
        }
    }

    @Test func asOfAnLSNTheModelIsTheOneOfThatSave() async throws {
        let folder = TemporaryDirectory()
        let first = try Self.model()
        let store = try Store(at: folder.store(), model: first)
        _ = try store.viewContext.make("Note", ["title": "before"])
        try await store.viewContext.save()
        let before = store.lastSaveLSN
        try await store.close()
        let second = try Self.model(extra: [Attribute("tag", .string)])
        var migrating = StoreOptions()
        migrating.modelMismatch = .migrate
        let migrated = try Store(at: folder.store(), model: second, options: migrating)
        _ = try migrated.viewContext.make("Note", ["title": "after", "tag": "t"])
        try await migrated.viewContext.save()
        try await migrated.close()

        let latest = try Store(at: folder.store(), options: Self.readOnly)
        #expect(latest.model == second)
        #expect(try latest.count(of: "Note") == 2)
        try await latest.close()
        var past = Self.readOnly
        past.asOf = before
        let old = try Store(at: folder.store(), options: past)
        #expect(old.model == first)
        #expect(try old.count(of: "Note") == 1)
        try await old.close()
    }

    @Test func noStoreIsCreatedWhereThereIsNone() throws {
        let folder = TemporaryDirectory()
        let missing = folder.store("missing")
        for options in [Self.readOnly, StoreOptions()] {
            #expect { try Store(at: missing, options: options) } throws: { ($0 as? LogError)?.code == .notFound }
            #expect(!FileManager.default.fileExists(atPath: missing))
        }
        // An existing directory without a store stays empty.
        let empty = folder.store("empty")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: false)
        #expect { try Store(at: empty, options: StoreOptions()) } throws: { ($0 as? LogError)?.code == .notFound }
        #expect(try FileManager.default.contentsOfDirectory(atPath: empty).isEmpty)
    }

    /// A directory holding a store's files without `MANIFEST` and without `LOCK` (a backup, a
    /// copy) is not taken for an empty one: its manifest's `.prev` is used, or it is refused
    /// as a store that lost its manifest.
    @Test func aStoreWithoutItsLockFileOrManifestIsNotTakenForNone() async throws {
        let folder = TemporaryDirectory()
        let path = folder.store()
        let store = try Store(at: path, model: try Self.model())
        _ = try store.viewContext.make("Note", ["title": "kept"])
        try await store.viewContext.save()
        try await store.close()
        let files = FileManager.default
        try files.removeItem(atPath: path + "/LOCK")
        try files.moveItem(atPath: path + "/MANIFEST", toPath: path + "/MANIFEST.prev")
        let reopened = try Store(at: path, options: StoreOptions())
        #expect(try reopened.count(of: "Note") == 1)
        try await reopened.close()

        for name in ["LOCK", "MANIFEST", "MANIFEST.prev", "MANIFEST.tmp"] { try? files.removeItem(atPath: path + "/" + name) }
        var logOptions = LogOptions()
        logOptions.createIfMissing = false
        #expect { try Log.open(at: path, options: logOptions) } throws: { ($0 as? LogError)?.code == .corruption }
    }

    /// A store written in large saves (records in parts), then compacted (a base), opens
    /// without a model as it does with one.
    @Test func largeSavesAndABaseOpenWithoutAModel() async throws {
        let folder = TemporaryDirectory()
        let path = folder.store()
        let model = try Self.model()
        let store = try Store(at: path, model: model)
        for round in 0..<2 {
            let context = store.newBackgroundContext()
            for index in 0..<9_000 { _ = try context.make("Note", ["title": .string("r\(round)-\(index)"), "words": .integer(Int64(index))]) }
            try await context.save()
            if round == 0 { _ = try await store.compact() }
        }
        try await store.close()
        let opened = try Store(at: path, options: Self.readOnly)
        #expect(opened.model == model)
        #expect(try opened.count(of: "Note") == 18_000)
        #expect(try opened.newBackgroundContext().count(FetchRequest("Note", predicate: .equal("title", "r1-8999"))) == 1)
        try await opened.close()
    }

    @Test func aLogWithoutAModelRecordIsRefused() async throws {
        let folder = TemporaryDirectory()
        // A store's log created empty: no model record yet.
        let log = try Log.open(at: folder.store())
        try await log.close()
        for options in [Self.readOnly, StoreOptions()] {
            #expect { try Store(at: folder.store(), options: options) } throws: { error in
                let error = try #require(error as? StoreError)
                return error.code == .notObjectGraph && error.message.contains("holds no model yet")
            }
        }
        // A log of records that are not an object graph's.
        let other = folder.store("other")
        let plain = try Log.open(at: other)
        _ = try plain.appendNow(Array("not a model".utf8))
        try await plain.close()
        #expect { try Store(at: other, options: Self.readOnly) } throws: { ($0 as? StoreError)?.code == .notObjectGraph }
    }
}
