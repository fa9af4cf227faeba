import Cairn
import CairnMapping
import CairnTestSupport
import Foundation
import Testing

/// Importing through a parent entity reads and writes each object's own entity; a unique key
/// declared on a parent applies to its sub-entities; an entity mapper (Groot's
/// `entityMapperName`) picks each record's entity, whether the parent is abstract or not; a
/// userInfo key Cairn cannot honour refuses the entity's records before any is read.
@Suite struct SubEntityImportTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/Models/Inheritance.xcdatamodel").path

    /// The fixture model (Groot's shape: `Abstract` with `ConcreteA`/`ConcreteB`, a `Container`,
    /// and a concrete `Vehicle` with a `Truck`), with its entity mappers registered.
    static func model() throws -> Model {
        EntityMappers.register(name: "Fixtures.Abstract") { json in
            switch json["type"] {
            case .string("A"): "ConcreteA"
            case .string("B"): "ConcreteB"
            default: nil
            }
        }
        EntityMappers.register(name: "Fixtures.Vehicle") { json in json["kind"] == .string("truck") ? "Truck" : nil }
        return try Model(contentsOf: fixture)
    }

    static let container = #"""
        [{"name": "c", "abstracts": [{"id": 1, "type": "A", "foo": "this is A"}, {"id": 2, "type": "B", "bar": "this is B"}]}]
        """#

    @Test func anUpdateThroughTheAbstractParentWritesTheSubEntitysOwnAttributes() async throws {
        let model = try Self.model()
        let mapping = try Mapping(model: model)
        let store = Store(inMemory: model)
        _ = try await store.importJSON(MapperFixtures.bytes(Self.container), into: "Container", mapping: mapping)
        let view = store.viewContext
        let a = try #require(try view.one("Abstract", "identifier", 1))
        #expect(a.entity.name == "ConcreteA" && a["foo"] == "this is A")
        let b = try #require(try view.one("Abstract", "identifier", 2))
        #expect(b.entity.name == "ConcreteB" && b["bar"] == "this is B")
        let result = try await store.importJSON(MapperFixtures.bytes(#"{"id": 1, "foo": "A has been updated"}"#), into: "Abstract", mapping: mapping)
        #expect(result.updated == 1 && result.unchanged == 0 && result.inserted == 0, "\(result.updated) updated, \(result.unchanged) unchanged")
        #expect(try view.one("Abstract", "identifier", 1)?["foo"] == "A has been updated")
        // Nested in the container, through the relationship to the parent, too.
        let nested = #"{"name": "c", "abstracts": [{"id": 1, "foo": "again"}, {"id": 2, "bar": "B too"}]}"#
        _ = try await store.importJSON(MapperFixtures.bytes(nested), into: "Container", mapping: mapping)
        #expect(try view.one("Abstract", "identifier", 1)?["foo"] == "again")
        #expect(try view.one("Abstract", "identifier", 2)?["bar"] == "B too")
        #expect(try view.count(FetchRequest("Abstract")) == 2)
    }

    @Test(arguments: [false, true]) func aKeyDeclaredOnTheParentAppliesToItsSubEntities(viaContext: Bool) async throws {
        let model = try Self.model()
        let mapping = try Mapping(model: model)
        let store = Store(inMemory: model)
        var options = ImportOptions()
        if viaContext { options.afterImport = { _ in } }
        _ = try await store.importJSON(MapperFixtures.bytes(#"{"id": 1, "foo": "one"}"#), into: "ConcreteA", mapping: mapping, options: options)
        let again = try await store.importJSON(MapperFixtures.bytes(#"{"id": 1, "foo": "two"}"#), into: "ConcreteA", mapping: mapping, options: options)
        #expect(again.updated == 1 && again.inserted == 0, "\(again.inserted) inserted")
        #expect(try store.viewContext.count(FetchRequest("ConcreteA")) == 1)
        #expect(try store.viewContext.one("ConcreteA", "identifier", 1)?["foo"] == "two")
        // A sibling's record with the same key is refused, naming the record.
        await #expect(throws: MappingError.self) {
            try await store.importJSON(MapperFixtures.bytes(#"[{"id": 1, "bar": "b"}]"#), into: "ConcreteB", mapping: mapping, options: options)
        }
        #expect(try store.viewContext.count(FetchRequest("Abstract")) == 1)
        #expect(try mapping.describe("ConcreteA").contains("unique key identifier (userInfo of Abstract)"))
    }

    @Test func anEntityMapperPicksTheSubEntityOfAConcreteParent() async throws {
        let model = try Self.model()
        let mapping = try Mapping(model: model)
        let store = Store(inMemory: model)
        let input = #"[{"plate": "A1", "kind": "truck", "load": 2.5, "wheels": 6}, {"plate": "B2", "wheels": 3}]"#
        let result = try await store.importJSON(MapperFixtures.bytes(input), into: "Vehicle", mapping: mapping)
        #expect(result.inserted == 2)
        let view = store.viewContext
        let truck = try #require(try view.one("Vehicle", "plate", "A1"))
        #expect(truck.entity.name == "Truck" && truck["load"] == .double(2.5) && truck["wheels"] == .integer(6))
        #expect(try view.one("Vehicle", "plate", "B2")?.entity.name == "Vehicle")
        // An update through the parent, without the mapper's hint, reaches the truck's own attribute.
        let update = try await store.importJSON(MapperFixtures.bytes(#"{"plate": "A1", "load": 3.5}"#), into: "Vehicle", mapping: mapping)
        #expect(update.updated == 1)
        #expect(try view.one("Vehicle", "plate", "A1")?["load"] == .double(3.5))
        #expect(try view.count(FetchRequest("Vehicle")) == 2)
    }

    @Test func anEntityMapperNamingAnotherFamilyFailsNamingTheRecord() async throws {
        let model = try Model {
            Entity("Shape", userInfo: ["entityMapperName": "SubEntityImportTests.wrong", "identityAttribute": "code"]) { Attribute("code", .string) }
            Entity("Square", parent: "Shape") { Attribute("side", .double) }
            Entity("Other") { Attribute("code", .string) }
        }
        EntityMappers.register(name: "SubEntityImportTests.wrong") { _ in "Other" }
        let store = Store(inMemory: model)
        do {
            _ = try await store.importJSON(MapperFixtures.bytes(#"[{"code": "x"}]"#), into: "Shape", mapping: try Mapping(model: model))
            Issue.record("an entity outside the family was accepted")
        } catch let error as MappingError {
            #expect(error.path == "$[0]" && error.message.contains("Other"), "\(error)")
        }
    }

    @Test func userInfoKeysCairnCannotHonourAreRefusedWhenTheMappingIsBuilt() async throws {
        let unregistered = try Model {
            Entity("Shape", abstract: true, userInfo: ["entityMapperName": "SubEntityImportTests.neverRegistered"]) { Attribute("code", .string) }
            Entity("Square", parent: "Shape") { Attribute("side", .double) }
            Entity("Label") { Attribute("text", .string) }
            Entity("Card", userInfo: ["JSONDictionaryTransformerName": "Legacy"]) { Attribute("code", .string) }
        }
        let folder = TemporaryDirectory()
        let store = try Store(at: folder.store(), model: unregistered)
        let mapping = try Mapping(model: unregistered)
        // The entity's mapping is refused before any record is read; another entity of the same model imports.
        for (entity, key) in [("Shape", "entityMapperName"), ("Card", "JSONDictionaryTransformerName")] {
            do {
                _ = try await store.importJSON(Array(#"[{"code":"x"}]"#.utf8), into: entity, mapping: mapping)
                Issue.record("\(entity)'s userInfo was ignored")
            } catch let error as MappingError {
                #expect(error.code == .invalidMapping && error.entity == entity && error.property == key, "\(error)")
            }
        }
        _ = try await store.importJSON(Array(#"[{"text":"x"}]"#.utf8), into: "Label", mapping: mapping)
        #expect(try store.count(of: "Label") == 1 && store.count(of: "Shape") == 0 && store.count(of: "Card") == 0)
        // Not read at all when Groot's conventions are not.
        let plain = try Mapping(model: unregistered, conventions: UserInfoConventions(libraries: [.cairn]))
        _ = try await store.importJSON(Array(#"[{"code":"x"}]"#.utf8), into: "Card", mapping: plain)
        try await store.close()
    }

    @Test func aNestedRecordOfAnEntityWhoseUserInfoCannotBeHonouredIsRefusedByItsPath() async throws {
        let model = try Model {
            Entity("Shape", abstract: true, userInfo: ["entityMapperName": "SubEntityImportTests.neverRegistered"]) {
                Attribute("code", .string)
                Relationship("board", to: "Board", inverse: "shapes")
            }
            Entity("Square", parent: "Shape") { Attribute("side", .double) }
            Entity("Board") {
                Attribute("name", .string)
                Relationship("shapes", to: "Shape", inverse: "board", .toMany(ordered: false))
            }
        }
        let folder = TemporaryDirectory()
        let store = try Store(at: folder.store(), model: model)
        do {
            _ = try await store.importJSON(Array(#"[{"name":"b","shapes":[{"code":"x"}]}]"#.utf8), into: "Board", mapping: try Mapping(model: model))
            Issue.record("a nested record of Shape was read without its entity mapper")
        } catch let error as MappingError {
            #expect(error.property == "entityMapperName" && error.path == "$[0].shapes[0]", "\(error)")
        }
        #expect(try store.count(of: "Board") == 0)
        try await store.close()
    }
}
