/// Builds the entities of a ``Model`` from a list.
@resultBuilder
public enum ModelBuilder {
    public static func buildExpression(_ entity: Entity) -> [Entity] { [entity] }
    public static func buildBlock(_ parts: [Entity]...) -> [Entity] { parts.flatMap { $0 } }
    public static func buildArray(_ parts: [[Entity]]) -> [Entity] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [Entity]?) -> [Entity] { part ?? [] }
    public static func buildEither(first part: [Entity]) -> [Entity] { part }
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
    case attribute(Attribute)
    case relationship(Relationship)
    case unique(Unique)
}

/// Builds the members of an entity from a list.
@resultBuilder
public enum EntityBuilder {
    public static func buildExpression(_ attribute: Attribute) -> [EntityMember] { [.attribute(attribute)] }
    public static func buildExpression(_ relationship: Relationship) -> [EntityMember] { [.relationship(relationship)] }
    public static func buildExpression(_ unique: Unique) -> [EntityMember] { [.unique(unique)] }
    public static func buildBlock(_ parts: [EntityMember]...) -> [EntityMember] { parts.flatMap { $0 } }
    public static func buildArray(_ parts: [[EntityMember]]) -> [EntityMember] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [EntityMember]?) -> [EntityMember] { part ?? [] }
    public static func buildEither(first part: [EntityMember]) -> [EntityMember] { part }
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
