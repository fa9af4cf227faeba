import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

@Suite struct StoredModelTests {
    struct Author: StoredModel, Equatable {
        var name: String
        var born: Int?
        var rating: Double
    }

    enum Genre: String, Codable, Sendable { case fiction, poetry }

    struct Catalogued: StoredModel, Equatable {
        static let entityName = "Record"
        var code: String
        var genre: Genre
        var added: Date
        var id: UUID
        var price: Decimal
        var cover: Data?
        var site: URL?
        var pages: Int16
    }

    struct Renamed: StoredModel, Equatable {
        static let entityName = "Author"
        var fullName: String
        var rating: Double
        enum CodingKeys: String, CodingKey {
            case fullName = "name"
            case rating
        }
    }

    static func model() throws -> Model {
        try Model {
            Entity("Author") {
                Attribute("name", .string, optional: false)
                Attribute("born", .integer32)
                Attribute("rating", .double, default: 0.0)
                Unique("name")
            }
            Entity("Record") {
                Attribute("code", .string, optional: false)
                Attribute("genre", .string)
                Attribute("added", .date)
                Attribute("id", .uuid)
                Attribute("price", .decimal)
                Attribute("cover", .binary)
                Attribute("site", .uri)
                Attribute("pages", .integer16)
                Unique("code")
            }
        }
    }

    @Test func upsertInsertsThenUpdatesByTheUniquenessConstraint() async throws {
        let folder = TemporaryDirectory()
        let store = try Store(at: folder.store(), model: try Self.model())
        let context = store.viewContext
        try context.upsert(Author(name: "Le Guin", born: 1929, rating: 4.5))
        try context.upsert(Author(name: "Butler", born: nil, rating: 4.8))
        try await context.save()
        try context.upsert(Author(name: "Le Guin", born: 1929, rating: 5.0))
        try await context.save()
        #expect(try store.count(of: "Author") == 2)
        let authors = try context.fetch(Author.self, sortKeys: [SortKey("name")])
        #expect(authors == [Author(name: "Butler", born: nil, rating: 4.8), Author(name: "Le Guin", born: 1929, rating: 5.0)])
        #expect(try context.fetch(Renamed.self, predicate: .equal("name", "Butler")) == [Renamed(fullName: "Butler", rating: 4.8)])
        try await store.close()
    }

    @Test func everySupportedTypeRoundTripsThroughTheStore() async throws {
        let folder = TemporaryDirectory()
        let model = try Self.model()
        let value = Catalogued(
            code: "R1", genre: .poetry, added: Date(timeIntervalSince1970: 1_700_000_000.25),
            id: UUID(), price: Decimal(string: "19.99")!, cover: Data([1, 2, 3]),
            site: URL(string: "https://example.org/r1"), pages: 320)
        do {
            let store = try Store(at: folder.store(), model: model)
            try store.viewContext.upsert(value)
            try await store.viewContext.save()
            try await store.close()
        }
        let store = try Store(at: folder.store(), model: model)
        #expect(try store.viewContext.fetch(Catalogued.self) == [value])
        try await store.close()
    }

    /// A final class, and the integer and floating-point types beyond the common ones: each is
    /// converted exactly (never handed back to its own coding, which would recurse).
    final class Meter: StoredModel, Equatable {
        let serial: UInt
        let reading: UInt64
        let wide: Int128
        let ratio: Float16
        init(serial: UInt, reading: UInt64, wide: Int128, ratio: Float16) {
            self.serial = serial
            self.reading = reading
            self.wide = wide
            self.ratio = ratio
        }
        static func == (a: Meter, b: Meter) -> Bool {
            (a.serial, a.reading, a.wide, a.ratio) == (b.serial, b.reading, b.wide, b.ratio)
        }
    }

    @Test func finalClassesAndOtherNumberTypesRoundTripOrFailClearly() async throws {
        let model = try Model {
            Entity("Meter") {
                Attribute("serial", .integer64, optional: false)
                Attribute("reading", .integer64)
                Attribute("wide", .integer64)
                Attribute("ratio", .float)
                Unique("serial")
            }
        }
        let store = Store(inMemory: model)
        let context = store.viewContext
        let meter = Meter(serial: 7, reading: UInt64(Int64.max), wide: -5, ratio: 0.5)
        try context.upsert(meter)
        try await context.save()
        #expect(try context.fetch(Meter.self) == [meter])
        #expect { try context.upsert(Meter(serial: 8, reading: .max, wide: 0, ratio: 1)) } throws: { error in
            let error = try #require(error as? StoreError)
            return error.code == .typeMismatch && error.property == "reading"
        }
        #expect { try context.upsert(Meter(serial: 9, reading: 0, wide: Int128(Int64.max) + 1, ratio: 1)) } throws: {
            ($0 as? StoreError)?.property == "wide"
        }
        // A stored value the Swift type cannot hold.
        try context.make("Meter", ["serial": 10, "reading": .integer(-1), "wide": 0, "ratio": .float(1)])
        #expect { try context.fetch(Meter.self, predicate: .equal("serial", 10)) } throws: { error in
            let error = try #require(error as? StoreError)
            return error.code == .typeMismatch && error.property == "reading"
        }
    }

    @Test func mismatchesAreClearErrors() throws {
        struct Stray: StoredModel {
            static let entityName = "Author"
            var name: String
            var nickname: String
        }
        struct WrongType: StoredModel {
            static let entityName = "Author"
            var name: Int
        }
        struct Nested: StoredModel {
            static let entityName = "Author"
            var name: String
            var tags: [String]
        }
        let store = Store(inMemory: try Self.model())
        let context = store.viewContext
        #expect { try context.upsert(Stray(name: "x", nickname: "y")) } throws: { ($0 as? StoreError)?.property == "nickname" }
        #expect { try context.upsert(Nested(name: "x", tags: ["a"])) } throws: { ($0 as? StoreError)?.property == "tags" }
        try context.upsert(Author(name: "Typed", born: nil, rating: 1))
        #expect { try context.fetch(WrongType.self) } throws: { error in
            let error = try #require(error as? StoreError)
            return error.code == .typeMismatch && error.property == "name"
        }
    }
}

@Suite struct TransformerTests {
    struct RGB: Sendable, Equatable { var r, g, b: UInt8 }
    struct BadColor: Error {}
    struct RGBTransformer: AttributeTransformer {
        func bytes(from value: RGB) throws -> [UInt8] { [value.r, value.g, value.b] }
        func value(from bytes: [UInt8]) throws -> RGB {
            guard bytes.count == 3 else { throw BadColor() }
            return RGB(r: bytes[0], g: bytes[1], b: bytes[2])
        }
    }

    @Test func transformableAttributesGoThroughTheirRegisteredTransformer() async throws {
        AttributeTransformers.register(RGBTransformer(), name: "TestRGB")
        let model = try Model {
            Entity("Shelf") {
                Attribute("color", .transformable(transformer: "TestRGB"))
                Attribute("shade", .transformable(transformer: "Unregistered"))
                Attribute("label", .string)
            }
        }
        let folder = TemporaryDirectory()
        let store = try Store(at: folder.store(), model: model)
        let shelf = try store.viewContext.insert("Shelf")
        try shelf.setTransformedValue(RGB(r: 1, g: 2, b: 3), forKey: "color")
        try await store.viewContext.save()
        try await store.close()
        let reopened = try Store(at: folder.store(), model: model)
        let again = try #require(try reopened.viewContext.fetchFirst(FetchRequest("Shelf")))
        #expect(try again.transformedValue(forKey: "color", as: RGB.self) == RGB(r: 1, g: 2, b: 3))
        #expect { try again.setTransformedValue("red", forKey: "color") } throws: { ($0 as? StoreError)?.code == .typeMismatch }
        #expect { try again.setTransformedValue(RGB(r: 0, g: 0, b: 0), forKey: "shade") } throws: { ($0 as? StoreError)?.code == .unknownName }
        #expect { try again.setTransformedValue(RGB(r: 0, g: 0, b: 0), forKey: "label") } throws: { ($0 as? StoreError)?.code == .typeMismatch }
        try again.setValue(.binary([9]), forKey: "color")
        #expect(throws: BadColor.self) { try again.transformedValue(forKey: "color", as: RGB.self) }
        try await reopened.close()
    }
}
