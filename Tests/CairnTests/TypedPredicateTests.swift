import Foundation
import Testing
@testable import Cairn

/// Foundation's `#Predicate` over typed models, evaluated by the query engine.
@Suite struct TypedPredicateTests {
    struct Person: StoredModel, Equatable {
        var name: String
        var age: Int
        var email: String?
        var joined: Date
    }

    static func context() async throws -> ObjectContext {
        let model = try Model {
            Entity("Person") {
                Attribute("name", .string, optional: false)
                Attribute("age", .integer64, optional: false, indexed: true)
                Attribute("email", .string)
                Attribute("joined", .date, optional: false)
                Unique("name")
            }
        }
        let store = Store(inMemory: model)
        let context = store.viewContext
        for (index, name) in ["Ada", "Bob", "Cleo", "Dan", "Eve"].enumerated() {
            try context.upsert(
                Person(
                    name: name, age: 20 + index * 10, email: index % 2 == 0 ? "\(name.lowercased())@example.org" : nil,
                    joined: Date(timeIntervalSinceReferenceDate: Double(index) * 1000)))
        }
        try await context.save()
        return context
    }

    static func names(_ context: ObjectContext, _ predicate: Predicate<Person>) throws -> [String] {
        try context.fetch(Person.self, predicate: try FetchPredicate(predicate), sortKeys: [SortKey("name")]).map(\.name)
    }

    @Test func comparisonsAndLogic() async throws {
        let context = try await Self.context()
        #expect(try Self.names(context, #Predicate<Person> { $0.age >= 40 }) == ["Cleo", "Dan", "Eve"])
        #expect(try Self.names(context, #Predicate<Person> { $0.age > 20 && $0.age < 50 }) == ["Bob", "Cleo"])
        #expect(try Self.names(context, #Predicate<Person> { $0.name == "Ada" || !($0.age <= 50) }) == ["Ada", "Eve"])
        #expect(try Self.names(context, #Predicate<Person> { $0.email == nil }) == ["Bob", "Dan"])
        #expect(try Self.names(context, #Predicate<Person> { $0.email != nil && $0.name != "Eve" }) == ["Ada", "Cleo"])
        let cutoff = Date(timeIntervalSinceReferenceDate: 1500)
        #expect(try Self.names(context, #Predicate<Person> { $0.joined < cutoff }) == ["Ada", "Bob"])
    }

    @Test func stringsListsAndRanges() async throws {
        let context = try await Self.context()
        #expect(try Self.names(context, #Predicate<Person> { $0.name.contains("e") }) == ["Cleo", "Eve"])
        #expect(try Self.names(context, #Predicate<Person> { $0.name.starts(with: "D") }) == ["Dan"])
        let wanted = ["Bob", "Eve", "Zed"]
        #expect(try Self.names(context, #Predicate<Person> { wanted.contains($0.name) }) == ["Bob", "Eve"])
        #expect(try Self.names(context, #Predicate<Person> { (30...40).contains($0.age) }) == ["Bob", "Cleo"])
        #expect(try Self.names(context, #Predicate<Person> { (30..<40).contains($0.age) }) == ["Bob"])
    }

    @Test func theSameEngineAndIndexesAnswer() async throws {
        let context = try await Self.context()
        let request = FetchRequest("Person", predicate: try FetchPredicate(#Predicate<Person> { $0.age == 30 }))
        #expect(try context.explain(request).contains("hash index"))
        #expect(
            try context.explain(FetchRequest("Person", predicate: try FetchPredicate(#Predicate<Person> { $0.name == "Ada" })))
                .contains("uniqueness index"))
    }

    @Test func unsupportedExpressionsAreNamed() throws {
        #expect { try FetchPredicate(#Predicate<Person> { ($0.email ?? "").isEmpty }) } throws: { error in
            (error as? StoreError)?.code == .invalidPredicate
        }
    }
}
