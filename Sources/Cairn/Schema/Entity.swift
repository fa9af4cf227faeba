/// A kind of object: its attributes, relationships and uniqueness constraints.
public struct Entity: Sendable, Hashable {
    /// The entity's name, unique in the model.
    public var name: String
    /// The entity it inherits attributes and relationships from.
    public var parent: String?
    /// Whether objects of exactly this entity can exist (false: only of its sub-entities).
    public var isAbstract: Bool
    /// Attributes declared here (inherited ones are not repeated).
    public var attributes: [Attribute]
    /// Relationships declared here.
    public var relationships: [Relationship]
    /// Sets of attribute names whose values no two objects may share (across the entity and
    /// its sub-entities).
    public var uniquenessConstraints: [[String]]
    /// Free-form metadata.
    public var userInfo: [String: String]
    /// Compound indexes for fetching (Xcode's fetch indexes), by name.
    public var fetchIndexes: [FetchIndex]
    /// The entity's name in an earlier model version (see ``Attribute/renamingIdentifier``).
    public var renamingIdentifier: String?
    /// An identifier that stays the same across model versions (see ``Attribute/elementID``).
    public var elementID: String?

    /// Describes an entity.
    public init(
        _ name: String, parent: String? = nil, abstract: Bool = false, attributes: [Attribute] = [],
        relationships: [Relationship] = [], uniquenessConstraints: [[String]] = [], userInfo: [String: String] = [:],
        fetchIndexes: [FetchIndex] = [], renamingIdentifier: String? = nil, elementID: String? = nil
    ) {
        self.name = name
        self.parent = parent
        self.isAbstract = abstract
        self.attributes = attributes
        self.relationships = relationships
        self.uniquenessConstraints = uniquenessConstraints
        self.userInfo = userInfo
        self.fetchIndexes = fetchIndexes
        self.renamingIdentifier = renamingIdentifier
        self.elementID = elementID
    }
}

/// An index over one or more attributes of an entity, in order (Xcode's fetch index).
public struct FetchIndex: Sendable, Hashable {
    /// One attribute of the index and its direction.
    public struct Element: Sendable, Hashable {
        /// The attribute's name.
        public var attribute: String
        /// Ascending (true) or descending.
        public var ascending: Bool

        /// An element of an index.
        public init(_ attribute: String, ascending: Bool = true) {
            self.attribute = attribute
            self.ascending = ascending
        }
    }

    /// The index's name, unique in its entity.
    public var name: String
    /// Its attributes, most significant first.
    public var elements: [Element]

    /// Describes an index.
    public init(_ name: String, _ elements: [Element]) {
        self.name = name
        self.elements = elements
    }
}
