import Cairn
import CairnMapping
import Foundation
import Testing

/// What an import must never do: write into another entity's object, delete what it was not
/// asked to, depend on the order of unrelated records, or let an earlier record win.
@Suite struct ImportSafetyTests {
    let model: Model
    let mapping: Mapping

    init() throws {
        model = try MapperFixtures.model()
        mapping = try MapperFixtures.mapping(model)
    }

    @Test func aKeyHeldByASiblingEntityIsRefusedOnBothPaths() async throws {
        let model = try Model {
            Entity("Item", abstract: true) {
                Attribute("code", .integer64); Attribute("label", .string); Unique("code")
            }
            Entity("Tool", parent: "Item") { Attribute("weight", .double) }
            Entity("Toy", parent: "Item") { Attribute("age", .integer16) }
        }
        let mapping = try Mapping(model: model)
        for viaContext in [false, true] {
            let store = Store(inMemory: model)
            _ = try await store.importJSON(MapperFixtures.bytes(#"{"code": 1, "label": "hammer", "weight": 2.5}"#), into: "Tool", mapping: mapping)
            var options = ImportOptions()
            if viaContext { options.afterImport = { _ in } }
            await #expect(throws: (any Error).self) {
                try await store.importJSON(MapperFixtures.bytes(#"{"code": 1, "label": "ball", "age": 3}"#), into: "Toy", mapping: mapping, options: options)
            }
            let tool = try #require(try store.viewContext.fetchFirst(FetchRequest("Tool")))
            #expect(tool["label"] == "hammer" && tool["weight"] == .double(2.5), "the sibling's object is untouched")
            #expect(try store.viewContext.count(FetchRequest("Toy")) == 0)
        }
    }

    /// A store holding the authors fixture, and the options that imported it (root `authors`).
    func storeWithAuthors() async throws -> (Store, ImportOptions) {
        let store = Store(inMemory: model)
        var options = ImportOptions()
        options.root = "authors"
        _ = try await store.importJSON(try MapperFixtures.json("authors.json"), into: "Author", mapping: mapping, options: options)
        return (store, options)
    }

    @Test func aLenientImportNeverDeletesBecauseItSetSomethingAside() async throws {
        let (store, imported) = try await storeWithAuthors()
        var options = imported
        options.lenient = true
        // A nested book without its key is set aside: William's books stay as they were.
        let input = #"{"authors": [{"author_id": 101, "books": [{"title": "no key"}]}]}"#
        let result = try await store.importJSON(MapperFixtures.bytes(input), into: "Author", mapping: mapping, options: options)
        #expect(result.deleted == 0 && !result.warnings.isEmpty)
        let william = try #require(try store.viewContext.one("Author", "authorId", 101))
        #expect(try william.objects(forKey: "books").count == 2)
    }

    @Test func referencesByKeyNeverDeleteWhatTheyNamed() async throws {
        let store = Store(inMemory: model)
        _ = try await store.importJSON(MapperFixtures.bytes(#"[{"code": "X"}, {"code": "Y"}]"#), into: "Company", mapping: mapping)
        _ = try await store.importJSON(MapperFixtures.bytes(#"{"ticket": 1, "employer_code": "X"}"#), into: "Person", mapping: mapping)
        let moved = try await store.importJSON(MapperFixtures.bytes(#"{"ticket": 1, "employer_code": "Y"}"#), into: "Person", mapping: mapping)
        #expect(moved.updated == 1 && moved.deleted == 0)
        #expect(try store.viewContext.count(FetchRequest("Company")) == 2, "company X stays though nobody works there now")
    }

    @Test func replaceDoesNotDependOnTheOrderOfRecords() async throws {
        for reversed in [false, true] {
            let (store, options) = try await storeWithAuthors()
            let hamlet = try #require(try store.viewContext.one("Book", "bookId", 3002)).objectID
            // Hamlet (with its pricing, unchanged) moves from William to Jane.
            var records = [
                #"{"author_id": 101, "books": [{"book_id": 3001, "title": "The Tempest", "year": "2013", "rating": "4", "pricing": {"retail_price": "14.99"}}]}"#,
                #"{"author_id": 102, "books": [{"book_id": 3101, "title": "Emma", "year": "2010", "rating": "4", "pricing": {"retail_price": "11.50"}}, {"book_id": 3002, "title": "Hamlet", "year": "2011", "rating": "5", "pricing": {"retail_price": "9.99"}}]}"#
            ]
            if reversed { records.reverse() }
            let result = try await store.importJSON(
                MapperFixtures.bytes(#"{"authors": [\#(records.joined(separator: ","))]}"#), into: "Author", mapping: mapping, options: options)
            let moved = try #require(try store.viewContext.one("Book", "bookId", 3002))
            #expect(moved.objectID == hamlet, "reversed: \(reversed)")
            #expect(try moved.object(forKey: "author")?.value(forKey: "authorId", as: Int.self) == 102)
            #expect(try moved.object(forKey: "pricing") != nil, "its pricing went with it")
            #expect(result.deleted == 0, "reversed: \(reversed)")
        }
    }

    @Test func nestedRecordsRespectUpdatesExisting() async throws {
        let (store, imported) = try await storeWithAuthors()
        var options = imported
        options.updatesExisting = false
        let input = #"{"authors": [{"author_id": 900, "books": [{"book_id": 3001, "title": "Changed"}]}]}"#
        _ = try await store.importJSON(MapperFixtures.bytes(input), into: "Author", mapping: mapping, options: options)
        #expect(try store.viewContext.one("Book", "bookId", 3001)?.value(forKey: "title", as: String.self) == "The Tempest")
    }

    @Test func aLaterRecordWinsOverAnEarlierOneWaitingForAReference() async throws {
        let model = try Model {
            Entity("Employee") {
                Attribute("id", .integer64)
                Relationship("manager", to: "Employee", inverse: "reports")
                Relationship("reports", to: "Employee", inverse: "manager", .toMany(ordered: false))
                Unique("id")
            }
        }
        let store = Store(inMemory: model)
        let input = #"[{"id": 2}, {"id": 1, "manager": 3}, {"id": 1, "manager": 2}, {"id": 3}]"#
        _ = try await store.importJSON(MapperFixtures.bytes(input), into: "Employee", mapping: try Mapping(model: model))
        let one = try #require(try store.viewContext.one("Employee", "id", 1))
        #expect(try one.object(forKey: "manager")?.value(forKey: "id", as: Int.self) == 2)
    }

    @Test func keysCompareAsTheStoreComparesThemOnBothPaths() async throws {
        let precomposed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        let model = try Model {
            Entity("Tag") {
                Attribute("name", .string); Attribute("uses", .integer64); Unique("name")
            }
        }
        let mapping = try Mapping(model: model)
        let input = MapperFixtures.bytes(#"[{"name": "\#(precomposed)", "uses": 1}, {"name": "\#(decomposed)", "uses": 2}]"#)
        var results: [ImportResult] = []
        for viaContext in [false, true] {
            let store = Store(inMemory: model)
            var options = ImportOptions()
            if viaContext { options.afterImport = { _ in } }
            results.append(try await store.importJSON(input, into: "Tag", mapping: mapping, options: options))
        }
        #expect(results[0].inserted == results[1].inserted && results[0].objectIDs.count == results[1].objectIDs.count)
    }

    @Test func theCountOfDeletedObjectsCountsOnlySavedOnes() async throws {
        let (store, options) = try await storeWithAuthors()
        // William's books are replaced by one new book: the two old ones and their pricing go
        // (the pricing by cascade).
        let input = #"{"authors": [{"author_id": 101, "books": [{"book_id": 3999, "title": "New"}]}]}"#
        let result = try await store.importJSON(MapperFixtures.bytes(input), into: "Author", mapping: mapping, options: options)
        #expect(result.deleted == 4 && result.inserted == 1, "deleted \(result.deleted), inserted \(result.inserted)")
    }

    @Test func datePatternsAndOffsetsThatCouldOverflowAreRefused() throws {
        #expect(throws: MappingError.self) {
            try Mapping(model: model) { EntityMapping("Person") { AttributeMap("hired", date: .pattern("dddddddddddddddddddd")) } }
        }
        #expect(throws: MappingError.self) {
            try Mapping(model: model) { EntityMapping("Person") { AttributeMap("hired", date: .iso8601(defaultOffset: Int.min)) } }
        }
    }
}

/// Details both import paths and both export paths must agree on.
@Suite struct PathAgreementTests {
    @Test func aFallbackKeyThatLosesIsNotCheckedOnEitherPath() async throws {
        let model = try Model {
            Entity("Tag") {
                Attribute("id", .integer64); Attribute("name", .string); Unique("id")
            }
        }
        let mapping = try Mapping(model: model) { EntityMapping("Tag") { AttributeMap("name", from: "name", "full_name") } }
        for viaContext in [false, true] {
            let store = Store(inMemory: model)
            var options = ImportOptions()
            if viaContext { options.afterImport = { _ in } }
            let result = try await store.importJSON(
                MapperFixtures.bytes(#"[{"id": 1, "name": "A", "full_name": [5]}]"#), into: "Tag", mapping: mapping, options: options)
            #expect(result.inserted == 1, "via context: \(viaContext)")
        }
    }

    @Test func datesExportTheSameFromBytesAndFromValues() async throws {
        let model = try Model {
            Entity("Event") {
                Attribute("id", .integer64); Attribute("at", .date); Unique("id")
            }
        }
        let mapping = try Mapping(model: model)
        let store = Store(inMemory: model)
        let dates = [-0.0005, 0.0005, -1.0005, 12.3455, -978_307_200.0005, 1e9 + 0.0005].map { Date(timeIntervalSinceReferenceDate: $0) }
        _ = try await store.batchInsert("Event", columns: ["id", "at"], rows: dates.enumerated().map { [.integer(Int64($0)), .date($1)] })
        let request = FetchRequest("Event", sortKeys: [SortKey("id")])
        let fromBytes = try store.viewContext.exportJSON(request, mapping: mapping)
        // A context with an unsaved change reads values, not bytes.
        let context = store.newBackgroundContext()
        _ = try context.insert("Event")
        let fromValues = try context.exportJSON(FetchRequest("Event", predicate: .compare("id", .less, 100), sortKeys: [SortKey("id")]), mapping: mapping)
        #expect(String(decoding: fromBytes, as: UTF8.self) == String(decoding: fromValues, as: UTF8.self))
    }

    @Test func progressNeverGoesBackWhenAChunkIsReadAgain() async throws {
        let model = try MapperFixtures.model()
        let mapping = try MapperFixtures.mapping(model)
        let store = Store(inMemory: model)
        _ = try await store.importJSON(MapperFixtures.bytes(#"{"code": "X"}"#), into: "Company", mapping: mapping)
        // Flat records, then one with a relationship at the end: the chunk is read twice.
        var records = (0..<300).map { #"{"ticket": \#($0)}"# }
        records.append(#"{"ticket": 999, "employer_code": "X"}"#)
        let counts = Counter()
        let last = Counter()
        var options = ImportOptions()
        options.progressInterval = 50
        options.progress = { progress in
            #expect(progress.records > last.value || progress.records == 301, "\(progress.records) after \(last.value)")
            last.add(progress.records - last.value)
            counts.add(1)
        }
        let result = try await store.importJSON(
            MapperFixtures.bytes("[" + records.joined(separator: ",") + "]"), into: "Person", mapping: mapping, options: options)
        #expect(result.inserted == 301)
        #expect(try store.viewContext.one("Person", "ticket", 999)?.object(forKey: "employer") != nil)
    }
}
