import Cairn

/// Resolves each entity's mapping: a declared map first, then userInfo, then the default key.
///
/// ``resolve(_:declared:)`` runs the phases in order: the declared maps, inherited and checked
/// (`MappingResolver+DeclaredMaps.swift`), the unique key (`MappingResolver+Identity.swift`),
/// then each attribute and relationship (`MappingResolver+Properties.swift`).
struct MappingResolver {
    let model: Model
    let keyStyle: KeyStyle
    let dateFormat: DateFormat
    let conventions: UserInfoConventions
    let layout: RecordLayout

    init(model: Model, keyStyle: KeyStyle, dateFormat: DateFormat, conventions: UserInfoConventions, layout: RecordLayout = .plain) {
        self.model = model
        self.layout = layout
        self.keyStyle = keyStyle
        self.dateFormat = dateFormat
        self.conventions = conventions
    }

    /// Resolves `entity`'s mapping from the declared entity mappings (`declared`, by name): its
    /// own, with the maps of its ancestors' for the properties it inherits and does not map.
    mutating func resolve(_ entity: EntityDescription, declared all: [String: EntityMapping]) throws(MappingError) -> ResolvedEntity {
        let declared = inheritedMapping(entity, all)
        var unhonoured = unsupportedUserInfo(entity)
        let entityMapper: (name: String, mapper: EntityMappers.Mapper)?
        do { entityMapper = try resolveEntityMapper(entity) } catch {
            entityMapper = nil
            unhonoured = unhonoured ?? error
        }
        var maps = try checkedMaps(declared, of: entity)
        let identity = try resolveIdentity(entity, all)
        let dateFormat = entityDateFormat(entity, declared: declared)
        let attributes = try resolveAttributes(entity, &maps, identity: identity.positions, dateFormat: dateFormat)
        let relationships = try resolveRelationships(entity, &maps)
        let discriminator = try all[entity.name]?.discriminator.map { discriminator throws(MappingError) in
            try ResolvedDiscriminator(discriminator, model: model, family: entity)
        }
        return ResolvedEntity(
            description: entity, attributes: attributes, relationships: relationships, identity: identity.positions, identitySource: identity.source,
            keyScope: identity.scope, entityMapper: entityMapper, discriminator: discriminator, unhonoured: unhonoured)
    }

    /// The first key of the entity's userInfo that Cairn cannot honour, as the error an import
    /// reports.
    private func unsupportedUserInfo(_ entity: EntityDescription) -> MappingError? {
        guard let key = conventions.unsupportedEntityKeys(entity.entity.userInfo).first else { return nil }
        return MappingError(
            .invalidMapping, "the userInfo of \(entity.name) gives \(key), which Cairn cannot honour; declare the mapping instead", entity: entity.name,
            property: key)
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

    /// The date format of the entity's attributes that name none: declared (its own or an
    /// ancestor's), else the nearest userInfo's, else the mapping's.
    private func entityDateFormat(_ entity: EntityDescription, declared: EntityMapping?) -> DateFormat {
        if declared?.dateFormat == nil, let inherited = ancestry(entity).compactMap({ [conventions] in conventions.dateFormat($0.entity.userInfo) }).first {
            return inherited
        }
        return declared?.dateFormat ?? dateFormat
    }

    /// A property's key paths in the mapping's record layout: as they are, or (Django) `pk` for
    /// the single attribute of the unique key and the others inside `fields`.
    func laidOut(_ paths: [String], isKey: Bool) -> [String] {
        switch layout {
        case .plain: paths
        case .django: isKey ? ["pk"] : paths.map { "fields." + $0 }
        }
    }

    /// `paths` (dotted key paths) as their parts; an empty part throws, naming `entity` and
    /// `property`.
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
