/// How the objects of a store written with one model become objects of the next model: which
/// entity and property each comes from, and what fills what is new. Inferred from the two
/// models alone (Core Data's lightweight migration) when a store is opened with a new model,
/// then kept in the migration record (MigrationPlan+Codec.swift), which replay follows as it is.
///
/// Matching, for entities and then for each entity's properties (inherited ones included): a
/// new element matches the old one whose renaming identifier or element ID is one of its own,
/// else the old one its ``Attribute/renamingIdentifier`` or ``Attribute/elementID`` names (Xcode
/// saves the inspector's "Renaming ID" as `elementID`), else the one with the same name.
///
/// What can be inferred: entities and properties added (attributes optional or with a default,
/// or on entities without objects), removed or renamed; optional ↔ required (nils take the
/// default, or there must be none); stored ↔ transient; integers of another width (every value
/// must fit); to-one → to-many, ordered ↔ unordered, to-many → to-one (at most one object
/// each); a new relationship whose inverse existed (filled from it); changes of indexes, delete
/// rules, counts, uniqueness constraints, abstractness and parents that the data satisfies.
/// Everything else — a type change, a relationship pointing elsewhere — is refused with one line
/// per change.
struct MigrationPlan: Sendable {
    /// Where one property of a new entity takes its values from.
    enum Source: Sendable, Equatable {
        /// The old entity's property at this position.
        case property(Int)
        /// Nothing: every object gets this value (the default, or nil).
        case constant(Value)
        /// A new relationship whose inverse existed: filled by inverting the inverse.
        case inverseOf(entity: Int, position: Int)
        /// A relationship with nothing to fill it.
        case empty
    }

    /// For one new entity.
    struct EntityMapping: Sendable {
        /// The old entity's index, nil for a new entity.
        var source: Int?
        /// Per new property position.
        var properties: [Source]
    }

    let source: Model
    let destination: Model
    /// Per new entity index.
    let entities: [EntityMapping]
    /// Old entity index → new entity index (nil: the entity was removed with its objects).
    let entityMap: [Int?]
    /// The changes that cannot be inferred, one line each (empty when the plan can run).
    let refusals: [String]

    /// A plan read back from a migration record: nothing to refuse, the mapping as recorded.
    init(source: Model, destination: Model, entities: [EntityMapping]) {
        self.source = source
        self.destination = destination
        self.entities = entities
        var entityMap = [Int?](repeating: nil, count: source.entities.count)
        for (new, mapping) in entities.enumerated() { if let old = mapping.source, entityMap.indices.contains(old) { entityMap[old] = new } }
        self.entityMap = entityMap
        refusals = []
    }

    /// Infers the plan; ``refusals`` lists what cannot be inferred.
    init(from source: Model, to destination: Model) {
        self.source = source
        self.destination = destination
        var refusals: [String] = []
        let entityMatch = Self.match(new: destination.entities.map(Self.Identity.init), old: source.entities.map(Self.Identity.init))
        var entityMap = [Int?](repeating: nil, count: source.entities.count)
        for (new, old) in entityMatch.enumerated() { if let old { entityMap[old] = new } }
        var mappings: [EntityMapping] = []
        for (index, new) in destination.descriptions.enumerated() {
            guard let oldIndex = entityMatch[index] else {
                mappings.append(
                    EntityMapping(
                        source: nil,
                        properties: new.attributes.map { .constant($0.defaultValue ?? .null) }
                            + new.relationships.map { _ in .empty }))
                continue
            }
            let old = source.descriptions[oldIndex]
            var properties: [Source] = []
            let attributeMatch = Self.match(new: new.attributes.map(Self.Identity.init), old: old.attributes.map(Self.Identity.init))
            for (position, attribute) in new.attributes.enumerated() {
                guard let oldPosition = attributeMatch[position], !old.attributes[oldPosition].isTransient, !attribute.isTransient else {
                    properties.append(.constant(attribute.defaultValue ?? .null))
                    continue
                }
                let before = old.attributes[oldPosition].type, after = attribute.type
                if before != after && (before.integerRange == nil || after.integerRange == nil) {
                    refusals.append("~ attribute \(new.name).\(attribute.name): type \(before) → \(after) cannot be inferred")
                }
                properties.append(.property(oldPosition))
            }
            let relationshipMatch = Self.match(new: new.relationships.map(Self.Identity.init), old: old.relationships.map(Self.Identity.init))
            for (number, relationship) in new.relationships.enumerated() {
                guard let oldNumber = relationshipMatch[number] else {
                    properties.append(.empty)  // filled from an old inverse below, when there is one
                    continue
                }
                let oldDestination = old.destinations[oldNumber]
                if entityMap[oldDestination] != new.destinations[number] {
                    refusals.append(
                        "~ relationship \(new.name).\(relationship.name): destination \(source.entities[oldDestination].name) → \(relationship.destination) cannot be inferred"
                    )
                }
                properties.append(.property(old.attributes.count + oldNumber))
            }
            mappings.append(EntityMapping(source: oldIndex, properties: properties))
        }
        // A new relationship whose inverse was already there: fill it from the inverse.
        for (index, new) in destination.descriptions.enumerated() {
            for (number, inverse) in new.inverses.enumerated() {
                let position = new.attributes.count + number
                guard mappings[index].properties[position] == .empty, let inverse else { continue }
                let holder = new.destinations[number]
                let inversePosition = destination.descriptions[holder].attributes.count + inverse
                if case .property = mappings[holder].properties[inversePosition] {
                    mappings[index].properties[position] = .inverseOf(entity: holder, position: inversePosition)
                }
            }
        }
        self.refusals = refusals
        self.entities = mappings
        self.entityMap = entityMap
    }

    /// What identifies an entity or property across versions.
    struct Identity {
        var name: String
        var renamingIdentifier: String?
        var elementID: String?
        /// The non-empty identifiers (an empty one names nothing).
        var identifiers: [String] { [renamingIdentifier, elementID].compactMap { $0 }.filter { !$0.isEmpty } }

        init(_ entity: Entity) { (name, renamingIdentifier, elementID) = (entity.name, entity.renamingIdentifier, entity.elementID) }
        init(_ attribute: Attribute) { (name, renamingIdentifier, elementID) = (attribute.name, attribute.renamingIdentifier, attribute.elementID) }
        init(_ relationship: Relationship) {
            (name, renamingIdentifier, elementID) = (relationship.name, relationship.renamingIdentifier, relationship.elementID)
        }
    }

    /// For each new element, the old one it continues (each old one used once): a shared
    /// identifier first, then an identifier naming the old element, then the same name.
    static func match(new: [Identity], old: [Identity]) -> [Int?] {
        var result = [Int?](repeating: nil, count: new.count)
        var used = Set<Int>()
        let rules: [(Identity, Identity) -> Bool] = [
            { !Set($0.identifiers).isDisjoint(with: $1.identifiers) },
            { $0.identifiers.contains($1.name) },
            { $0.name == $1.name }
        ]
        for rule in rules {
            for (index, element) in new.enumerated() where result[index] == nil {
                if let found = old.indices.first(where: { !used.contains($0) && rule(element, old[$0]) }) {
                    result[index] = found
                    used.insert(found)
                }
            }
        }
        return result
    }
}
