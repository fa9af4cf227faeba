/// Builds the entities of a ``Model`` from a list.
@resultBuilder
public enum ModelBuilder {
    /// An entity of the list.
    public static func buildExpression(_ entity: Entity) -> [Entity] { [entity] }
    /// The entities of the lines, in order.
    public static func buildBlock(_ parts: [Entity]...) -> [Entity] { parts.flatMap { $0 } }
    /// The entities of a `for` loop, in order.
    public static func buildArray(_ parts: [[Entity]]) -> [Entity] { parts.flatMap { $0 } }
    /// The entities of an `if` without `else`, or none.
    public static func buildOptional(_ part: [Entity]?) -> [Entity] { part ?? [] }
    /// The entities of an `if` branch.
    public static func buildEither(first part: [Entity]) -> [Entity] { part }
    /// The entities of an `else` branch.
    public static func buildEither(second part: [Entity]) -> [Entity] { part }
}

/// A uniqueness constraint in an ``Entity`` block: no two objects may share these values.
public struct Unique: Sendable {
    /// The attributes' names.
    public var attributes: [String]
    /// A constraint on one or more attributes (compound when several).
    public init(_ attributes: String...) { self.attributes = attributes }
}

/// One line of an ``Entity`` block.
public enum EntityMember: Sendable {
    /// An attribute.
    case attribute(Attribute)
    /// A relationship.
    case relationship(Relationship)
    /// A uniqueness constraint.
    case unique(Unique)
}

/// Builds the members of an entity from a list.
@resultBuilder
public enum EntityBuilder {
    /// A member of the entity: an attribute, a relationship or a uniqueness constraint.
    public static func buildExpression(_ attribute: Attribute) -> [EntityMember] { [.attribute(attribute)] }
    /// A member of the entity: an attribute, a relationship or a uniqueness constraint.
    public static func buildExpression(_ relationship: Relationship) -> [EntityMember] { [.relationship(relationship)] }
    /// A member of the entity: an attribute, a relationship or a uniqueness constraint.
    public static func buildExpression(_ unique: Unique) -> [EntityMember] { [.unique(unique)] }
    /// The members of the lines, in order.
    public static func buildBlock(_ parts: [EntityMember]...) -> [EntityMember] { parts.flatMap { $0 } }
    /// The members of a `for` loop, in order.
    public static func buildArray(_ parts: [[EntityMember]]) -> [EntityMember] { parts.flatMap { $0 } }
    /// The members of an `if` without `else`, or none.
    public static func buildOptional(_ part: [EntityMember]?) -> [EntityMember] { part ?? [] }
    /// The members of an `if` branch.
    public static func buildEither(first part: [EntityMember]) -> [EntityMember] { part }
    /// The members of an `else` branch.
    public static func buildEither(second part: [EntityMember]) -> [EntityMember] { part }
}

extension Entity {
    /// Describes an entity with the result-builder syntax.
    public init(
        _ name: String, parent: String? = nil, abstract: Bool = false, userInfo: [String: String] = [:],
        @EntityBuilder _ members: () -> [EntityMember]
    ) {
        self.init(name, parent: parent, abstract: abstract, userInfo: userInfo)
        for member in members() {
            switch member {
            case .attribute(let attribute): attributes.append(attribute)
            case .relationship(let relationship): relationships.append(relationship)
            case .unique(let unique): uniquenessConstraints.append(unique.attributes)
            }
        }
    }
}
