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
        #expect(try context.explain(request).contains("ordered index"))
        #expect(
            try context.explain(FetchRequest("Person", predicate: try FetchPredicate(#Predicate<Person> { $0.name == "Ada" })))
                .contains("uniqueness index"))
    }

    struct Member: StoredModel, Equatable {
        var name: String
        var age: Int?
        var nickname: String?
        var active: Bool?
    }

    static func members() async throws -> ObjectContext {
        let model = try Model {
            Entity("Member") {
                Attribute("name", .string, optional: false)
                Attribute("age", .integer32, indexed: true)
                Attribute("nickname", .string)
                Attribute("active", .boolean)
                Unique("name")
            }
        }
        let context = Store(inMemory: model).viewContext
        try context.upsert(Member(name: "Ada", age: 95, nickname: "Al", active: true))
        try context.upsert(Member(name: "Bob", age: 30, nickname: "Bo", active: false))
        try context.upsert(Member(name: "Cleo", age: nil, nickname: "Ace", active: nil))
        try context.upsert(Member(name: "Dan", age: 91, nickname: nil, active: nil))
        try context.upsert(Member(name: "Eve", age: nil, nickname: nil, active: true))
        try await context.save()
        return context
    }

    static func names(_ context: ObjectContext, _ predicate: Predicate<Member>) throws -> [String] {
        try context.fetch(Member.self, predicate: try FetchPredicate(predicate), sortKeys: [SortKey("name")]).map(\.name)
    }

    @Test func optionalPropertiesAsSwiftDataUsersWriteThem() async throws {
        let context = try await Self.members()
        #expect(try Self.names(context, #Predicate<Member> { $0.age ?? 0 >= 90 }) == ["Ada", "Dan"])
        #expect(try Self.names(context, #Predicate<Member> { $0.age ?? 100 >= 90 }) == ["Ada", "Cleo", "Dan", "Eve"])
        #expect(try Self.names(context, #Predicate<Member> { 40 > $0.age ?? 0 }) == ["Bob", "Cleo", "Eve"])
        #expect(try Self.names(context, #Predicate<Member> { $0.age! >= 90 }) == ["Ada", "Dan"])
        // An object whose value is nil never matches a condition on the unwrapped value, negated or not.
        #expect(try Self.names(context, #Predicate<Member> { $0.age! != 30 }) == ["Ada", "Dan"])
        #expect(try Self.names(context, #Predicate<Member> { !($0.age! >= 90) }) == ["Bob"])
        #expect(try Self.names(context, #Predicate<Member> { !$0.active! }) == ["Bob"])
        #expect(try Self.names(context, #Predicate<Member> { !($0.age! >= 90 || $0.name == "Cleo") }) == ["Bob"])
        #expect(try Self.names(context, #Predicate<Member> { $0.age == nil }) == ["Cleo", "Eve"])
        #expect(try Self.names(context, #Predicate<Member> { $0.age != nil && $0.age! < 50 }) == ["Bob"])
        #expect(try Self.names(context, #Predicate<Member> { $0.age == 30 }) == ["Bob"])
        #expect(try Self.names(context, #Predicate<Member> { $0.nickname?.starts(with: "A") == true }) == ["Ada", "Cleo"])
        #expect(try Self.names(context, #Predicate<Member> { $0.nickname?.starts(with: "A") == false }) == ["Bob"])
        #expect(try Self.names(context, #Predicate<Member> { $0.nickname?.starts(with: "A") != true }) == ["Bob", "Dan", "Eve"])
        #expect(try Self.names(context, #Predicate<Member> { $0.nickname?.contains("c") ?? false }) == ["Cleo"])
        #expect(try Self.names(context, #Predicate<Member> { $0.nickname?.contains("c") ?? true }) == ["Cleo", "Dan", "Eve"])
        #expect(try Self.names(context, #Predicate<Member> { $0.nickname ?? "Zed" == "Zed" }) == ["Dan", "Eve"])
        #expect(try Self.names(context, #Predicate<Member> { $0.active ?? false }) == ["Ada", "Eve"])
        #expect(try Self.names(context, #Predicate<Member> { $0.active ?? true }) == ["Ada", "Cleo", "Dan", "Eve"])
        #expect(try Self.names(context, #Predicate<Member> { $0.active == true }) == ["Ada", "Eve"])
        #expect(try Self.names(context, #Predicate<Member> { $0.active! }) == ["Ada", "Eve"])
        #expect(try Self.names(context, #Predicate<Member> { !($0.active ?? false) }) == ["Bob", "Cleo", "Dan"])
    }

    @Test func unsupportedExpressionsAreNamed() throws {
        #expect { try FetchPredicate(#Predicate<Person> { ($0.email ?? "").isEmpty }) } throws: { error in
            (error as? StoreError)?.code == .invalidPredicate
        }
    }
}
