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
        let observation = store.observeSavesSynchronously { _ in saves.increment() }
        let ids = try await store.batchInsert("Author", [["name": "Jane Austen", "born": 1775], ["name": "Mary Shelley"]])
        #expect(ids.count == 2 && ids[0] < ids[1])
        #expect(saves.value == 1)
        let view = store.viewContext
        let jane = try #require(view.object(with: ids[0]))
        #expect(jane["name"] == "Jane Austen" && jane["born"] == .integer(1775) && jane["rating"] == .double(0))
        #expect(try view.object(with: ids[1])?.value(forKey: "born", as: Value.self) == .null)
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
        #expect(
            try store.viewContext.fetchFirst(FetchRequest("Author", predicate: .equal("name", "author 2999")))?.value(forKey: "born", as: Value.self)
                == .integer(1999))
        try await store.close()
    }

    @Test func rowsOfColumnsAreSavedLikeObjects() async throws {
        let folder = TemporaryDirectory()
        let directory = folder.store()
        let model = try libraryModel()
        let ids: [ObjectID]
        do {
            let store = try Store(at: directory, model: model)
            let saves = SaveCounter()
            let observation = store.observeSavesSynchronously { note in
                #expect(note.inserted.count == 3 && note.updated.isEmpty && note.deleted.isEmpty)
                saves.increment()
            }
            ids = try await store.batchInsert(
                "Author", columns: ["born", "name"], rows: [[1775, "Jane Austen"], [.null, "Mary Shelley"], [1812, "Charles Dickens"]])
            #expect(ids.count == 3 && ids[0] < ids[1] && ids[1] < ids[2])
            #expect(saves.value == 1)
            #expect(try await store.batchInsert("Author", columns: ["name"], rows: []).isEmpty)
            #expect(saves.value == 1, "no rows, no save")
            _ = observation
            try await store.close()
        }
        // After reopen: values by column, defaults for the rest, relationships empty.
        let store = try Store(at: directory, model: model)
        let view = store.viewContext
        let jane = try #require(view.object(with: ids[0]))
        #expect(jane["name"] == "Jane Austen" && jane["born"] == .integer(1775) && jane["rating"] == .double(0))
        #expect(try jane.objects(forKey: "books").isEmpty)
        #expect(try view.object(with: ids[1])?.value(forKey: "born", as: Value.self) == .null)
        #expect(try view.fetchFirst(FetchRequest("Author", predicate: .equal("name", "Charles Dickens")))?.objectID == ids[2])
        try await store.close()
    }

    @Test func badRowsAreRefusedBeforeAnythingIsSaved() async throws {
        let store = Store(inMemory: try libraryModel())
        func refusal(_ entity: String, _ columns: [String], _ rows: [[Value]]) async -> StoreError? {
            do {
                try await store.batchInsert(entity, columns: columns, rows: rows)
                return nil
            } catch {
                return error as? StoreError
            }
        }
        #expect(await refusal("Nobody", ["name"], [["A"]])?.code == .unknownName)
        #expect(await refusal("Item", ["code"], [["x"]])?.code == .abstractEntity)
        let unknown = await refusal("Author", ["name", "height"], [["A", 2]])
        #expect(unknown?.code == .unknownName && unknown?.property == "height")
        let relationship = await refusal("Author", ["name", "books"], [["A", .null]])
        #expect(relationship?.code == .unknownName && relationship?.message.contains("relationship") == true)
        #expect(await refusal("Author", ["name", "name"], [["A", "B"]])?.code == .invalidArgument, "a column named twice")
        let short = await refusal("Author", ["name", "born"], [["A", 1800], ["B"]])
        #expect(short?.code == .invalidArgument && short?.message.contains("object 1") == true, "a row shorter than the columns")
        #expect(await refusal("Author", ["name"], [["A", 1800]])?.code == .invalidArgument, "a row longer than the columns")
        let mistyped = await refusal("Author", ["name", "born"], [["A", 1800], ["B", "long ago"]])
        #expect(mistyped?.code == .typeMismatch && mistyped?.property == "born" && mistyped?.message.contains("object 1") == true)
        let missing = await refusal("Author", ["born"], [[1800]])
        #expect(missing?.code == .missingValue && missing?.property == "name", "a required value not among the columns")
        let null = await refusal("Author", ["name"], [["A"], [.null]])
        #expect(null?.code == .missingValue && null?.message.contains("object 1") == true, "a required value given as nil")
        #expect(await refusal("Author", ["name"], [["Twin"], ["Twin"]])?.code == .uniquenessViolation, "two new objects")
        try await store.batchInsert("Author", columns: ["name"], rows: [["Saved"]])
        #expect(await refusal("Author", ["name"], [["Saved"]])?.code == .uniquenessViolation, "a new object and a saved one")
        #expect(try store.count(of: "Author") == 1)
        // Keys reserved by a refused batch are skipped, never handed out twice.
        let next = try await store.batchInsert("Author", columns: ["name"], rows: [["Next"]])
        #expect(try store.viewContext.object(with: next[0])?.value(forKey: "name", as: Value.self) == "Next")
    }

    @Test func anEntityWithARequiredRelationshipIsRefused() async throws {
        let model = try Model {
            Entity("Owner") {
                Attribute("name", .string)
                Relationship("pets", to: "Pet", inverse: "owner", .toMany(ordered: false))
            }
            Entity("Pet") {
                Attribute("name", .string)
                Attribute("mood", .string, transient: true)
                Relationship("owner", to: "Owner", inverse: "pets", optional: false)
            }
        }
        let store = Store(inMemory: model)
        #expect(await errorCode { try await store.batchInsert("Pet", columns: ["name"], rows: [["Rex"]]) } == .missingValue)
        #expect(await errorCode { try await store.batchInsert("Pet", [["name": "Rex"]]) } == .missingValue)
        #expect(try store.count(of: "Pet") == 0)
    }

    @Test func transientAttributesAreCheckedButNotSaved() async throws {
        let model = try Model {
            Entity("Note") {
                Attribute("text", .string)
                Attribute("draft", .string, transient: true)
            }
        }
        let store = Store(inMemory: model)
        #expect(await errorCode { try await store.batchInsert("Note", columns: ["text", "draft"], rows: [["a", 1]]) } == .typeMismatch)
        let ids = try await store.batchInsert("Note", columns: ["text", "draft"], rows: [["a", "scratch"]])
        #expect(try store.viewContext.object(with: ids[0])?.value(forKey: "draft", as: Value.self) == .null)
        #expect(try store.viewContext.object(with: ids[0])?.value(forKey: "text", as: Value.self) == "a")
    }

    /// The code of the store error `body` throws, nil when it throws none.
    private func errorCode(_ body: () async throws -> Void) async -> StoreError.Code? {
        do {
            try await body()
            return nil
        } catch {
            return (error as? StoreError)?.code
        }
    }
}
