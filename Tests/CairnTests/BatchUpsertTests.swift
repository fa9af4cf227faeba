import CairnSupport
import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// A batch upsert finds objects by key (through a uniqueness index, or a pass over the entity),
/// updates what changed, inserts the rest, in one save, and saves nothing when nothing changes.
@Suite struct BatchUpsertTests {
    static func model(constrained: Bool) throws -> Model {
        try Model {
            Entity("Book") {
                Attribute("isbn", .string, optional: false)
                Attribute("title", .string)
                Attribute("year", .integer32)
                Attribute("price", .double, default: .double(1))
                if constrained { Unique("isbn") }
            }
        }
    }

    @Test(arguments: [true, false]) func upsertsByKey(constrained: Bool) async throws {
        let store = Store(inMemory: try Self.model(constrained: constrained))
        let first = try await store.batchUpsert(
            "Book", key: ["isbn"], columns: ["isbn", "title", "year"],
            rows: [["a", "Emma", 1815], ["b", "Persuasion", nil], ["a", nil, 1816]])
        #expect(first.inserted == 2 && first.updated == 0 && first.ids[0] == first.ids[2] && first.outcomes == [.inserted, .inserted, .inserted])
        let view = store.viewContext
        let emma = try #require(view.object(with: first.ids[0]))
        #expect(emma["title"] == "Emma" && emma["year"] == .integer(1816), "later rows apply over earlier ones")
        #expect(try view.object(with: first.ids[1])?.value(forKey: "price", as: Double.self) == 1, "defaults for what is not given")
        let lsn = store.lastSaveLSN
        let same = try await store.batchUpsert("Book", key: ["isbn"], columns: ["isbn", "title"], rows: [["a", "Emma"], ["b", nil]])
        #expect(same.unchanged == 2 && store.lastSaveLSN == lsn, "nothing changed: nothing saved")
        let changed = try await store.batchUpsert(
            "Book", key: ["isbn"], columns: ["isbn", "title", "year"], rows: [["a", "Emma", .null], ["c", "Lady Susan", 1871]])
        #expect(changed.updated == 1 && changed.inserted == 1 && changed.ids[0] == first.ids[0])
        #expect(try view.object(with: first.ids[0])?.value(forKey: "year", as: Int?.self) == nil, ".null clears")
        let untouched = try await store.batchUpsert(
            "Book", key: ["isbn"], columns: ["isbn", "title"], rows: [["a", "Changed"], ["d", "New"]], updatesExisting: false)
        #expect(untouched.unchanged == 1 && untouched.inserted == 1)
        #expect(emma["title"] == "Emma")
        #expect(try view.count(FetchRequest("Book")) == 4)
    }

    @Test func mistakesAreRefusedBeforeAnythingIsSaved() async throws {
        let store = Store(inMemory: try Self.model(constrained: true))
        func code(_ body: () async throws -> BatchUpsertResult) async -> StoreError.Code? {
            do {
                _ = try await body()
                return nil
            } catch {
                return (error as? StoreError)?.code
            }
        }
        #expect(await code { try await store.batchUpsert("Book", key: ["isbn"], columns: ["isbn", "nope"], rows: []) } == .unknownName)
        #expect(await code { try await store.batchUpsert("Book", key: ["isbn"], columns: ["title"], rows: []) } == .invalidArgument)
        #expect(await code { try await store.batchUpsert("Book", key: ["isbn"], columns: ["isbn"], rows: [["a"], [nil]]) } == .missingValue)
        #expect(await code { try await store.batchUpsert("Book", key: ["isbn"], columns: ["isbn", "year"], rows: [["a", "x"]]) } == .typeMismatch)
        #expect(await code { try await store.batchUpsert("Book", key: [], columns: ["title"], rows: [["no isbn"]]) } == .missingValue)
        #expect(await code { try await store.batchUpsert("Book", key: ["isbn"], columns: ["isbn"], rows: [["a", "b"]]) } == .invalidArgument)
        #expect(try store.viewContext.count(FetchRequest("Book")) == 0)
        // Without a key, every row inserts.
        let plain = try await store.batchUpsert("Book", key: [], columns: ["isbn"], rows: [["x"], ["y"]])
        #expect(plain.inserted == 2)
    }
}

/// The writers of encoded rows write what the record codec writes for the same values.
@Suite struct StoredValueTests {
    @Test func writersAgreeWithTheCodec() {
        func bytes(_ write: (inout ByteWriter) -> Void) -> [UInt8] {
            var writer = ByteWriter()
            write(&writer)
            return writer.bytes
        }
        for number: Int64 in [0, 1, -1, 63, -64, 64, Int64.max, Int64.min] {
            #expect(bytes { StoredValue.writeInteger(number, &$0) } == ChangeSetCodec.encoded(.integer(number)))
        }
        for number in [0.0, -0.0, 1.5, .nan, .infinity] {
            #expect(bytes { StoredValue.writeDouble(number, &$0) } == ChangeSetCodec.encoded(.double(number)))
        }
        let date = Date(timeIntervalSince1970: 1_234_567.891)
        #expect(bytes { StoredValue.writeDate(date, &$0) } == ChangeSetCodec.encoded(.date(date)))
        #expect(bytes { StoredValue.writeBoolean(true, &$0) } == ChangeSetCodec.encoded(.boolean(true)))
        #expect(bytes { StoredValue.writeNull(&$0) } == ChangeSetCodec.encoded(.null))
        for text in ["", "é", String(repeating: "x", count: 300)] {
            let utf8 = Array(text.utf8)
            #expect(bytes { writer in utf8.withUnsafeBytes { StoredValue.writeString(utf8: $0, &writer) } } == ChangeSetCodec.encoded(.string(text)))
            #expect(ChangeSetCodec.encoded(.string(text)).withUnsafeBytes { StoredValue.decode($0) } == .string(text))
        }
        #expect([UInt8]([0]).withUnsafeBytes { StoredValue.isNull($0) })
    }
}

/// A save larger than the log's old 16 MiB frame bound commits and replays.
@Suite struct LargeSaveTests {
    @Test func aSaveOfMoreThanSixteenMebibytesCommitsAndReopens() async throws {
        let folder = TemporaryDirectory()
        let model = try Model { Entity("Blob") { Attribute("text", .string) } }
        let store = try Store(at: folder.store(), model: model)
        let text = String(repeating: "x", count: 1000)
        let ids = try await store.batchInsert("Blob", columns: ["text"], rows: (0..<20_000).map { [.string(text + String($0))] })
        #expect(ids.count == 20_000)
        try await store.close()
        let reopened = try Store(at: folder.store(), model: model)
        #expect(try reopened.viewContext.count(FetchRequest("Blob")) == 20_000)
        try await reopened.close()
        // A bound set lower refuses the save whole.
        var options = StoreOptions()
        options.maximumSaveSize = 1 << 20
        let small = try Store(at: folder.path + "/small", model: model, options: options)
        await #expect(throws: (any Error).self) {
            try await small.batchInsert("Blob", columns: ["text"], rows: (0..<2_000).map { [.string(text + String($0))] })
        }
        #expect(try small.viewContext.count(FetchRequest("Blob")) == 0)
        try await small.close()
    }
}
