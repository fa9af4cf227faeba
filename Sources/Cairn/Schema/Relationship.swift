/// What happens to the objects at the other end when an object is deleted.
public enum DeleteRule: String, Sendable, Hashable, CaseIterable {
    /// Remove the deleted object from the other end (the default).
    case nullify
    /// Delete the objects at the other end too.
    case cascade
    /// Refuse to delete while the other end holds any object.
    case deny
    /// Do nothing; the other end keeps a reference to a deleted object.
    case noAction
}

/// A link from the objects of an entity to objects of another.
public struct Relationship: Sendable, Hashable {
    /// To one object, or to many.
    public enum Cardinality: Sendable, Hashable {
        /// To one object, or none.
        case toOne
        /// To many objects; `ordered` keeps them in the order they were given.
        case toMany(ordered: Bool)
    }

    /// The relationship's name, unique among the entity's properties.
    public var name: String
    /// The entity at the other end.
    public var destination: String
    /// The relationship of the destination that points back (kept in step automatically).
    public var inverse: String?
    /// To one or to many.
    public var cardinality: Cardinality
    /// What deleting an object does to the other end.
    public var deleteRule: DeleteRule
    /// Whether it may be empty.
    public var isOptional: Bool
    /// For to-many: the fewest objects allowed (nil: no bound).
    public var minimumCount: Int?
    /// For to-many: the most objects allowed (nil: no bound).
    public var maximumCount: Int?
    /// Free-form metadata.
    public var userInfo: [String: String]
    /// The relationship's name in an earlier model version (see ``Attribute/renamingIdentifier``).
    public var renamingIdentifier: String?
    /// An identifier that stays the same across model versions (see ``Attribute/elementID``).
    public var elementID: String?

    /// Describes a relationship.
    public init(
        _ name: String, to destination: String, inverse: String? = nil, _ cardinality: Cardinality = .toOne,
        deleteRule: DeleteRule = .nullify, optional: Bool = true, minimumCount: Int? = nil, maximumCount: Int? = nil,
        userInfo: [String: String] = [:], renamingIdentifier: String? = nil, elementID: String? = nil
    ) {
        self.name = name
        self.destination = destination
        self.inverse = inverse
        self.cardinality = cardinality
        self.deleteRule = deleteRule
        self.isOptional = optional
        self.minimumCount = minimumCount
        // A to-one holds one object at most: Xcode's `maxCount="1"` on it says nothing more, and
        // a model that says it equals one that does not.
        self.maximumCount = cardinality == .toOne && maximumCount == 1 ? nil : maximumCount
        self.userInfo = userInfo
        self.renamingIdentifier = renamingIdentifier
        self.elementID = elementID
    }

    /// Whether it holds many objects.
    public var isToMany: Bool { cardinality != .toOne }
    /// Whether it is an ordered to-many relationship.
    public var isOrdered: Bool { cardinality == .toMany(ordered: true) }
}
