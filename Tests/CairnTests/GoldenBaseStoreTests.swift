import CairnLog
import CairnTestSupport
import Foundation
import Testing

@testable import Cairn

/// A compacted store: `store-v1` (every attribute type and relationship kind, a migration, a
/// trained dictionary) compacted with LZ4-HC keeping the last three saves, kept in
/// `Fixtures/Stores/store-v1-base1`: manifest version 2, base format version 1, then the
/// segments after the base. Every later build must open it and read exactly the objects
/// `store-v1.expected.txt` lists (the same state as the uncompacted store), know both models,
/// and open it as of the base's LSN (docs/FORMAT.md, "Compatibility"). Regenerate it only when
/// a format version changes, next to the old one:
/// `CAIRN_WRITE_FIXTURES=1 swift test --filter writeBaseVersion1Fixture`.
@Suite struct GoldenBaseStoreTests {
    static let store = GoldenGraphStoreTests.fixtures.appendingPathComponent("store-v1-base1").path
    static let keptSaves: UInt64 = 3

    @Test(.enabled(if: ProcessInfo.processInfo.environment["CAIRN_WRITE_FIXTURES"] == "1"))
    func writeBaseVersion1Fixture() async throws {
        try? FileManager.default.removeItem(atPath: Self.store)
        try FileManager.default.copyItem(atPath: GoldenGraphStoreTests.version1, toPath: Self.store)
        var options = CompactionTests.manual(segmentSize: 4096)
        options.durability = .none
        let store = try Store(at: Self.store, model: try GoldenGraphStoreTests.model(version: 2), options: options)
        let report = try await store.compact(level: .high, retainHistory: .transactions(Self.keptSaves))
        #expect(report.lsn.rawValue + Self.keptSaves == store.lastSaveLSN.rawValue)
        try await store.close()
        try FileManager.default.removeItem(atPath: Self.store + "/LOCK")
    }

    /// A copy of the fixture (tests never change the one in the repository).
    static func copy(into directory: TemporaryDirectory) throws -> String {
        try #require(FileManager.default.fileExists(atPath: Self.store + "/MANIFEST"), "fixture missing: \(Self.store)")
        let copy = directory.store()
        try FileManager.default.copyItem(atPath: Self.store, toPath: copy)
        return copy
    }

    @Test func theCompactedStoreHoldsTheSameObjectsAndTakesChanges() async throws {
        let directory = TemporaryDirectory()
        let copy = try Self.copy(into: directory)
        let inspection = try LogInspection.inspect(directory: copy)
        #expect(inspection.isHealthy)
        let base = try #require(inspection.base, "the fixture names a base")
        #expect(base.damage == nil)
        #expect(inspection.segments.count >= 1, "the segments after the base")
        let manifest = try Data(contentsOf: URL(fileURLWithPath: copy + "/MANIFEST"))
        #expect(manifest.count > 8 && manifest[8] == 2, "manifest version 2")
        let models = try Store.storedModels(at: copy)
        let first = try GoldenGraphStoreTests.model(version: 1)
        #expect(models.count == 2 && models.first == first, "both models, the first kept in the base")

        let model = try GoldenGraphStoreTests.model(version: 2)
        let store = try Store(at: copy, model: model)
        let expected = try String(contentsOfFile: GoldenGraphStoreTests.version1Dump, encoding: .utf8)
        #expect(try GoldenGraphStoreTests.dump(store) == expected, "the compacted store-v1 reads differently from store-v1.expected.txt")
        #expect(store.lastSaveLSN.rawValue == base.lastLSN.rawValue + Self.keptSaves)
        let context = store.newBackgroundContext(name: "change")
        let person = try #require(try context.fetchFirst(FetchRequest("Person", predicate: .equal("name", "Person 1"))))
        try person.setValue(.string("after@example.org"), forKey: "email")
        try await context.save()
        let changed = try GoldenGraphStoreTests.dump(store)
        try await store.close()
        let reopened = try Store(at: copy, model: model)
        #expect(try GoldenGraphStoreTests.dump(reopened) == changed)
        try await reopened.close()
    }

    @Test func theKeptHistoryOpensAndWhatCameBeforeIsRefused() async throws {
        let directory = TemporaryDirectory()
        let copy = try Self.copy(into: directory)
        let base = try #require(try LogInspection.inspect(directory: copy).base)
        let model = try GoldenGraphStoreTests.model(version: 2)
        var options = StoreOptions()
        options.readOnly = true
        options.asOf = base.lastLSN
        let past = try Store(at: copy, model: model, options: options)
        #expect(past.lastSaveLSN == base.lastLSN)
        var latest = StoreOptions()
        latest.readOnly = true
        let now = try Store(at: copy, model: model, options: latest)
        #expect(try GoldenGraphStoreTests.dump(past) != GoldenGraphStoreTests.dump(now), "the three kept saves changed objects")
        try await past.close()
        try await now.close()
        options.asOf = LSN(base.lastLSN.rawValue - 1)
        let error = try #require(throws: StoreError.self) { try Store(at: copy, model: model, options: options) }
        #expect(error.code == .historyUnavailable && error.lsn == base.lastLSN)
    }
}
