import Cairn
import CairnMapping
import Foundation
import Testing

/// Nested objects and references by key link related objects, inverses included, by each
/// relationship's policy.
@Suite struct RelationshipImportTests {
    let model: Model

    init() throws { model = try MapperFixtures.model() }

    func importAuthors(_ store: Store, _ policy: RelationshipPolicy = .replace, _ input: [UInt8]? = nil) async throws -> ImportResult {
        var options = ImportOptions()
        options.root = "authors"
        let bytes = try input ?? MapperFixtures.json("authors.json")
        return try await store.importJSON(bytes, into: "Author", mapping: try MapperFixtures.mapping(model, books: policy), options: options)
    }

    @Test func nestedObjectsImportWithTheirInverses() async throws {
        let store = Store(inMemory: model)
        let result = try await importAuthors(store)
        #expect(result.objectIDs.count == 2 && result.inserted == 2 + 3 + 3)
        let view = store.viewContext
        let william = try #require(try view.one("Author", "authorId", 101))
        let books = try william.objects(forKey: "books")
        #expect(try books.map { try $0.value(forKey: "title", as: String.self) } == ["The Tempest", "Hamlet"], "ordered, in input order")
        for book in books { #expect(try book.object(forKey: "author") == william, "the inverse is set") }
        let tempest = books[0]
        #expect(try tempest.value(forKey: "retailPrice", as: Double.self) == 14.99, "a key path through a nested object")
        let pricing = try #require(try tempest.object(forKey: "pricing"))
        #expect(try pricing.value(forKey: "retailPrice", as: Double.self) == 14.99)
        #expect(try pricing.object(forKey: "book") == tempest)
        #expect(try tempest.value(forKey: "rating", as: Int.self) == 4)
        #expect(try william.value(forKey: "born", as: Date.self) == ISO8601DateParser.date("1564-04-01"))
        // Importing the same file again changes nothing, nested objects included.
        let lsn = store.lastSaveLSN
        let again = try await importAuthors(store)
        #expect(again.inserted == 0 && again.updated == 0 && again.deleted == 0 && again.unchanged == 8)
        #expect(store.lastSaveLSN == lsn)
    }

    static let changedTempest = """
        {"authors": [{"author_id": 101, "books": [
          {"book_id": 3001, "title": "The Tempest (2nd ed.)", "pricing": {"retail_price": 15.99}},
          {"book_id": 3003, "title": "Macbeth"}]}]}
        """

    @Test func replaceGivesNewRelatedObjects() async throws {
        let store = Store(inMemory: model)
        _ = try await importAuthors(store, .replace)
        let view = store.viewContext
        let before = try #require(try view.one("Book", "bookId", 3001)).objectID
        let hamlet = try #require(try view.one("Book", "bookId", 3002)).objectID
        let result = try await importAuthors(store, .replace, MapperFixtures.bytes(Self.changedTempest))
        let after = try #require(try view.one("Book", "bookId", 3001))
        #expect(after.objectID != before, "a changed nested record makes a new object")
        #expect(view.object(with: hamlet) == nil, "the book the input no longer gives is deleted")
        #expect(try after.value(forKey: "title", as: String.self) == "The Tempest (2nd ed.)")
        let william = try #require(try view.one("Author", "authorId", 101))
        #expect(try william.objects(forKey: "books").map { try $0.value(forKey: "bookId", as: Int.self) } == [3001, 3003])
        #expect(result.deleted >= 2)
        #expect(try view.count(FetchRequest("Pricing")) == 2 + 0, "cascade took the old pricing objects; Emma's and the new one remain")
    }

    @Test func mergeKeepsIdentity() async throws {
        let store = Store(inMemory: model)
        _ = try await importAuthors(store, .merge)
        let view = store.viewContext
        let before = try #require(try view.one("Book", "bookId", 3001)).objectID
        let result = try await importAuthors(store, .merge, MapperFixtures.bytes(Self.changedTempest))
        let after = try #require(try view.one("Book", "bookId", 3001))
        #expect(after.objectID == before)
        #expect(try after.value(forKey: "title", as: String.self) == "The Tempest (2nd ed.)")
        let william = try #require(try view.one("Author", "authorId", 101))
        #expect(try william.objects(forKey: "books").map { try $0.value(forKey: "bookId", as: Int.self) } == [3001, 3002, 3003], "Hamlet stays")
        #expect(result.deleted == 1, "only the Tempest's old pricing: Book.pricing keeps the default policy, replace")
    }

    @Test func mergeAndPruneRemovesTheAbsent() async throws {
        let store = Store(inMemory: model)
        _ = try await importAuthors(store, .mergeAndPrune)
        let view = store.viewContext
        let before = try #require(try view.one("Book", "bookId", 3001)).objectID
        _ = try await importAuthors(store, .mergeAndPrune, MapperFixtures.bytes(Self.changedTempest))
        #expect(try view.one("Book", "bookId", 3001)?.objectID == before)
        #expect(try view.one("Book", "bookId", 3002) == nil, "Hamlet is removed")
        let william = try #require(try view.one("Author", "authorId", 101))
        #expect(try william.objects(forKey: "books").map { try $0.value(forKey: "bookId", as: Int.self) } == [3001, 3003])
    }

    @Test func referencesByKeyLinkObjectsMadeEarlierOrLater() async throws {
        let store = Store(inMemory: model)
        let mapping = try MapperFixtures.mapping(model)
        _ = try await store.importJSON(MapperFixtures.bytes(#"[{"code": "G", "name": "Green"}]"#), into: "Line", mapping: mapping)
        let result = try await store.importJSON(
            try MapperFixtures.json("stations.json"), into: "Station", mapping: mapping,
            options: {
                var options = ImportOptions()
                options.insertsMissingReferences = true
                return options
            }())
        #expect(result.objectIDs.count == 2)
        let view = store.viewContext
        let harlem = try #require(try view.one("Station", "stopID", 30002))
        #expect(Set(try harlem.objects(forKey: "lines").map { try $0.value(forKey: "code", as: String.self) }) == ["G", "B"])
        #expect(try harlem.value(forKey: "latitude", as: Double.self) == 41.886848)
        let green = try #require(try view.one("Line", "code", "G"))
        #expect(try green.objects(forKey: "stations").count == 2, "inverses of a many-to-many")
        // A key to an object the input makes later, in the same import.
        let later = #"[{"ticket": 1, "employer_code": "ACME"}, {"ticket": 2, "employer_code": "ACME"}]"#
        await #expect(throws: MappingError.self) {
            try await store.importJSON(MapperFixtures.bytes(later), into: "Person", mapping: mapping)
        }
        _ = try await store.importJSON(MapperFixtures.bytes(#"{"code": "ACME"}"#), into: "Company", mapping: mapping)
        _ = try await store.importJSON(MapperFixtures.bytes(later), into: "Person", mapping: mapping)
        let acme = try #require(try view.one("Company", "code", "ACME"))
        #expect(try acme.objects(forKey: "employees").count == 2)
    }

    @Test func anUnresolvedReferenceFailsNamesItsPathOrIsLeftOutWhenLenient() async throws {
        let store = Store(inMemory: model)
        let mapping = try MapperFixtures.mapping(model)
        let input = MapperFixtures.bytes(#"[{"ticket": 1, "employer_code": "NOPE"}]"#)
        await #expect {
            try await store.importJSON(input, into: "Person", mapping: mapping)
        } throws: { error in
            (error as? MappingError)?.code == .unresolvedReference && (error as? MappingError)?.path == "$[0].employer_code"
        }
        var options = ImportOptions()
        options.lenient = true
        let result = try await store.importJSON(input, into: "Person", mapping: mapping, options: options)
        #expect(result.inserted == 1 && result.warnings.count == 1)
    }
}
