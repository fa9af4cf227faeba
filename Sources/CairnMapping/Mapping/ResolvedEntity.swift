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
    /// Whether an attribute has more than one key path (so that records track which one won).
    let hasFallbacks: Bool

    init(description: EntityDescription, attributes: [ResolvedAttribute], relationships: [ResolvedRelationship], identity: [Int], identitySource: String) {
        self.description = description
        self.attributes = attributes
        self.relationships = relationships
        self.identity = identity
        self.identitySource = identitySource
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

/// Resolves each entity's mapping: a declared map first, then userInfo, then the default key.
struct MappingResolver {
    let model: Model
    let keyStyle: KeyStyle
    let dateFormat: DateFormat
    let conventions: UserInfoConventions

    init(model: Model, keyStyle: KeyStyle, dateFormat: DateFormat, conventions: UserInfoConventions) {
        self.model = model
        self.keyStyle = keyStyle
        self.dateFormat = dateFormat
        self.conventions = conventions
    }

    mutating func resolve(_ entity: EntityDescription, _ declared: EntityMapping?) throws(MappingError) -> ResolvedEntity {
        let name = entity.name
        let style = declared?.keyStyle ?? keyStyle
        var ignored = Set(declared?.ignored ?? [])
        for property in ignored where entity.attributePosition(property) == nil && entity.relationshipPosition(property) == nil {
            throw MappingError(.unknownName, "the mapping of \(name) ignores \(property), which \(name) does not have", entity: name, property: property)
        }
        var attributeMaps: [String: AttributeMap] = [:]
        for map in declared?.attributes ?? [] {
            guard entity.attributePosition(map.attribute) != nil else {
                let hint = entity.relationshipPosition(map.attribute) != nil ? " (it is a relationship: map it with RelationshipMap)" : ""
                throw MappingError(
                    .unknownName, "the mapping of \(name) maps attribute \(map.attribute), which \(name) does not have\(hint)", entity: name,
                    property: map.attribute)
            }
            guard attributeMaps.updateValue(map, forKey: map.attribute) == nil else {
                throw MappingError(.invalidMapping, "\(name).\(map.attribute) is mapped twice", entity: name, property: map.attribute)
            }
        }
        var relationshipMaps: [String: RelationshipMap] = [:]
        for map in declared?.relationships ?? [] {
            guard entity.relationshipPosition(map.relationship) != nil else {
                let hint = entity.attributePosition(map.relationship) != nil ? " (it is an attribute: map it with AttributeMap)" : ""
                throw MappingError(
                    .unknownName, "the mapping of \(name) maps relationship \(map.relationship), which \(name) does not have\(hint)", entity: name,
                    property: map.relationship)
            }
            guard relationshipMaps.updateValue(map, forKey: map.relationship) == nil else {
                throw MappingError(.invalidMapping, "\(name).\(map.relationship) is mapped twice", entity: name, property: map.relationship)
            }
        }
        let mapsUnlisted = declared?.mapsUnlisted ?? true
        let identity = try resolveIdentity(entity, declared)
        let entityDateFormat = declared?.dateFormat ?? conventions.dateFormat(entity.entity.userInfo) ?? dateFormat

        var attributes: [ResolvedAttribute] = []
        for (position, attribute) in entity.attributes.enumerated() {
            if conventions.ignores(attribute.userInfo) && attributeMaps[attribute.name] == nil { ignored.insert(attribute.name) }
            guard !attribute.isTransient, !ignored.contains(attribute.name) else { continue }
            let map = attributeMaps[attribute.name]
            guard map != nil || mapsUnlisted || identity.positions.contains(position) else { continue }
            var paths = map?.keyPaths ?? []
            if paths.isEmpty { paths = conventions.keyPaths(attribute.userInfo) ?? [style.key(for: attribute.name)] }
            let format = map?.dateFormat ?? conventions.dateFormat(attribute.userInfo) ?? entityDateFormat
            guard format.offset.magnitude < 86_400 else {
                throw MappingError(
                    .invalidMapping, "the date format of \(name).\(attribute.name) has an offset of \(format.offset) seconds; less than a day either way",
                    entity: name, property: attribute.name)
            }
            var pattern: DatePattern?
            if case .pattern(let text, _) = format, attribute.type == .date {
                do { pattern = try DatePattern(text) } catch {
                    throw MappingError(.invalidMapping, error.message, entity: name, property: attribute.name)
                }
            }
            var transformable: String?
            if case .transformable(let transformerName) = attribute.type { transformable = transformerName }
            let transformerName = map?.transformer ?? conventions.transformer(attribute.userInfo, transformable: transformable)
            let transformer = transformerName.flatMap(MappingTransformers.transformer(named:))
            if let transformerName, transformer == nil, map?.transformer != nil {
                throw MappingError(
                    .invalidMapping, "no MappingTransformer is registered under the name \(transformerName)", entity: name, property: attribute.name)
            }
            attributes.append(
                ResolvedAttribute(
                    name: attribute.name, position: position, type: attribute.type, keyPaths: try Self.split(paths, name, attribute.name),
                    dateFormat: format, datePattern: pattern, transformerName: transformerName, transformer: transformer,
                    coercesText: map?.coercesText ?? true))
        }

        var relationships: [ResolvedRelationship] = []
        for (index, relationship) in entity.relationships.enumerated() {
            if conventions.ignores(relationship.userInfo) && relationshipMaps[relationship.name] == nil { ignored.insert(relationship.name) }
            guard !ignored.contains(relationship.name) else { continue }
            let map = relationshipMaps[relationship.name]
            guard map != nil || mapsUnlisted else { continue }
            guard let destination = model.entity(named: relationship.destination) else { continue }
            var paths = map?.keyPaths ?? []
            if paths.isEmpty { paths = conventions.keyPaths(relationship.userInfo) ?? [style.key(for: relationship.name)] }
            var policy = map?.policy ?? .replace
            if map == nil, let given = conventions.policy(relationship.userInfo) {
                guard let known = given.policy else {
                    throw MappingError(
                        .invalidMapping,
                        "the userInfo of \(name).\(relationship.name) names merge policy \(given.name); Replace, Merge and MergeAndPrune are known",
                        entity: name, property: relationship.name)
                }
                policy = known
            }
            var relatedBy: [Int]?
            if let names = map?.relatedBy ?? conventions.relatedBy(relationship.userInfo) {
                relatedBy = try names.map { attribute throws(MappingError) in
                    guard let position = destination.attributePosition(attribute) else {
                        throw MappingError(
                            .unknownName,
                            "\(name).\(relationship.name) references \(destination.name) by \(attribute), which \(destination.name) does not have",
                            entity: name, property: relationship.name)
                    }
                    return position
                }
            }
            relationships.append(
                ResolvedRelationship(
                    name: relationship.name, index: index, position: entity.attributes.count + index,
                    keyPaths: try Self.split(paths, name, relationship.name), policy: policy, destination: destination.index,
                    isToMany: relationship.isToMany, isOrdered: relationship.isOrdered, relatedBy: relatedBy))
        }
        return ResolvedEntity(
            description: entity, attributes: attributes, relationships: relationships, identity: identity.positions, identitySource: identity.source)
    }

    /// The unique key: declared, else userInfo, else the model's first uniqueness constraint,
    /// else an `<entity>ID` attribute when a library that guesses it is read.
    private func resolveIdentity(_ entity: EntityDescription, _ declared: EntityMapping?) throws(MappingError) -> (positions: [Int], source: String) {
        let name = entity.name
        func positions(_ names: [String], _ source: String) throws(MappingError) -> [Int] {
            try names.map { attribute throws(MappingError) in
                guard let position = entity.attributePosition(attribute) else {
                    throw MappingError(
                        .unknownName, "the \(source) of \(name) names \(attribute) as its unique key, and \(name) has no attribute \(attribute)",
                        entity: name, property: attribute)
                }
                if entity.attributes[position].isTransient {
                    throw MappingError(.invalidMapping, "the unique key of \(name) cannot be \(attribute): it is transient", entity: name, property: attribute)
                }
                return position
            }
        }
        if let names = declared?.identity { return (try positions(names, "mapping"), "declared") }
        let attributes = entity.attributes.map { (name: $0.name, userInfo: $0.userInfo) }
        if let names = conventions.identity(entity.entity.userInfo, attributes: attributes) {
            return (try positions(names, "userInfo"), "userInfo")
        }
        if let constraint = entity.uniqueness.first { return (constraint.positions, "uniqueness constraint") }
        if conventions.guessesEntityIDKey {
            let guess = name.prefix(1).lowercased() + name.dropFirst() + "ID"
            if let position = entity.attributes.firstIndex(where: { $0.name == guess || $0.name == name + "ID" }), !entity.attributes[position].isTransient {
                return ([position], "the <entity>ID convention")
            }
        }
        return ([], "none")
    }

    static func split(_ paths: [String], _ entity: String, _ property: String) throws(MappingError) -> [[String]] {
        try paths.map { path throws(MappingError) in
            let parts = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard !parts.contains(where: \.isEmpty) else {
                throw MappingError(.invalidMapping, "the key path \"\(path)\" of \(entity).\(property) has an empty part", entity: entity, property: property)
            }
            return parts
        }
    }
}
