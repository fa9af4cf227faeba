import Cairn
import CairnMapping
import Foundation
import Testing

/// Export writes objects as the mapping reads them, so that import then export gives the input
/// back, apart from the normalisations docs/MAPPING.md lists.
@Suite struct ExportTests {
    let model: Model
    let mapping: Mapping

    init() throws {
        model = try MapperFixtures.model()
        mapping = try MapperFixtures.mapping(model)
    }

    /// The JSON as Foundation reads it, for comparisons that ignore key order.
    static func parsed(_ bytes: [UInt8]) throws -> NSObject {
        try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]) as! NSObject
    }

    @Test func flatRoundTrip() async throws {
        let store = Store(inMemory: model)
        let input = """
            [{"ticket_number": 1, "name": "Ada", "nickname": null, "hired": "2019-03-04T09:30:00.125Z", "salary": 5400.5, "active": true, "visits": 12, "employer_code": null},
             {"ticket_number": 2, "name": "Grace \\"Amazing\\" Hopper\\n", "nickname": "Amazing Grace", "hired": "1906-12-09T00:00:00.000Z", "salary": 0.1, "active": false, "visits": -3, "employer_code": null}]
            """
        let result = try await store.importJSON(MapperFixtures.bytes(input), into: "Person", mapping: mapping)
        let output = try store.viewContext.exportJSON(FetchRequest("Person", sortKeys: [SortKey("ticket")]), mapping: mapping)
        #expect(try Self.parsed(output) == Self.parsed(MapperFixtures.bytes(input)))
        #expect(result.objectIDs.count == 2)
        // Exporting twice gives the same bytes; re-importing the export changes nothing.
        #expect(try store.viewContext.exportJSON(FetchRequest("Person", sortKeys: [SortKey("ticket")]), mapping: mapping) == output)
        let again = try await store.importJSON(output, into: "Person", mapping: mapping)
        #expect(again.unchanged == 2 && again.saves == 0)
    }

    @Test func nestedRoundTripDoesNotFollowInversesBack() async throws {
        let store = Store(inMemory: model)
        let authors = """
            [{"author_id": 101, "firstName": "William", "lastName": "Shakespeare", "born": "1564-04-01T00:00:00.000Z", "books": [
               {"book_id": 3001, "title": "The Tempest", "year": "2013", "rating": 4, "pricing": {"retail_price": 14.99}},
               {"book_id": 3002, "title": "Hamlet", "year": "2011", "rating": 5, "pricing": {"retail_price": 9.99}}]}]
            """
        _ = try await store.importJSON(MapperFixtures.bytes(authors), into: "Author", mapping: mapping)
        var options = ExportOptions()
        options.depth = 2
        let output = try store.viewContext.exportJSON(FetchRequest("Author"), mapping: mapping, options: options)
        #expect(try Self.parsed(output) == Self.parsed(MapperFixtures.bytes(authors)))
        // Flat: books as the keys of the related objects.
        let flat = try store.viewContext.exportJSON(FetchRequest("Author"), mapping: mapping)
        let expected = #"[{"author_id": 101, "firstName": "William", "lastName": "Shakespeare", "born": "1564-04-01T00:00:00.000Z", "books": [3001, 3002]}]"#
        #expect(try Self.parsed(flat) == Self.parsed(MapperFixtures.bytes(expected)))
        // From the other side, one level: the book's author, without the author's books.
        options.depth = 1
        let book = try store.viewContext.exportJSON(FetchRequest("Book", predicate: .equal("bookId", 3002)), mapping: mapping, options: options)
        let bookExpected = """
            [{"book_id": 3002, "title": "Hamlet", "year": "2011", "rating": 5, "pricing": {"retail_price": 9.99},
              "author": {"author_id": 101, "firstName": "William", "lastName": "Shakespeare", "born": "1564-04-01T00:00:00.000Z"}}]
            """
        #expect(try Self.parsed(book) == Self.parsed(MapperFixtures.bytes(bookExpected)))
    }

    @Test func datesRoundTripAtMillisecondPrecision() async throws {
        let store = Store(inMemory: model)
        let input =
            #"[{"ticket": 1, "hired": "2024-05-01T10:20:30Z"}, {"ticket": 2, "hired": "2024-05-01T10:20:30.123+02:00"}, {"ticket": 3, "hired": "2024-05-01T10:20:30.5Z"}]"#
        _ = try await store.importJSON(MapperFixtures.bytes(input), into: "Person", mapping: mapping)
        var options = ExportOptions()
        options.writesNulls = false
        options.format = .jsonLines
        let output = String(
            decoding: try store.viewContext.exportJSON(FetchRequest("Person", sortKeys: [SortKey("ticket")]), mapping: mapping, options: options), as: UTF8.self
        )
        let lines = output.split(separator: "\n")
        #expect(lines.count == 3 && output.hasSuffix("\n"))
        #expect(lines[0].contains(#""hired":"2024-05-01T10:20:30.000Z""#))
        #expect(lines[1].contains(#""hired":"2024-05-01T08:20:30.123Z""#))
        #expect(lines[2].contains(#""hired":"2024-05-01T10:20:30.500Z""#))
        #expect(!output.contains("null"))
        // Re-importing the export finds every date equal.
        let again = try await store.importJSON(Array(output.utf8), into: "Person", mapping: mapping)
        #expect(again.unchanged == 3)
    }

    @Test func datePatternsAndHooks() async throws {
        let store = Store(inMemory: model)
        let patterned = try Mapping(model: model) {
            EntityMapping("Person") { AttributeMap("hired", date: .pattern("M/d/yyyy h:mm a")) }
        }
        _ = try await store.importJSON(MapperFixtures.bytes(#"{"ticket": 1, "hired": "7/4/2021 3:05 PM"}"#), into: "Person", mapping: patterned)
        var options = ExportOptions()
        options.beforeExport = { object, json in
            guard case .object(var members) = json else { return }
            members.append((key: "display", value: .string("#" + String(try object.value(forKey: "ticket", as: Int.self)))))
            json = .object(members)
        }
        let output = String(decoding: try store.viewContext.exportJSON(FetchRequest("Person"), mapping: patterned, options: options), as: UTF8.self)
        #expect(output.contains(#""hired":"7/4/2021 3:05 PM""#))
        #expect(output.contains(##""display":"#1""##))
    }

    @Test func largeExportsStreamInPieces() async throws {
        let store = Store(inMemory: model)
        _ = try await store.importJSON(ChunkedImportTests.people(5000), into: "Person", mapping: mapping)
        var pieces = 0
        var total = 0
        let result = try store.viewContext.exportJSON(FetchRequest("Person"), mapping: mapping) { bytes in
            pieces += 1
            total += bytes.count
            #expect(bytes.count <= 80_000)
        }
        #expect(result.objects == 5000 && result.bytes == total && pieces > 2)
    }
}
