import Cairn
import CairnMapping
import Foundation
import Testing

/// What an import may delete (`DeletionGuard`) at any depth and any size: a chain of owned
/// objects of any length is walked without recursion, an object held through a relationship
/// without an inverse is found without a fetch per object, and a link the import makes is seen by
/// the checks that follow it.
@Suite struct DeletionGuardScaleTests {
    /// A list owning a chain of nodes (each owns the next by cascade, with a to-one inverse), and
    /// pins that hold a node through a relationship without an inverse.
    static func chainModel() throws -> Model {
        try Model {
            Entity("List") {
                Attribute("id", .integer64)
                Relationship("head", to: "Node", inverse: "list", deleteRule: .cascade)
                Unique("id")
            }
            Entity("Node") {
                Attribute("name", .string)
                Relationship("list", to: "List", inverse: "head")
                Relationship("next", to: "Node", inverse: "previous", deleteRule: .cascade)
                Relationship("previous", to: "Node", inverse: "next")
                Unique("name")
            }
            Entity("Pin") {
                Attribute("name", .string)
                Relationship("node", to: "Node")  // no inverse
                Unique("name")
            }
        }
    }

    /// A store holding list 1 whose head starts a chain of `length` nodes (`n0`, `n1`, …), built
    /// through the object graph (nested JSON that deep is refused by the scanner), and a pin on
    /// the last node when `pinsTail`.
    static func chain(_ model: Model, length: Int, pinsTail: Bool) async throws -> Store {
        let store = Store(inMemory: model)
        let context = store.newBackgroundContext(name: "chain")
        let list = try context.insert("List")
        try list.setValue(Int64(1), forKey: "id")
        var previous: ManagedObject?
        for index in 0..<length {
            let node = try context.insert("Node")
            try node.setValue("n\(index)", forKey: "name")
            if let previous { try previous.setObject(node, forKey: "next") } else { try list.setObject(node, forKey: "head") }
            previous = node
        }
        if pinsTail {
            let pin = try context.insert("Pin")
            try pin.setValue("tail", forKey: "name")
            try pin.setObject(previous, forKey: "node")
        }
        try await context.save()
        return store
    }

    /// An import that gives list 1 another head prunes the old chain, 30,000 nodes deep (the recursive walk overflowed at about 6,000), without
    /// overflowing the stack: all of it goes, as the mapping says (replace of a cascade).
    @Test func aDeepChainOfOwnedObjectsIsPrunedWhole() async throws {
        let model = try Self.chainModel()
        let length = 30_000
        let store = try await Self.chain(model, length: length, pinsTail: false)
        let result = try await store.importJSON(
            MapperFixtures.bytes(#"{"id": 1, "head": {"name": "fresh"}}"#), into: "List", mapping: try Mapping(model: model))
        #expect(result.deleted == length, "deleted \(result.deleted)")
        let view = store.viewContext
        #expect(try view.count(FetchRequest("Node")) == 1)
        #expect(try view.one("List", "id", 1)?.object(forKey: "head")?.value(forKey: "name", as: String.self) == "fresh")
    }

    /// The same chain with a pin (no inverse) on its last node: the whole chain is held, so
    /// nothing goes; the head is only unlinked.
    @Test func aDeepChainHeldAtItsEndIsKept() async throws {
        let model = try Self.chainModel()
        let length = 30_000
        let store = try await Self.chain(model, length: length, pinsTail: true)
        let result = try await store.importJSON(
            MapperFixtures.bytes(#"{"id": 1, "head": {"name": "fresh"}}"#), into: "List", mapping: try Mapping(model: model))
        #expect(result.deleted == 0, "deleted \(result.deleted)")
        let view = store.viewContext
        #expect(try view.count(FetchRequest("Node")) == length + 1)
        let pin = try #require(try view.one("Pin", "name", "tail"))
        #expect(try pin.object(forKey: "node")?.value(forKey: "name", as: String.self) == "n\(length - 1)")
    }

    /// Nested records as deep as the JSON scanner allows (one object per level, up to
    /// ``JSONScanner/defaultMaximumDepth``) import, re-import unchanged and are pruned: the
    /// recursion over nested records is bounded by the scanner's limit. One level deeper is
    /// refused as invalid JSON naming the record and the byte, never a crash.
    @Test func nestedRecordsAsDeepAsTheReaderAllows() async throws {
        let model = try Self.chainModel()
        let mapping = try Mapping(model: model)
        let store = Store(inMemory: model)
        /// A list and `depth - 1` nodes, each nested in the one before: `depth` objects deep.
        func nested(_ depth: Int) -> [UInt8] {
            // {"id": 1, "head": {"name": "n0", "next": {"name": "n1", "next": … {"name": "nK"}}}}
            var text = #"{"id": 1, "head": "#
            for index in 0..<depth - 2 { text += #"{"name": "n\#(index)", "next": "# }
            text += #"{"name": "last"}"# + String(repeating: "}", count: depth - 1)
            return Array(text.utf8)
        }
        // A record and 100 levels of records nested in it: each level is a level of recursion.
        let deepest = 101
        let first = try await store.importJSON(nested(deepest), into: "List", mapping: mapping)
        #expect(first.inserted == deepest, "inserted \(first.inserted)")
        let again = try await store.importJSON(nested(deepest), into: "List", mapping: mapping)
        #expect(again.inserted == 0 && again.updated == 0 && again.deleted == 0, "\(again)")
        let pruned = try await store.importJSON(MapperFixtures.bytes(#"{"id": 1, "head": null}"#), into: "List", mapping: mapping)
        #expect(pruned.deleted == deepest - 1, "deleted \(pruned.deleted)")
        #expect(try store.viewContext.count(FetchRequest("Node")) == 0)
        for depth in [deepest + 1, JSONScanner.defaultMaximumDepth] {
            do {
                _ = try await store.importJSON(nested(depth), into: "List", mapping: mapping)
                Issue.record("records nested \(depth) deep were accepted")
            } catch let error as MappingError {
                #expect(
                    error.code == .unexpectedShape && error.message.contains("nest more than 100")
                        && error.path == "$[0].head" + String(repeating: ".next", count: 100) && error.offset != nil, "\(error)")
            }
        }
        #expect(try store.viewContext.count(FetchRequest("Node")) == 0)
    }

    /// Characters owning items (replace of a cascade: pruned), and favourites: a relationship
    /// without an inverse that holds an item too.
    static func favouritesModel() throws -> Model {
        try Model {
            Entity("Character") {
                Attribute("id", .integer64)
                Relationship("favorite", to: "Item")  // no inverse
                Relationship("items", to: "Item", inverse: "owner", .toMany(ordered: false), deleteRule: .cascade)
                Unique("id")
            }
            Entity("Item") {
                Attribute("code", .string)
                Attribute("label", .string)
                Relationship("owner", to: "Character", inverse: "items")
                Unique("code")
            }
        }
    }

    /// A link without an inverse that an earlier record of the same import made (after the
    /// import first asked who holds what) keeps the item it names; one an earlier record undid
    /// no longer keeps it.
    @Test func linksMadeEarlierInTheSameImportAreSeen() async throws {
        let model = try Self.favouritesModel()
        let mapping = try Mapping(model: model)
        let store = Store(inMemory: model)
        let setup = #"""
            [{"id": 1, "items": [{"code": "X", "label": "x"}]},
             {"id": 2, "items": [{"code": "Y", "label": "y"}]},
             {"id": 3},
             {"id": 4, "items": [{"code": "Z", "label": "z"}]},
             {"id": 5, "favorite": "W"},
             {"id": 6, "items": [{"code": "W", "label": "w"}]}]
            """#
        _ = try await store.importJSON(MapperFixtures.bytes(setup), into: "Character", mapping: mapping)
        let view = store.viewContext
        let y = try #require(try view.one("Item", "code", "Y")).objectID
        let z = try #require(try view.one("Item", "code", "Z")).objectID
        let w = try #require(try view.one("Item", "code", "W")).objectID
        let update = #"""
            [{"id": 1, "items": [{"code": "X", "label": "x2"}]},
             {"id": 3, "favorite": "Y"},
             {"id": 2, "items": [{"code": "Y", "label": "y2"}]},
             {"id": 3, "favorite": "Z"},
             {"id": 4, "items": []},
             {"id": 5, "favorite": null},
             {"id": 6, "items": []}]
            """#
        // Record 1 replaces X (nothing holds it): the import asks who holds what before record 2
        // makes character 3 hold Y, record 3 replaces Y's values, record 4 makes character 3 hold
        // Z, which record 5 gives up; W loses its favourite (record 6) before it is given up.
        let result = try await store.importJSON(MapperFixtures.bytes(update), into: "Character", mapping: mapping)
        #expect(result.deleted == 2, "X replaced and W pruned: deleted \(result.deleted)")
        #expect(view.object(with: y) != nil, "Y is held by a favourite: updated in place, never replaced")
        #expect(try view.object(with: y)?.value(forKey: "label", as: String.self) == "y2")
        #expect(view.object(with: z) != nil, "Z is held by a favourite made by an earlier record")
        #expect(try view.one("Character", "id", 3)?.object(forKey: "favorite")?.objectID == z)
        #expect(view.object(with: w) == nil, "W is held by nothing once its favourite is cleared")
        #expect(try view.count(FetchRequest("Item", predicate: .equal("code", "Y"))) == 1)
    }

    /// An import that prunes 5,000 owned items while 250 favourites (no inverse) hold one item
    /// in twenty: the held ones stay, the others go.
    @Test func pruningManyObjectsWithARelationshipWithoutInverse() async throws {
        let model = try Self.favouritesModel()
        let mapping = try Mapping(model: model)
        let store = Store(inMemory: model)
        let count = 5_000
        let holders = 250
        let spacing = count / holders
        var records: [String] = []
        for index in 0..<count { records.append(#"{"id": \#(index), "items": [{"code": "c\#(index)"}]}"#) }
        for index in 0..<holders { records.append(#"{"id": \#(count + index), "favorite": "c\#(index * spacing)"}"#) }
        _ = try await store.importJSON(MapperFixtures.bytes("[" + records.joined(separator: ",\n") + "]"), into: "Character", mapping: mapping)
        let prune = (0..<count).map { #"{"id": \#($0), "items": []}"# }.joined(separator: ",\n")
        let started = ContinuousClock.now
        let result = try await store.importJSON(MapperFixtures.bytes("[" + prune + "]"), into: "Character", mapping: mapping)
        print("pruning \(count) items with \(holders) favourites took \(ContinuousClock.now - started)")
        #expect(result.deleted == count - holders, "deleted \(result.deleted)")
        let view = store.viewContext
        #expect(try view.count(FetchRequest("Item")) == holders)
        for index in stride(from: 0, to: count, by: spacing) {
            #expect(try view.one("Item", "code", .string("c\(index)")) != nil, "c\(index) is held by a favourite")
        }
    }

    /// A link the after-import hook makes through a relationship without an inverse keeps the
    /// object it names, though the guard had made its table of holders before the hook ran.
    @Test func anObjectTheHookLinksIsKept() async throws {
        let model = try Self.favouritesModel()
        let mapping = try Mapping(model: model)
        let store = Store(inMemory: model)
        _ = try await store.importJSON(MapperFixtures.bytes(#"[{"id": 1, "items": [{"code": "old"}]}, {"id": 2}]"#), into: "Character", mapping: mapping)
        var options = ImportOptions()
        options.afterImport = { object in
            guard object["id"] == .integer(1), let context = object.context, let old = try context.one("Item", "code", "old"),
                let other = try context.one("Character", "id", 2)
            else { return }
            try other.setObject(old, forKey: "favorite")
        }
        let result = try await store.importJSON(
            MapperFixtures.bytes(#"[{"id": 1, "items": [{"code": "new"}]}]"#), into: "Character", mapping: mapping, options: options)
        #expect(result.deleted == 0, "\(result)")
        let kept = try #require(try store.viewContext.one("Item", "code", "old"))
        #expect(try store.viewContext.one("Character", "id", 2)?.object(forKey: "favorite") == kept)
    }
}
