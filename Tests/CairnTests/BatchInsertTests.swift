import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// A batch insert is one save of objects given as values: defaults fill what is not given, bad
/// keys and values are refused before anything is saved, and the save's own checks apply.
@Suite struct BatchInsertTests {
    @Test func objectsAreSavedInOneSaveWithTheirDefaults() async throws {
        let store = Store(inMemory: try libraryModel())
        let saves = SaveCounter()
        let observation = store.observeSaves { _ in saves.increment() }
        let ids = try await store.batchInsert("Author", [["name": "Jane Austen", "born": 1775], ["name": "Mary Shelley"]])
        #expect(ids.count == 2 && ids[0] < ids[1])
        #expect(saves.value == 1)
        let view = store.viewContext
        let jane = try #require(view.object(with: ids[0]))
        #expect(jane["name"] == "Jane Austen" && jane["born"] == .integer(1775) && jane["rating"] == .double(0))
        #expect(try view.object(with: ids[1])?.value(forKey: "born") == .null)
        #expect(try view.fetchFirst(FetchRequest("Author", predicate: .equal("name", "Mary Shelley")))?.objectID == ids[1])
        // A new context inserts after them: keys are never handed out twice.
        let later = try store.newBackgroundContext().insert("Author")
        #expect(later.objectID.key > ids[1].key)
        #expect(try await store.batchInsert("Author", []).isEmpty)
        #expect(saves.value == 1, "an empty batch saves nothing")
        _ = observation
    }

    @Test func badInputIsRefusedBeforeAnythingIsSaved() async throws {
        let store = Store(inMemory: try libraryModel())
        func refusal(_ entity: String, _ objects: [[String: Value]]) async -> StoreError? {
            do {
                try await store.batchInsert(entity, objects)
                return nil
            } catch {
                return error as? StoreError
            }
        }
        #expect(await refusal("Nobody", [[:]])?.code == .unknownName)
        #expect(await refusal("Item", [["code": "x"]])?.code == .abstractEntity)
        let unknown = await refusal("Author", [["name": "A"], ["name": "B", "height": 2]])
        #expect(unknown?.code == .unknownName && unknown?.message.contains("object 1") == true && unknown?.property == "height")
        let mistyped = await refusal("Author", [["name": "A", "born": "long ago"]])
        #expect(mistyped?.code == .typeMismatch && mistyped?.property == "born")
        #expect(await refusal("Author", [["born": 1800]])?.code == .missingValue, "a required value missing")
        #expect(await refusal("Author", [["name": "Twin"], ["name": "Twin"]])?.code == .uniquenessViolation, "two new objects")
        try await store.batchInsert("Author", [["name": "Saved"]])
        #expect(await refusal("Author", [["name": "Saved"]])?.code == .uniquenessViolation, "a new object and a saved one")
        #expect(try store.count(of: "Author") == 1)
    }

    @Test func aBatchSurvivesReopen() async throws {
        let folder = TemporaryDirectory()
        let directory = folder.store()
        let model = try libraryModel()
        let objects = (0..<3000).map { ["name": Value.string("author \($0)"), "born": .integer(Int64(1700 + $0 % 300))] }
        do {
            let store = try Store(at: directory, model: model)
            try await store.batchInsert("Author", objects)
            try await store.close()
        }
        let store = try Store(at: directory, model: model)
        #expect(try store.count(of: "Author") == 3000)
        #expect(try store.viewContext.fetchFirst(FetchRequest("Author", predicate: .equal("name", "author 2999")))?.value(forKey: "born") == .integer(1999))
        try await store.close()
    }
}
