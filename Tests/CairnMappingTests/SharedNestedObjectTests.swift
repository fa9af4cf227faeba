import Cairn
import CairnMapping
import Foundation
import Testing

/// An import deletes a nested object only when the mapping says so (`mergeAndPrune`, or
/// `replace` of a relationship that owns its objects: a to-one inverse and the cascade delete
/// rule) and nothing else holds it: objects other records share are unlinked, never deleted.
@Suite struct SharedNestedObjectTests {
    /// Two characters share a power (many-to-many) and a publisher (to-one whose inverse is
    /// to-many): re-importing one of them with other values or other objects takes nothing from
    /// the other.
    @Test(arguments: [false, true]) func sharedPowersAndPublishersSurviveAReimport(changesValues: Bool) async throws {
        let model = try Model {
            Entity("Character") {
                Attribute("id", .integer64)
                Attribute("name", .string)
                Relationship("powers", to: "Power", inverse: "characters", .toMany(ordered: false))
                Relationship("publisher", to: "Publisher", inverse: "characters")
                Unique("id")
            }
            Entity("Power") {
                Attribute("name", .string)
                Attribute("detail", .string)
                Relationship("characters", to: "Character", inverse: "powers", .toMany(ordered: false))
                Unique("name")
            }
            Entity("Publisher") {
                Attribute("name", .string)
                Attribute("country", .string)
                Relationship("characters", to: "Character", inverse: "publisher", .toMany(ordered: false))
                Unique("name")
            }
        }
        let store = Store(inMemory: model)
        let mapping = try Mapping(model: model)
        let first = #"""
            [{"id": 1, "name": "Batman", "powers": [{"name": "wealth", "detail": "a lot"}], "publisher": {"name": "DC", "country": "US"}},
             {"id": 2, "name": "Robin", "powers": [{"name": "wealth", "detail": "a lot"}], "publisher": {"name": "DC", "country": "US"}}]
            """#
        _ = try await store.importJSON(MapperFixtures.bytes(first), into: "Character", mapping: mapping)
        let view = store.viewContext
        let wealth = try #require(try view.one("Power", "name", "wealth")).objectID
        let dc = try #require(try view.one("Publisher", "name", "DC")).objectID
        let second =
            changesValues
            ? #"{"id": 1, "powers": [{"name": "wealth", "detail": "less"}], "publisher": {"name": "DC", "country": "USA"}}"#
            : #"{"id": 1, "powers": [{"name": "fear", "detail": "some"}], "publisher": {"name": "Marvel", "country": "US"}}"#
        let result = try await store.importJSON(MapperFixtures.bytes(second), into: "Character", mapping: mapping)
        #expect(result.deleted == 0, "deleted \(result.deleted)")
        let robin = try #require(try view.one("Character", "id", 2))
        #expect(try robin.objects(forKey: "powers").map(\.objectID) == [wealth], "Robin keeps the shared power")
        #expect(try robin.object(forKey: "publisher")?.objectID == dc, "Robin keeps the shared publisher")
        if changesValues {
            #expect(try view.object(with: wealth)?.value(forKey: "detail", as: String.self) == "less", "updated in place")
            #expect(try view.object(with: dc)?.value(forKey: "country", as: String.self) == "USA")
            let batman = try #require(try view.one("Character", "id", 1))
            #expect(try batman.objects(forKey: "powers").map(\.objectID) == [wealth])
        }
        #expect(try view.count(FetchRequest("Power")) == (changesValues ? 1 : 2))
        #expect(try view.count(FetchRequest("Publisher")) == (changesValues ? 1 : 2))
    }

    /// The shape of the relationship under test: `Character.items` to `Item`, and back.
    struct Shape: CustomStringConvertible, Sendable {
        enum Inverse: CaseIterable, Sendable { case toOne, toMany, none }
        var cardinality: Relationship.Cardinality
        var inverse: Inverse
        var cascade: Bool

        var description: String { "\(cardinality) inverse \(inverse)\(cascade ? " cascade" : "")" }

        static let all: [Shape] = [Relationship.Cardinality.toOne, .toMany(ordered: false), .toMany(ordered: true)].flatMap { cardinality in
            Inverse.allCases.flatMap { inverse in [false, true].map { Shape(cardinality: cardinality, inverse: inverse, cascade: $0) } }
        }

        func model() throws -> Model {
            let inverseName: String? = inverse == .none ? nil : "owners"
            return try Model {
                Entity("Character") {
                    Attribute("id", .integer64)
                    Relationship("items", to: "Item", inverse: inverseName, cardinality, deleteRule: cascade ? .cascade : .nullify)
                    Unique("id")
                }
                Entity("Item") {
                    Attribute("code", .string)
                    Attribute("label", .string)
                    if inverse == .toOne { Relationship("owners", to: "Character", inverse: "items") }
                    if inverse == .toMany { Relationship("owners", to: "Character", inverse: "items", .toMany(ordered: false)) }
                    Relationship("shelves", to: "Shelf", inverse: "items", .toMany(ordered: false))
                    Unique("code")
                }
                Entity("Shelf") {
                    Attribute("name", .string)
                    Relationship("items", to: "Item", inverse: "shelves", .toMany(ordered: false))
                    Unique("name")
                }
                Entity("Pin") {
                    Attribute("name", .string)
                    Relationship("item", to: "Item")  // no inverse: seen only from the pin
                    Unique("name")
                }
            }
        }

        /// What a record gives the relationship: the items, nested.
        func items(_ records: [String]) -> String {
            if cardinality == .toOne { return records.first ?? "null" }
            return "[" + records.joined(separator: ", ") + "]"
        }
    }

    /// Who else holds the item the first character gives up.
    enum Holder: CaseIterable, Sendable { case nobody, otherCharacter, shelf, pin }
    /// What the second import does to the first character's items.
    enum Edit: CaseIterable, Sendable { case changeItem, otherItem, clear }

    /// Every relationship shape under every policy: an object another object still holds is never
    /// deleted, and one nothing holds is deleted only when the mapping says so.
    @Test(arguments: Shape.all) func anObjectStillHeldIsNeverDeleted(shape: Shape) async throws {
        let model = try shape.model()
        for policy in RelationshipPolicy.allCases {
            let mapping = try Mapping(model: model) { EntityMapping("Character") { RelationshipMap("items", policy: policy) } }
            for holder in Holder.allCases where !(holder == .otherCharacter && shape.inverse == .toOne) {
                for edit in Edit.allCases {
                    do { try await check(shape, model, mapping, policy, holder, edit) } catch {
                        Issue.record("\(shape), \(policy), held by \(holder), \(edit): \(error)")
                    }
                }
            }
        }
    }

    private func check(_ shape: Shape, _ model: Model, _ mapping: Mapping, _ policy: RelationshipPolicy, _ holder: Holder, _ edit: Edit) async throws {
        let place = "\(shape), \(policy), held by \(holder), \(edit)"
        let store = Store(inMemory: model)
        let x = #"{"code": "X", "label": "x"}"#
        var characters = [#"{"id": 1, "items": \#(shape.items([x]))}"#]
        if holder == .otherCharacter { characters.append(#"{"id": 2, "items": \#(shape.items([x]))}"#) }
        _ = try await store.importJSON(MapperFixtures.bytes("[" + characters.joined(separator: ",") + "]"), into: "Character", mapping: mapping)
        if holder == .shelf { _ = try await store.importJSON(MapperFixtures.bytes(#"{"name": "s", "items": ["X"]}"#), into: "Shelf", mapping: mapping) }
        if holder == .pin { _ = try await store.importJSON(MapperFixtures.bytes(#"{"name": "p", "item": "X"}"#), into: "Pin", mapping: mapping) }
        let view = store.viewContext
        let item = try #require(try view.one("Item", "code", "X"), "\(place)").objectID

        let given: [String] =
            switch edit {
            case .changeItem: [#"{"code": "X", "label": "x2"}"#]
            case .otherItem: [#"{"code": "Y", "label": "y"}"#]
            case .clear: []
            }
        let result = try await store.importJSON(
            MapperFixtures.bytes(#"{"id": 1, "items": \#(shape.items(given))}"#), into: "Character", mapping: mapping)

        let owned = shape.inverse == .toOne
        let prunes = policy == .mergeAndPrune || (policy == .replace && shape.cascade)
        let released = edit != .changeItem && !(policy == .merge && shape.cardinality != .toOne)
        let replaced = edit == .changeItem && policy == .replace
        let mayGo = holder == .nobody && owned && prunes && (released || replaced)
        let survives = view.object(with: item) != nil
        #expect(survives == !mayGo, "\(place): the item \(survives ? "stays" : "is deleted")")
        #expect(result.deleted == (survives ? 0 : 1), "\(place): deleted \(result.deleted)")
        switch holder {
        case .nobody: break
        case .otherCharacter:
            let other = try #require(try view.one("Character", "id", 2))
            let held = shape.cardinality == .toOne ? [try other.object(forKey: "items")?.objectID] : try other.objects(forKey: "items").map(\.objectID)
            #expect(held == [item], "\(place): the other character keeps it")
        case .shelf:
            let shelf = try #require(try view.one("Shelf", "name", "s"))
            #expect(try shelf.objects(forKey: "items").map(\.objectID) == [item], "\(place): the shelf keeps it")
        case .pin:
            let pin = try #require(try view.one("Pin", "name", "p"))
            #expect(try pin.object(forKey: "item")?.objectID == item, "\(place): the pin keeps it")
        }
        if edit == .changeItem {
            #expect(try view.count(FetchRequest("Item", predicate: .equal("code", "X"))) == 1, "\(place): one X")
            #expect(try view.one("Item", "code", "X")?.value(forKey: "label", as: String.self) == "x2", "\(place): X updated")
        }
    }
}
