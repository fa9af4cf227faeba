import CairnLog
import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// Random pairs of models: a store written with the first and filled with random objects, opened
/// with the second (which drops, adds, narrows and widens at random). Whatever the pair, the
/// store's data is migrated without loss, or the open is refused and the store left as it was,
/// or, with `allowsMigrationThatDropsData`, dropped then and only then.
@Suite struct MigrationLossPropertyTests {
    static let types: [AttributeType] = [.string, .integer16, .integer32, .integer64, .double, .boolean, .date]

    /// A random model of one to three entities; entity 0 and 1 may be linked both ways (the
    /// to-many side ordered or not), and entity 0 may have a sub-entity `E0Sub` of its own.
    static func newer(_ random: inout SeededRandom) throws -> Model {
        let entityCount = Int.random(in: 1...3, using: &random)
        let linked = entityCount > 1 && Bool.random(using: &random)
        let ordered = Bool.random(using: &random)
        var entities: [Entity] = []
        for number in 0..<entityCount {
            let attributes = (0..<Int.random(in: 1...4, using: &random)).map { index in
                Attribute("a\(index)", types.randomElement(using: &random) ?? .string)
            }
            var relationships: [Relationship] = []
            if linked && number == 0 { relationships.append(Relationship("others", to: "E1", inverse: "owner", .toMany(ordered: ordered))) }
            if linked && number == 1 { relationships.append(Relationship("owner", to: "E0", inverse: "others")) }
            entities.append(Entity("E\(number)", attributes: attributes, relationships: relationships))
        }
        if Bool.random(using: &random) {
            entities.append(Entity("E0Sub", parent: "E0", attributes: [Attribute("own", types.randomElement(using: &random) ?? .string)]))
        }
        return try Model(entities)
    }

    /// `model` changed at random: entities or attributes removed, integers resized, attributes
    /// renamed (by renaming identifier), made transient or required (with a default), added;
    /// one side or both of a relationship removed, an ordered one made unordered.
    static func older(than model: Model, _ random: inout SeededRandom) throws -> Model {
        var entities: [Entity] = []
        let removable = model.entities.filter { $0.name != "E0" }
        let removedEntity = !removable.isEmpty && Int.random(in: 0..<4, using: &random) == 0 ? removable.randomElement(using: &random)?.name : nil
        let integers: [AttributeType] = [.integer16, .integer32, .integer64]
        for var entity in model.entities where entity.name != removedEntity {
            entity.attributes = entity.attributes.compactMap { attribute in
                var attribute = attribute
                switch Int.random(in: 0..<9, using: &random) {
                case 0: return nil
                case 1 where attribute.type.integerRange != nil: attribute.type = integers.randomElement(using: &random) ?? .integer64
                case 2:
                    attribute.renamingIdentifier = attribute.name
                    attribute.name = "renamed" + attribute.name
                case 3: attribute.isTransient = true
                case 4 where attribute.type == .string:
                    attribute.isOptional = false
                    attribute.defaultValue = .string("default")
                default: break
                }
                return attribute
            }
            if Bool.random(using: &random) || entity.attributes.isEmpty { entity.attributes.append(Attribute("added" + entity.name, .string)) }
            entity.relationships = entity.relationships.filter { relationship in
                removedEntity != relationship.destination && Int.random(in: 0..<3, using: &random) != 0
            }
            for index in entity.relationships.indices where entity.relationships[index].isOrdered && Bool.random(using: &random) {
                entity.relationships[index].cardinality = .toMany(ordered: false)
            }
            entities.append(entity)
        }
        // A relationship whose inverse went stays, without an inverse.
        let names = Set(entities.flatMap { entity in entity.relationships.map { "\(entity.name).\($0.name)" } })
        for index in entities.indices {
            for number in entities[index].relationships.indices {
                let relationship = entities[index].relationships[number]
                if let inverse = relationship.inverse, !names.contains("\(relationship.destination).\(inverse)") {
                    entities[index].relationships[number].inverse = nil
                }
            }
        }
        return try Model(entities)
    }

    static func randomValue(_ type: AttributeType, _ random: inout SeededRandom) -> Value {
        guard Int.random(in: 0..<3, using: &random) != 0 else { return .null }
        switch type {
        case .string: return .string("s\(Int.random(in: 0..<100, using: &random))")
        case .integer16, .integer32, .integer64:
            let range = type.integerRange ?? -100_000...100_000
            let wide = Int64.random(in: max(range.lowerBound, -100_000)...min(range.upperBound, 100_000), using: &random)
            return .integer(Bool.random(using: &random) ? Int64.random(in: -100...100, using: &random) : wide)
        case .double: return .double(Double(Int.random(in: 0..<1000, using: &random)) / 8)
        case .boolean: return .boolean(Bool.random(using: &random))
        default: return .date(Date(timeIntervalSince1970: Double(Int.random(in: 0..<1_000_000, using: &random))))
        }
    }

    /// Every entity's objects of that entity alone, in key order, each as its stored attribute
    /// values by the name they had in the newer model and its links' count.
    static func contents(_ store: Store, _ model: Model) throws -> [String: [[String: Value]]] {
        var result: [String: [[String: Value]]] = [:]
        for entity in model.entities {
            let objects = try store.viewContext.all(entity.name).filter { $0.entity.name == entity.name }.sorted { $0.objectID.key < $1.objectID.key }
            result[entity.name] = try objects.map { object in
                var values: [String: Value] = [:]
                for attribute in entity.attributes where !attribute.isTransient {
                    values[attribute.renamingIdentifier ?? attribute.name] = object[attribute.name] ?? .null
                }
                for relationship in entity.relationships {
                    let count =
                        relationship.isToMany
                        ? try object.objects(forKey: relationship.name).count : try object.object(forKey: relationship.name) == nil ? 0 : 1
                    values[relationship.name] = .integer(Int64(count))
                }
                return values
            }
        }
        return result
    }

    @Test func aMigrationKeepsEverythingOrIsRefusedOrDropsOnlyWhenAllowed() async throws {
        var random = TestSeed.generator()
        var outcomes: [String: Int] = [:]
        for _ in 0..<80 {
            let folder = TemporaryDirectory()
            let newer = try Self.newer(&random)
            let older = try Self.older(than: newer, &random)
            let store = try Store(at: folder.store(), model: newer)
            let context = store.viewContext
            var objects: [String: [ManagedObject]] = [:]
            for entity in newer.entities {
                for _ in 0..<Int.random(in: 0...4, using: &random) {
                    var values: [String: Value] = [:]
                    for attribute in entity.attributes { values[attribute.name] = Self.randomValue(attribute.type, &random) }
                    objects[entity.name, default: []].append(try context.make(entity.name, values))
                }
            }
            for owned in objects["E1"] ?? [] where Bool.random(using: &random) {
                if let owner = objects["E0"]?.randomElement(using: &random), newer.entities[0].relationships.isEmpty == false {
                    try owned.setObject(owner, forKey: "owner")
                }
            }
            try await context.save()
            let before = try Self.contents(store, newer)
            try await store.close()

            var options = StoreOptions()
            options.modelMismatch = Bool.random(using: &random) ? .migrate : .migrateOrWipe
            do {
                let migrated = try Store(at: folder.store(), model: older, options: options)
                // Migrated without the opt-in: every value and link the store held is still there.
                let after = try Self.contents(migrated, older)
                try await migrated.close()
                for (entity, rows) in before where rows.contains(where: { !$0.isEmpty }) {
                    let kept = try #require(after[entity], "entity \(entity) holding objects was dropped")
                    #expect(kept.count == rows.count)
                    for name in Set(rows.flatMap { $0.filter { $0.value != .null }.keys }) {
                        let isLink = newer.entities.first { $0.name == entity }?.relationships.contains { $0.name == name } == true
                        if isLink { continue }  // links may survive on the inverse's side: counted below
                        // A nil may take the default of an attribute made required (Core Data's rule).
                        let fill = older.entities.first { $0.name == entity }?.attributes.first { ($0.renamingIdentifier ?? $0.name) == name }?.defaultValue
                        let same = zip(rows, kept).allSatisfy { $0[name] == $1[name] || ($0[name] == .null && $1[name] == fill) }
                        #expect(same && rows.count == kept.count, "\(entity).\(name) changed: \(rows.map { $0[name] }) → \(kept.map { $0[name] })")
                    }
                }
                let linksBefore = (before["E1"] ?? []).reduce(0) { $0 + (($1["owner"] == .integer(1)) ? 1 : 0) }
                let linksAfter = max(
                    (after["E1"] ?? []).reduce(0) { $0 + (($1["owner"] == .integer(1)) ? 1 : 0) },
                    (after["E0"] ?? []).reduce(0) { total, row in
                        guard case .integer(let count)? = row["others"] else { return total }
                        return total + Int(count)
                    })
                #expect(linksAfter == linksBefore, "links dropped")
                outcomes["migrated", default: 0] += 1
            } catch let error as StoreError where error.code == .cannotMigrate {
                // Refused: the store is as it was.
                let reopened = try Store(at: folder.store(), model: newer)
                #expect(try Self.contents(reopened, newer) == before)
                try await reopened.close()
                options.modelMismatch = .migrate
                options.allowsMigrationThatDropsData = true
                do {
                    let dropped = try Store(at: folder.store(), model: older, options: options)
                    try await dropped.close()
                    outcomes["dropped when allowed", default: 0] += 1
                } catch let error as StoreError where error.code == .cannotMigrate {
                    // Values that do not fit a narrowed type: refused whatever the app allows.
                    let unchanged = try Store(at: folder.store(), model: newer)
                    #expect(try Self.contents(unchanged, newer) == before)
                    try await unchanged.close()
                    outcomes["refused even when allowed", default: 0] += 1
                }
            }
        }
        // The generator reaches every outcome.
        #expect(outcomes["migrated", default: 0] > 0 && outcomes["dropped when allowed", default: 0] > 0, "\(outcomes)")
    }
}
