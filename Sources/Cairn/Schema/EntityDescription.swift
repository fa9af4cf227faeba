/// An entity as a model resolved it: inherited properties included, relationships linked to
/// their destinations and inverses, positions fixed for encoding.
public final class EntityDescription: Sendable, CustomStringConvertible {
    /// The position of the entity in ``Model/entities`` (sorted by name).
    public let index: Int
    /// The entity as declared.
    public let entity: Entity
    /// All attributes, inherited ones first (the parent's order, then this entity's).
    public let attributes: [Attribute]
    /// All relationships, inherited ones first.
    public let relationships: [Relationship]
    /// The parent's index.
    public let parentIndex: Int?
    /// Every entity below this one, at any depth.
    public let descendants: [Int]
    /// Uniqueness constraints that apply to this entity (its own and its ancestors'), as
    /// attribute positions, each named by the entity that declared it.
    public let uniqueness: [UniquenessConstraint]
    /// For each relationship, the destination entity's index and the inverse's position there.
    let destinations: [Int]
    let inverses: [Int?]
    let attributePositions: NameTable
    /// Positions of attributes that belong to a uniqueness constraint.
    let uniquePositions: Set<Int>
    /// Per property position, whether it belongs to a uniqueness constraint (a set lookup
    /// without hashing, for every attribute set on an object).
    let isConstrained: [Bool]
    /// The values of a new object: each attribute's default (or nil), relationships empty (one
    /// array shared by every new object until it is first changed).
    let newObjectValues: [PropertyValue]
    /// Each attribute's default value (nil when it has none), by position.
    let attributeDefaults: [Value]
    /// Positions of the attributes a saved object must have a value for (neither optional nor
    /// transient), and of the transient ones: checked for every object saved, without copying
    /// each ``Attribute`` (its names and dictionaries) on the way.
    let requiredPositions: [Int]
    let transientPositions: [Int]
    /// Per attribute position, whether it is among ``requiredPositions``.
    let isRequired: [Bool]
    /// Per property position, whether a save validates a change to it: a required attribute
    /// (set to nil) or a relationship (its count). Changes to other properties cannot break the
    /// model's rules.
    let isValidated: [Bool]
    /// Whether `changes` change a property a save validates (``isValidated``).
    func validates(_ changes: PropertyChanges) -> Bool { changes.containsPosition { isValidated[$0] } }
    /// This entity and its descendants (the entities a fetch or a constraint of it covers).
    package let family: Set<Int>
    /// Every property's name by position: attributes, then relationships (one array, shared by
    /// every history change that lists an inserted object's values).
    package let propertyNames: [String]
    /// What each property may hold, in a form cheap to check at replay (no strings to retain).
    let storedKinds: [StoredKind]
    let relationshipPositions: NameTable

    init(
        index: Int, entity: Entity, attributes: [Attribute], relationships: [Relationship], parentIndex: Int?,
        descendants: [Int], uniqueness: [UniquenessConstraint], destinations: [Int], inverses: [Int?]
    ) {
        self.index = index
        self.entity = entity
        self.attributes = attributes
        self.relationships = relationships
        self.propertyNames = attributes.map(\.name) + relationships.map(\.name)
        self.parentIndex = parentIndex
        self.descendants = descendants
        self.uniqueness = uniqueness
        self.destinations = destinations
        self.inverses = inverses
        uniquePositions = Set(uniqueness.flatMap(\.positions))
        isConstrained = (0..<(attributes.count + relationships.count)).map(uniquePositions.contains)
        let isRequired = attributes.map { !$0.isOptional && !$0.isTransient }
        self.isRequired = isRequired
        isValidated = isRequired + relationships.map { _ in true }
        requiredPositions = isRequired.indices.filter { isRequired[$0] }
        transientPositions = attributes.indices.filter { attributes[$0].isTransient }
        attributeDefaults = attributes.map { $0.defaultValue ?? .null }
        newObjectValues =
            attributeDefaults.map(PropertyValue.attribute)
            + relationships.map { $0.isToMany ? PropertyValue.toMany([]) : .toOne(nil) }
        family = Set([index] + descendants)
        storedKinds =
            attributes.map { StoredKind(attribute: $0.type) }
            + relationships.indices.map { StoredKind.relationship(toMany: relationships[$0].isToMany, destination: destinations[$0]) }
        attributePositions = NameTable(attributes.map(\.name))
        relationshipPositions = NameTable(relationships.map(\.name))
    }

    /// The entity's name.
    public var name: String { entity.name }
    /// Whether objects of exactly this entity can exist.
    public var isAbstract: Bool { entity.isAbstract }
    /// The number of properties (attributes then relationships) a record of this entity holds.
    public var propertyCount: Int { attributes.count + relationships.count }

    /// The position of an attribute.
    public func attributePosition(_ name: String) -> Int? { attributePositions.position(name) }
    /// Whether `name` is a composite attribute (whose elements are stored as `name.element`).
    public func isComposite(_ name: String) -> Bool {
        let prefix = name + "."
        return attributePosition(name) == nil && attributes.contains { $0.name.hasPrefix(prefix) }
    }

    /// The positions of a composite attribute's elements, with their key paths from it
    /// (`latitude`, or `point.x` for a nested composite), in order; empty when `name` is not one.
    public func compositeElements(_ name: String) -> [(path: String, position: Int)] {
        let prefix = name + "."
        return attributes.indices.compactMap { position in
            let full = attributes[position].name
            return full.hasPrefix(prefix) ? (String(full.dropFirst(prefix.count)), position) : nil
        }
    }

    /// The position of a relationship.
    public func relationshipPosition(_ name: String) -> Int? { relationshipPositions.position(name) }

    /// The uniqueness constraint made of this one attribute alone, if there is one.
    func uniqueness(ofAttribute position: Int) -> UniquenessConstraint? {
        uniqueness.first { $0.positions.count == 1 && $0.positions[0] == position }
    }

    /// The uniqueness constraint on exactly these attributes (in any order), if any.
    package func uniqueness(coveringExactly positions: [Int]) -> UniquenessConstraint? {
        guard !positions.isEmpty else { return nil }
        return uniqueness.first { $0.positions.count == positions.count && Set($0.positions) == Set(positions) }
    }

    /// The entity's name.
    public var description: String { name }
}

/// A set of attributes whose values no two objects of an entity hierarchy may share.
public struct UniquenessConstraint: Sendable, Hashable {
    /// The entity that declared it (objects of it and of its descendants are checked together).
    public var owner: Int
    /// Its number among the owner's constraints.
    public var number: Int
    /// The attributes' positions (the same in the owner and all its descendants).
    public var positions: [Int]
    /// The attributes' names.
    public var names: [String]
}
