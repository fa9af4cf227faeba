import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// Plain Swift values in and out of attributes, without `Value`.
@Suite struct TypedValueTests {
    static func model() throws -> Model {
        try Model {
            Entity("Person") {
                Attribute("name", .string)
                Attribute("age", .integer16)
                Attribute("count", .integer64)
                Attribute("score", .double)
                Attribute("ratio", .float)
                Attribute("price", .decimal)
                Attribute("active", .boolean)
                Attribute("born", .date)
                Attribute("token", .uuid)
                Attribute("homepage", .uri)
                Attribute("photo", .binary)
                Unique("name")
            }
        }
    }

    @Test func everySwiftTypeSetsAndReadsWithoutValue() async throws {
        let folder = TemporaryDirectory()
        let store = try Store(at: folder.store(), model: try Self.model())
        let context = store.viewContext
        let person = try context.insert("Person")
        let group = 7
        let born = Date(timeIntervalSince1970: 1_000_000)
        let token = UUID()
        try person.setValue("Group \(group)", forKey: "name")
        try person.setValue(42, forKey: "age")
        try person.setValue(UInt8(200), forKey: "count")
        try person.setValue(2.5, forKey: "score")
        try person.setValue(Float(0.25), forKey: "ratio")
        try person.setValue(Decimal(string: "12.50")!, forKey: "price")
        try person.setValue(true, forKey: "active")
        try person.setValue(born, forKey: "born")
        try person.setValue(token, forKey: "token")
        try person.setValue(URL(string: "https://example.com/a")!, forKey: "homepage")
        try person.setValue(Data([1, 2, 3]), forKey: "photo")
        try await context.save()

        let name: String = try person.value(forKey: "name")
        #expect(name == "Group 7")
        let age: Int? = try person.value(forKey: "age")
        #expect(age == 42)
        #expect(try person.value(forKey: "age", as: Int16.self) == 42)
        #expect(try person.value(forKey: "count", as: UInt64.self) == 200)
        #expect(try person.value(forKey: "score", as: Double.self) == 2.5)
        #expect(try person.value(forKey: "ratio", as: Float.self) == 0.25)
        #expect(try person.value(forKey: "price", as: Decimal.self) == Decimal(string: "12.5"))
        #expect(try person.value(forKey: "active", as: Bool.self))
        #expect(try person.value(forKey: "born", as: Date.self) == born)
        #expect(try person.value(forKey: "token", as: UUID.self) == token)
        #expect(try person.value(forKey: "homepage", as: URL.self).absoluteString == "https://example.com/a")
        #expect(try person.value(forKey: "photo", as: Data.self) == Data([1, 2, 3]))
        let dynamic: Value = try person.value(forKey: "age")
        #expect(dynamic == .integer(42))

        // nil clears, and reads back as nil through an optional.
        try person.setValue(nil as Int?, forKey: "age")
        try person.setValue(Optional<String>.none, forKey: "homepage")
        #expect(try person.value(forKey: "age", as: Int?.self) == nil)
        #expect(try person.value(forKey: "homepage", as: URL?.self) == nil)
        let optionalAge: Int? = 30
        try person.setValue(optionalAge, forKey: "age")
        #expect(try person.value(forKey: "age", as: Int.self) == 30)
        try await store.close()
    }

    @Test func mismatchesAndOutOfRangeIntegersThrowNamingEntityAndProperty() throws {
        let folder = TemporaryDirectory()
        let store = try Store(at: folder.store(), model: try Self.model())
        let person = try store.viewContext.insert("Person")
        func failure(_ body: () throws -> Void) -> StoreError? {
            do { try body() } catch let error as StoreError { return error } catch { return nil }
            return nil
        }
        let range = failure { try person.setValue(70_000, forKey: "age") }
        #expect(range?.code == .typeMismatch)
        #expect(range?.entity == "Person" && range?.property == "age")
        #expect(range?.message.contains("70000 is out of the range of integer16") == true)
        let huge = failure { try person.setValue(UInt64.max, forKey: "count") }
        #expect(huge?.code == .typeMismatch && huge?.property == "count")
        let wrongType = failure { try person.setValue("old", forKey: "age") }
        #expect(wrongType?.code == .typeMismatch && wrongType?.message.contains("takes integer16") == true)
        #expect(failure { try person.setValue(Double.nan, forKey: "score") }?.code == .typeMismatch)

        try person.setValue(300, forKey: "age")
        let narrow = failure { _ = try person.value(forKey: "age", as: Int8.self) }
        #expect(narrow?.code == .typeMismatch && narrow?.property == "age")
        #expect(narrow?.message.contains("does not read as Int8") == true)
        let text = failure { _ = try person.value(forKey: "age", as: String.self) }
        #expect(text?.code == .typeMismatch)
        let missing = failure { _ = try person.value(forKey: "score", as: Double.self) }
        #expect(missing?.code == .missingValue && missing?.property == "score")
        #expect(failure { _ = try person.value(forKey: "nope", as: Int?.self) }?.code == .unknownName)
    }

    @Test func numbersConvertToTheAttributesTypeWhenExact() throws {
        let folder = TemporaryDirectory()
        let store = try Store(at: folder.store(), model: try Self.model())
        let person = try store.viewContext.insert("Person")
        try person.setValue(42, forKey: "score")
        #expect(try person.value(forKey: "score", as: Value.self) == .double(42))
        try person.setValue(0.1, forKey: "ratio")
        #expect(try person.value(forKey: "ratio", as: Value.self) == .float(0.1))
        try person.setValue(3, forKey: "price")
        #expect(try person.value(forKey: "price", as: Decimal.self) == 3)
        try person.setValue("https://example.com", forKey: "homepage")
        #expect(try person.value(forKey: "homepage", as: Value.self) == .uri("https://example.com"))
        // A whole double reads as an integer; a fraction does not.
        try person.setValue(4.0, forKey: "score")
        #expect(try person.value(forKey: "score", as: Int.self) == 4)
        try person.setValue(4.5, forKey: "score")
        #expect(throws: StoreError.self) { try person.value(forKey: "score", as: Int.self) }
    }

    @Test func batchOperationsConvertNumbersAsSetValueDoes() async throws {
        let folder = TemporaryDirectory()
        let store = try Store(at: folder.store(), model: try Self.model())
        _ = try await store.batchInsert("Person", [["name": "A", "score": 42]])
        #expect(try await store.batchUpdate(FetchRequest("Person"), set: ["ratio": 1]) == 1)
        let person = try #require(try store.viewContext.fetchFirst(FetchRequest("Person")))
        #expect(try person.value(forKey: "score", as: Value.self) == .double(42))
        #expect(try person.value(forKey: "ratio", as: Value.self) == .float(1))
        await #expect(throws: StoreError.self) { try await store.batchUpdate(FetchRequest("Person"), set: ["age": 1_000_000]) }
        try await store.close()
    }

    @Test func fetchPredicateBuildersTakePlainValues() async throws {
        let folder = TemporaryDirectory()
        let store = try Store(at: folder.store(), model: try Self.model())
        let context = store.viewContext
        for index in 0..<10 {
            let person = try context.insert("Person")
            try person.setValue("P\(index)", forKey: "name")
            try person.setValue(index * 10, forKey: "age")
            if index % 2 == 0 { try person.setValue(index.isMultiple(of: 4), forKey: "active") }
        }
        try await context.save()
        let minimum = 50
        let noFlag: Bool? = nil
        #expect(try context.count(FetchRequest("Person", predicate: .compare("age", .greaterOrEqual, minimum))) == 5)
        #expect(try context.count(FetchRequest("Person", predicate: .equal("name", "P\(3)"))) == 1)
        #expect(try context.count(FetchRequest("Person", predicate: .equal("active", noFlag))) == 5)
        #expect(try context.count(FetchRequest("Person", predicate: .equal("active", true))) == 3)
        // Above every integer an attribute can hold.
        #expect(try context.count(FetchRequest("Person", predicate: .equal("age", UInt64.max))) == 0)
        #expect(try context.count(FetchRequest("Person", predicate: .compare("age", .less, UInt64.max))) == 10)
        let top = try context.insert("Person")
        try top.setValue("Top", forKey: "name")
        try top.setValue(Int64.max, forKey: "count")
        #expect(try context.count(FetchRequest("Person", predicate: .equal("count", UInt64(1) << 63))) == 0)
        #expect(try context.count(FetchRequest("Person", predicate: .compare("count", .less, UInt64(1) << 63))) == 1)

        try await store.close()
    }

    struct Person: StoredModel, Equatable {
        var name: String
        var age: Int?
        var score: Double?
        var active: Bool?
        var born: Date?
    }

    @Test func upsertOfATypedValueClearsWhatItsNilPropertiesName() async throws {
        let folder = TemporaryDirectory()
        let store = try Store(at: folder.store(), model: try Self.model())
        let context = store.viewContext
        let born = Date(timeIntervalSince1970: 86_400)
        try context.upsert(Person(name: "Ada", age: 36, score: 1.5, active: true, born: born))
        try await context.save()
        let object = try context.upsert(Person(name: "Ada", age: nil, score: nil, active: nil, born: nil))
        try object.setValue(7, forKey: "count")  // an attribute the type does not declare
        try await context.save()
        let people = try context.fetch(Person.self)
        #expect(people == [Person(name: "Ada", age: nil, score: nil, active: nil, born: nil)])
        // Attributes the type does not have are left as they are.
        try context.upsert(Person(name: "Ada", age: 1, score: nil, active: nil, born: nil))
        #expect(try object.value(forKey: "count", as: Int.self) == 7)
        try await store.close()
    }
}
