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
