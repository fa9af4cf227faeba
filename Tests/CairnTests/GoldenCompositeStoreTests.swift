import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// A store whose model needs model format version 2 (composite attributes, nested, and a
/// transient attribute of undefined type), kept in `Fixtures/Stores/store-v1-model2` with its
/// expected contents in `store-v1-model2.expected.txt`: every later build must open it and read
/// exactly those objects (docs/FORMAT.md, "Compatibility"). Regenerate it only when a format
/// version changes, next to the old one:
/// `CAIRN_WRITE_FIXTURES=1 swift test --filter writeModelVersion2Fixture`.
@Suite struct GoldenCompositeStoreTests {
    static let store = GoldenGraphStoreTests.fixtures.appendingPathComponent("store-v1-model2").path
    static let expected = GoldenGraphStoreTests.fixtures.appendingPathComponent("store-v1-model2.expected.txt").path

    static func model() throws -> Model {
        try Model(contentsOf: FixturePaths.models + "/Composite.xcdatamodel")
    }

    @Test(.enabled(if: ProcessInfo.processInfo.environment["CAIRN_WRITE_FIXTURES"] == "1"))
    func writeModelVersion2Fixture() async throws {
        try? FileManager.default.removeItem(atPath: Self.store)
        var options = StoreOptions()
        options.segmentSize = 4096
        options.durability = .none
        let store = try Store(at: Self.store, model: try Self.model(), options: options)
        let context = store.newBackgroundContext(name: "golden model 2")
        for index in 0..<40 {
            let place = try context.insert("Place")
            try place.setValue("Place \(index)", forKey: "label")
            try place.setValue(index * 3, forKey: "visits")
            try place.setValue("never stored \(index)", forKey: "scratch")
            var address: [String: Value] = ["city": .string("City \(index % 7)")]
            if index % 3 != 0 { address["postcode"] = .string(String(10_000 + index)) }
            if index % 4 != 1 {
                address["position.latitude"] = .double(Double(index) * 1.25 - 20)
                address["position.longitude"] = .double(Double(index) * -2.5)
            }
            try place.setCompositeValue(address, forKey: "address")
            try await context.save()
        }
        try await store.close()
        try FileManager.default.removeItem(atPath: Self.store + "/LOCK")
        var readOnly = StoreOptions()
        readOnly.readOnly = true
        let reader = try Store(at: Self.store, model: try Self.model(), options: readOnly)
        try Data(try GoldenGraphStoreTests.dump(reader).utf8).write(to: URL(fileURLWithPath: Self.expected))
        try await reader.close()
    }

    @Test func theStoreOpensWithItsObjectsAndTakesChanges() async throws {
        try #require(FileManager.default.fileExists(atPath: Self.store + "/MANIFEST"), "fixture missing: \(Self.store)")
        let directory = TemporaryDirectory()
        let copy = directory.store()
        try FileManager.default.copyItem(atPath: Self.store, toPath: copy)
        let model = try Self.model()
        #expect(try Store.storedModel(at: copy) == model)
        let store = try Store(at: copy, model: model)
        #expect(try GoldenGraphStoreTests.dump(store) == String(contentsOfFile: Self.expected, encoding: .utf8))
        let context = store.newBackgroundContext(name: "change")
        let place = try #require(try context.fetchFirst(FetchRequest("Place", predicate: .equal("label", "Place 5"))))
        try place.setValue(1.5, forKey: "address.position.latitude")
        try await context.save()
        let changed = try GoldenGraphStoreTests.dump(store)
        try await store.close()
        let reopened = try Store(at: copy, model: model)
        #expect(try GoldenGraphStoreTests.dump(reopened) == changed)
        let north = try reopened.viewContext.count(FetchRequest("Place", predicate: try FetchPredicate(format: "address.position.latitude > 0")))
        #expect(north > 0)
        try await reopened.close()
    }
}
