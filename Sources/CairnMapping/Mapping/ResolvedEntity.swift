import Cairn

/// One attribute's mapping as it applies: where its JSON is, and how its value is read. A class:
/// the importer hands it around once per value, and a struct of this size would be copied
/// (and its references retained) each time.
final class ResolvedAttribute: Sendable {
    /// The attribute's name and position in the entity.
    let name: String
    let position: Int
    let type: AttributeType
    /// Key paths, each split at its dots, in order of precedence.
    let keyPaths: [[String]]
    let dateFormat: DateFormat
    /// The compiled pattern of a `.pattern` date format.
    let datePattern: DatePattern?
    /// The transformer's name and the transformer (nil when none is registered under that name;
    /// a value that needs it is then an error).
    let transformerName: String?
    let transformer: (any MappingTransformer)?
    let coercesText: Bool

    init(
        name: String, position: Int, type: AttributeType, keyPaths: [[String]], dateFormat: DateFormat, datePattern: DatePattern?,
        transformerName: String?, transformer: (any MappingTransformer)?, coercesText: Bool
    ) {
        self.name = name
        self.position = position
        self.type = type
        self.keyPaths = keyPaths
        self.dateFormat = dateFormat
        self.datePattern = datePattern
        self.transformerName = transformerName
        self.transformer = transformer
        self.coercesText = coercesText
    }
}

/// One relationship's mapping as it applies.
final class ResolvedRelationship: Sendable {
    let name: String
    /// Its index among the entity's relationships, and its property position.
    let index: Int
    let position: Int
    let keyPaths: [[String]]
    let policy: RelationshipPolicy
    let destination: Int
    let isToMany: Bool
    let isOrdered: Bool
    /// The destination's attributes a reference by key names (nil: the destination's identity).
    let relatedBy: [Int]?

    init(
        name: String, index: Int, position: Int, keyPaths: [[String]], policy: RelationshipPolicy, destination: Int, isToMany: Bool,
        isOrdered: Bool, relatedBy: [Int]?
    ) {
        self.name = name
        self.index = index
        self.position = position
        self.keyPaths = keyPaths
        self.policy = policy
        self.destination = destination
        self.isToMany = isToMany
        self.isOrdered = isOrdered
        self.relatedBy = relatedBy
    }
}

/// An entity's mapping as it applies: declared maps, userInfo and default keys resolved.
final class ResolvedEntity: Sendable {
    let description: EntityDescription
    let attributes: [ResolvedAttribute]
    let relationships: [ResolvedRelationship]
    /// Positions of the unique key's attributes (empty: no key).
    let identity: [Int]
    /// Where the unique key came from, for ``summary``.
    let identitySource: String
    /// The entity whose family the unique key is unique across: this one, or the ancestor that
    /// declared it (keys are inherited as Core Data inherits uniqueness constraints).
    let keyScope: Int
    /// The mapper that picks each record's entity (this one or a sub-entity), by its name.
    let entityMapper: (name: String, mapper: EntityMappers.Mapper)?
    /// The declared discriminator that picks each record's entity (this one or a sub-entity) by
    /// a type field.
    let discriminator: ResolvedDiscriminator?
    /// Whether an attribute has more than one key path (so that records track which one won).
    let hasFallbacks: Bool
    /// Why this entity's records cannot be read as its userInfo asks (a key Cairn reads but
    /// cannot honour, an entity mapper nobody registered): thrown by ``Mapping/entity(_:)`` and
    /// by every record of the entity, so that an import or export of another entity of the same
    /// model is not held up by it, and none of this entity's records is read another way.
    let unhonoured: MappingError?

    init(
        description: EntityDescription, attributes: [ResolvedAttribute], relationships: [ResolvedRelationship], identity: [Int], identitySource: String,
        keyScope: Int, entityMapper: (name: String, mapper: EntityMappers.Mapper)?, discriminator: ResolvedDiscriminator? = nil,
        unhonoured: MappingError? = nil
    ) {
        self.discriminator = discriminator
        self.description = description
        self.attributes = attributes
        self.relationships = relationships
        self.identity = identity
        self.identitySource = identitySource
        self.keyScope = keyScope
        self.entityMapper = entityMapper
        self.unhonoured = unhonoured
        hasFallbacks = attributes.contains { $0.keyPaths.count > 1 }
    }

    var name: String { description.name }

    /// A readable account of the mapping.
    var summary: String {
        var lines = [
            "\(name): unique key \(identity.isEmpty ? "none" : identity.map { description.attributes[$0].name }.joined(separator: ", ")) (\(identitySource))"
        ]
        for attribute in attributes {
            var line = "  \(attribute.name) ← " + attribute.keyPaths.map { $0.joined(separator: ".") }.joined(separator: " | ")
            if attribute.type == .date { line += " [date \(attribute.dateFormat)]" }
            if let name = attribute.transformerName { line += " [transformer \(name)]" }
            lines.append(line)
        }
        for relationship in relationships {
            lines.append(
                "  \(relationship.name) ← " + relationship.keyPaths.map { $0.joined(separator: ".") }.joined(separator: " | ")
                    + " [\(relationship.policy.rawValue)]")
        }
        return lines.joined(separator: "\n")
    }
}
