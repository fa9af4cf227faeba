/// How one entity's objects read from and write to JSON: its unique key, and the maps of the
/// properties whose JSON differs from the default. Properties without a map use the key the
/// model's userInfo gives them, else the default key (their name, in the mapping's ``KeyStyle``).
///
/// ```swift
/// EntityMapping("Person", identity: "ticket") {
///     AttributeMap("ticket", from: "ticket_number")
///     AttributeMap("salary", from: "pay.salary", "salary")
///     RelationshipMap("employer", from: "employer_id")
///     Ignore("notes")
/// }
/// ```
public struct EntityMapping: Sendable, Hashable {
    /// The entity's name.
    public var entity: String
    /// The attributes whose values form the unique key by which an import finds an existing
    /// object (a compound key when more than one). nil: the model's userInfo, else the entity's
    /// uniqueness constraint, else an `<entity>ID` attribute; empty: no key (every record inserts).
    public var identity: [String]?
    /// The attribute maps.
    public var attributes: [AttributeMap]
    /// The relationship maps.
    public var relationships: [RelationshipMap]
    /// Properties never read or written.
    public var ignored: [String]
    /// Whether properties without a map are read and written (by their default key). On by
    /// default; off, only the mapped properties (and the identity) are.
    public var mapsUnlisted: Bool
    /// The date format of this entity's date attributes that have none of their own.
    public var dateFormat: DateFormat?
    /// The key style of this entity's default keys (nil: the mapping's).
    public var keyStyle: KeyStyle?
    /// Picks each record's entity, this one or one of its sub-entities, by a type field
    /// (`"type": "car"` → `Car`); nil: every record is an object of this entity (or of the
    /// sub-entity Groot's `entityMapperName` picks).
    public var discriminator: EntityDiscriminator?

    /// Describes the mapping of `entity`.
    public init(
        _ entity: String, identity: [String]? = nil, dateFormat: DateFormat? = nil, keyStyle: KeyStyle? = nil, mapsUnlisted: Bool = true,
        discriminator: EntityDiscriminator? = nil, @EntityMappingBuilder _ maps: () -> [any PropertyMapComponent] = { [] }
    ) {
        self.entity = entity
        self.discriminator = discriminator
        self.identity = identity
        self.dateFormat = dateFormat
        self.keyStyle = keyStyle
        self.mapsUnlisted = mapsUnlisted
        var attributes: [AttributeMap] = []
        var relationships: [RelationshipMap] = []
        var ignored: [String] = []
        for component in maps() {
            switch component {
            case let map as AttributeMap: attributes.append(map)
            case let map as RelationshipMap: relationships.append(map)
            case let ignore as Ignore: ignored.append(contentsOf: ignore.properties)
            default: break
            }
        }
        self.attributes = attributes
        self.relationships = relationships
        self.ignored = ignored
    }

    /// Describes the mapping of `entity`, keyed by one attribute.
    public init(
        _ entity: String, identity: String, dateFormat: DateFormat? = nil, keyStyle: KeyStyle? = nil, mapsUnlisted: Bool = true,
        discriminator: EntityDiscriminator? = nil, @EntityMappingBuilder _ maps: () -> [any PropertyMapComponent] = { [] }
    ) {
        self.init(
            entity, identity: [identity], dateFormat: dateFormat, keyStyle: keyStyle, mapsUnlisted: mapsUnlisted, discriminator: discriminator, maps)
    }
}

/// What an ``EntityMapping``'s builder holds: ``AttributeMap``, ``RelationshipMap`` or ``Ignore``.
public protocol PropertyMapComponent: Sendable {}
extension AttributeMap: PropertyMapComponent {}
extension RelationshipMap: PropertyMapComponent {}

/// Properties an import never sets and an export never writes.
public struct Ignore: PropertyMapComponent, Hashable {
    /// Their names.
    public var properties: [String]
    /// Ignores the properties named.
    public init(_ properties: String...) { self.properties = properties }
}

/// Collects the maps of an ``EntityMapping``.
@resultBuilder
public enum EntityMappingBuilder {
    /// A line of the entity mapping.
    public static func buildExpression(_ component: any PropertyMapComponent) -> [any PropertyMapComponent] { [component] }
    /// The lines, in order.
    public static func buildBlock(_ parts: [any PropertyMapComponent]...) -> [any PropertyMapComponent] { parts.flatMap { $0 } }
    /// The lines of an `if` without `else`, or none.
    public static func buildOptional(_ part: [any PropertyMapComponent]?) -> [any PropertyMapComponent] { part ?? [] }
    /// The lines of an `if` branch.
    public static func buildEither(first part: [any PropertyMapComponent]) -> [any PropertyMapComponent] { part }
    /// The lines of an `else` branch.
    public static func buildEither(second part: [any PropertyMapComponent]) -> [any PropertyMapComponent] { part }
    /// The lines of a `for` loop, in order.
    public static func buildArray(_ parts: [[any PropertyMapComponent]]) -> [any PropertyMapComponent] { parts.flatMap { $0 } }
}

/// Collects the entity mappings of a ``Mapping``.
@resultBuilder
public enum MappingBuilder {
    /// An entity mapping.
    public static func buildExpression(_ mapping: EntityMapping) -> [EntityMapping] { [mapping] }
    /// The entity mappings, in order.
    public static func buildBlock(_ parts: [EntityMapping]...) -> [EntityMapping] { parts.flatMap { $0 } }
    /// The entity mappings of an `if` without `else`, or none.
    public static func buildOptional(_ part: [EntityMapping]?) -> [EntityMapping] { part ?? [] }
    /// The entity mappings of an `if` branch.
    public static func buildEither(first part: [EntityMapping]) -> [EntityMapping] { part }
    /// The entity mappings of an `else` branch.
    public static func buildEither(second part: [EntityMapping]) -> [EntityMapping] { part }
    /// The entity mappings of a `for` loop, in order.
    public static func buildArray(_ parts: [[EntityMapping]]) -> [EntityMapping] { parts.flatMap { $0 } }
}
