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
    /// Whether an attribute has more than one key path (so that records track which one won).
    let hasFallbacks: Bool
    /// Why this entity's records cannot be read as its userInfo asks (a key Cairn reads but
    /// cannot honour, an entity mapper nobody registered): thrown by ``Mapping/entity(_:)`` and
    /// by every record of the entity, so that an import or export of another entity of the same
    /// model is not held up by it, and none of this entity's records is read another way.
    let unhonoured: MappingError?

    init(
        description: EntityDescription, attributes: [ResolvedAttribute], relationships: [ResolvedRelationship], identity: [Int], identitySource: String,
        keyScope: Int, entityMapper: (name: String, mapper: EntityMappers.Mapper)?, unhonoured: MappingError? = nil
    ) {
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

    /// Resolves `entity`'s mapping from the declared entity mappings (`declared`, by name): its
    /// own, with the maps of its ancestors' for the properties it inherits and does not map.
    mutating func resolve(_ entity: EntityDescription, declared all: [String: EntityMapping]) throws(MappingError) -> ResolvedEntity {
        let name = entity.name
        let declared = inheritedMapping(entity, all)
        var unhonoured: MappingError?
        if let key = conventions.unsupportedEntityKeys(entity.entity.userInfo).first {
            unhonoured = MappingError(
                .invalidMapping, "the userInfo of \(name) gives \(key), which Cairn cannot honour; declare the mapping instead", entity: name, property: key)
        }
        let entityMapper: (name: String, mapper: EntityMappers.Mapper)?
        do { entityMapper = try resolveEntityMapper(entity) } catch {
            entityMapper = nil
            unhonoured = unhonoured ?? error
        }
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
        let identity = try resolveIdentity(entity, all)
        var entityDateFormat = declared?.dateFormat ?? dateFormat
        if declared?.dateFormat == nil, let inherited = ancestry(entity).compactMap({ [conventions] in conventions.dateFormat($0.entity.userInfo) }).first {
            entityDateFormat = inherited
        }

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
            description: entity, attributes: attributes, relationships: relationships, identity: identity.positions, identitySource: identity.source,
            keyScope: identity.scope, entityMapper: entityMapper, unhonoured: unhonoured)
    }

    /// The entity and its ancestors, nearest first.
    private func ancestry(_ entity: EntityDescription) -> [EntityDescription] {
        var chain = [entity]
        while let parent = chain[chain.count - 1].parentIndex, chain.count <= model.descriptions.count { chain.append(model.descriptions[parent]) }
        return chain
    }

    /// The entity's declared mapping, with the maps and ignored properties of its ancestors'
    /// declared mappings for what it does not map itself; nil when none of them is declared.
    /// (The unique key is inherited apart: see ``resolveIdentity(_:_:)``.)
    private func inheritedMapping(_ entity: EntityDescription, _ all: [String: EntityMapping]) -> EntityMapping? {
        let chain = ancestry(entity).compactMap { all[$0.name] }
        guard var merged = chain.first else { return nil }
        if all[entity.name] == nil { merged.identity = nil }
        for ancestor in chain.dropFirst() {
            let mapped = Set(merged.attributes.map(\.attribute) + merged.relationships.map(\.relationship))
            merged.attributes += ancestor.attributes.filter { !mapped.contains($0.attribute) }
            merged.relationships += ancestor.relationships.filter { !mapped.contains($0.relationship) }
            merged.ignored += ancestor.ignored.filter { !mapped.contains($0) && !merged.ignored.contains($0) }
            merged.dateFormat = merged.dateFormat ?? ancestor.dateFormat
            merged.keyStyle = merged.keyStyle ?? ancestor.keyStyle
        }
        return merged
    }

    /// The entity mapper userInfo names (Groot's `entityMapperName`), which must be registered.
    private func resolveEntityMapper(_ entity: EntityDescription) throws(MappingError) -> (name: String, mapper: EntityMappers.Mapper)? {
        guard let mapperName = conventions.entityMapper(entity.entity.userInfo) else { return nil }
        guard let mapper = EntityMappers.mapper(named: mapperName) else {
            throw MappingError(
                .invalidMapping,
                "the userInfo of \(entity.name) names entity mapper \(mapperName) (entityMapperName), and no EntityMappers entry is registered under that name",
                entity: entity.name, property: "entityMapperName")
        }
        return (mapperName, mapper)
    }

    /// The unique key: declared, else userInfo, then the same of each ancestor (nearest first),
    /// else the model's first uniqueness constraint (its own or inherited), else an `<entity>ID`
    /// attribute when a library that guesses it is read. `scope`: the entity whose family the
    /// key is unique across.
    private func resolveIdentity(
        _ entity: EntityDescription, _ all: [String: EntityMapping]
    ) throws(MappingError) -> (
        positions: [Int], source: String, scope: Int
    ) {
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
        for holder in ancestry(entity) {
            let inherited = holder.index == entity.index ? "" : " of \(holder.name)"
            if let names = all[holder.name]?.identity { return (try positions(names, "mapping\(inherited)"), "declared\(inherited)", holder.index) }
            // Attributes marked as keys count in the entity that declares them.
            let attributes = holder.attributes.map { (name: $0.name, userInfo: $0.userInfo) }
            if let names = conventions.identity(holder.entity.userInfo, attributes: attributes) {
                return (try positions(names, "userInfo\(inherited)"), "userInfo\(inherited)", holder.index)
            }
        }
        if let constraint = entity.uniqueness.first { return (constraint.positions, "uniqueness constraint", constraint.owner) }
        if conventions.guessesEntityIDKey {
            let guess = name.prefix(1).lowercased() + name.dropFirst() + "ID"
            if let position = entity.attributes.firstIndex(where: { $0.name == guess || $0.name == name + "ID" }), !entity.attributes[position].isTransient {
                return ([position], "the <entity>ID convention", entity.index)
            }
        }
        return ([], "none", entity.index)
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
