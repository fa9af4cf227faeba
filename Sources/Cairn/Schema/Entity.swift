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

    /// Describes an entity.
    public init(_ name: String, parent: String? = nil, abstract: Bool = false, attributes: [Attribute] = [],
                relationships: [Relationship] = [], uniquenessConstraints: [[String]] = [], userInfo: [String: String] = [:]) {
        self.name = name
        self.parent = parent
        self.isAbstract = abstract
        self.attributes = attributes
        self.relationships = relationships
        self.uniquenessConstraints = uniquenessConstraints
        self.userInfo = userInfo
    }
}
