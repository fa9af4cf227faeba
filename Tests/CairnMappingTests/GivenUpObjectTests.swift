import Cairn
import CairnMapping
import Foundation
import Testing

/// An object a relationship gives up stays when the mapping does not let the import delete it
/// (`replace` of a nullify relationship, `merge`): unlinked. When its inverse is required, that
/// leaves it as the save refuses it: the import names the record that gave it up, with a hint
/// (strict), or skips that record (lenient).
@Suite struct GivenUpObjectTests {
    static func model(requiredOwner: Bool, keyed: Bool, deleteRule: DeleteRule = .nullify) throws -> Model {
        try Model {
            Entity("Character") {
                Attribute("id", .integer64)
                Attribute("name", .string)
                Relationship("items", to: "Item", inverse: "owner", .toMany(ordered: false), deleteRule: deleteRule)
                Unique("id")
            }
            Entity("Item") {
                Attribute("code", .string)
                Relationship("owner", to: "Character", inverse: "items", optional: !requiredOwner)
                if keyed { Unique("code") }
            }
        }
    }

    static let first = MapperFixtures.bytes(#"[{"id": 1, "name": "a", "items": [{"code": "X"}]}, {"id": 2, "name": "b"}]"#)
    static let second = MapperFixtures.bytes(#"[{"id": 2, "name": "b2"}, {"id": 1, "name": "a2", "items": [{"code": "Y"}]}]"#)

    static func options(lenient: Bool, viaContext: Bool = false) -> ImportOptions {
        var options = ImportOptions()
        options.lenient = lenient
        if viaContext { options.afterImport = { _ in } }
        return options
    }

    @Test(arguments: [false, true]) func aGivenUpObjectWithARequiredInverseNamesTheOwnersRecord(keyed: Bool) async throws {
        let store = Store(inMemory: try Self.model(requiredOwner: true, keyed: keyed))
        _ = try await store.importJSON(Self.first, into: "Character")
        do {
            _ = try await store.importJSON(Self.second, into: "Character")
            Issue.record("an item left without its required owner was saved")
        } catch let error as MappingError {
            #expect(error.code == .missingValue && error.path == "$[1]" && error.entity == "Item" && error.property == "owner", "\(error)")
            #expect(error.offset != nil)
            #expect(error.message.contains("nullify") && error.message.contains("cascade") && error.message.contains("mergeAndPrune"), "\(error)")
        }
        let result = try await store.importJSON(Self.second, into: "Character", options: Self.options(lenient: true))
        #expect(result.warnings.map(\.path) == ["$[1]"], "\(result.warnings)")
        #expect(result.updated == 1 && result.inserted == 0 && result.deleted == 0 && result.objectIDs.count == 1, "\(result.updated)/\(result.inserted)")
        let view = store.viewContext
        let one = try #require(try view.one("Character", "id", 1))
        #expect(one["name"] == "a", "the skipped record changed nothing")
        #expect(try one.objects(forKey: "items").map { $0["code"] } == ["X"])
        #expect(try view.count(FetchRequest("Item")) == 1)
        #expect(try view.one("Character", "id", 2)?["name"] == "b2")
    }

    @Test(arguments: [false, true]) func cascadeOrMergeAndPruneLetsTheImportDeleteIt(cascade: Bool) async throws {
        let model = try Self.model(requiredOwner: true, keyed: false, deleteRule: cascade ? .cascade : .nullify)
        let mapping =
            try cascade
            ? Mapping(model: model)
            : Mapping(model: model) { EntityMapping("Character") { RelationshipMap("items", policy: .mergeAndPrune) } }
        let store = Store(inMemory: model)
        _ = try await store.importJSON(Self.first, into: "Character", mapping: mapping)
        let result = try await store.importJSON(Self.second, into: "Character", mapping: mapping)
        #expect(result.deleted == 1 && result.warnings.isEmpty)
        #expect(try store.viewContext.count(FetchRequest("Item")) == 1)
    }

    /// With an optional inverse, a keyless object given up under `replace` of a nullify
    /// relationship stays as an unlinked object.
    @Test func aKeylessObjectGivenUpStaysUnlinked() async throws {
        let store = Store(inMemory: try Self.model(requiredOwner: false, keyed: false))
        _ = try await store.importJSON(Self.first, into: "Character")
        let result = try await store.importJSON(Self.second, into: "Character")
        #expect(result.deleted == 0)
        let items = try store.viewContext.fetch(FetchRequest("Item"))
        #expect(items.count == 2)
        #expect(try items.first { $0["code"] == "X" }?.object(forKey: "owner") == nil, "X is unlinked")
    }
}
