import Cairn
import CairnMapping
import Foundation

/// The models and mappings the mapper's tests share, and the JSON fixtures in `Fixtures/JSON`.
enum MapperFixtures {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/JSON")

    static func json(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: folder.appendingPathComponent(name)))
    }

    /// People working for companies; authors with books and their pricing; stations on lines.
    static func model() throws -> Model {
        try Model {
            Entity("Person") {
                Attribute("ticket", .integer64, optional: false)
                Attribute("name", .string)
                Attribute("nickname", .string)
                Attribute("hired", .date)
                Attribute("salary", .decimal)
                Attribute("active", .boolean)
                Attribute("visits", .integer32)
                Relationship("employer", to: "Company", inverse: "employees")
                Unique("ticket")
            }
            Entity("Company") {
                Attribute("code", .string, optional: false)
                Attribute("name", .string)
                Relationship("employees", to: "Person", inverse: "employer", .toMany(ordered: false))
                Unique("code")
            }
            Entity("Author") {
                Attribute("authorId", .integer16)
                Attribute("firstName", .string)
                Attribute("lastName", .string)
                Attribute("born", .date)
                Relationship("books", to: "Book", inverse: "author", .toMany(ordered: true), deleteRule: .cascade)
                Unique("authorId")
            }
            Entity("Book") {
                Attribute("bookId", .integer16)
                Attribute("title", .string)
                Attribute("year", .string)
                Attribute("rating", .integer32)
                Attribute("retailPrice", .double)
                Relationship("author", to: "Author", inverse: "books")
                Relationship("pricing", to: "Pricing", inverse: "book", deleteRule: .cascade)
            }
            Entity("Pricing") {
                Attribute("retailPrice", .double)
                Relationship("book", to: "Book", inverse: "pricing")
            }
            Entity("Station") {
                Attribute("stopID", .integer64)
                Attribute("name", .string)
                Attribute("ada", .boolean)
                Attribute("latitude", .double)
                Attribute("longitude", .double)
                Relationship("lines", to: "Line", inverse: "stations", .toMany(ordered: false))
                Unique("stopID")
            }
            Entity("Line") {
                Attribute("code", .string)
                Attribute("name", .string)
                Relationship("stations", to: "Station", inverse: "lines", .toMany(ordered: false))
                Unique("code")
            }
        }
    }

    /// The mapping of the shapes in `Fixtures/JSON`.
    static func mapping(_ model: Model, books: RelationshipPolicy = .replace) throws -> Mapping {
        try Mapping(model: model) {
            EntityMapping("Person") {
                AttributeMap("ticket", from: "ticket_number", "ticket")
                RelationshipMap("employer", from: "employer_code")
            }
            EntityMapping("Author") {
                AttributeMap("authorId", from: "author_id")
                RelationshipMap("books", policy: books)
            }
            EntityMapping("Book", identity: "bookId") {
                AttributeMap("bookId", from: "book_id")
                AttributeMap("retailPrice", from: "pricing.retail_price")
            }
            EntityMapping("Pricing") {
                AttributeMap("retailPrice", from: "retail_price")
            }
            EntityMapping("Station") {
                AttributeMap("stopID", from: "STOP_ID")
                AttributeMap("name", from: "STATION_NAME")
                AttributeMap("ada", from: "ADA")
                AttributeMap("latitude", from: "LOCATION.latitude")
                AttributeMap("longitude", from: "LOCATION.longitude")
                RelationshipMap("lines", from: "LINES")
            }
        }
    }

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
}

extension ObjectContext {
    /// The object of `entity` whose `key` is `value`.
    func one(_ entity: String, _ key: String, _ value: Value) throws -> ManagedObject? {
        try fetchFirst(FetchRequest(entity, predicate: .equal(key, value)))
    }
}
