import Cairn

/// An entity's declared maps, checked against the entity, by property name; the properties
/// left out; whether properties no map lists are mapped; the key style of unmapped names.
struct DeclaredMaps {
    var attributes: [String: AttributeMap] = [:]
    var relationships: [String: RelationshipMap] = [:]
    var ignored: Set<String>
    let mapsUnlisted: Bool
    let keyStyle: KeyStyle
}

extension MappingResolver {
    /// `declared`'s maps of `entity`, checked: each names a property of the entity, of the
    /// right kind, once; each ignored name is a property of the entity.
    func checkedMaps(_ declared: EntityMapping?, of entity: EntityDescription) throws(MappingError) -> DeclaredMaps {
        let name = entity.name
        var maps = DeclaredMaps(ignored: Set(declared?.ignored ?? []), mapsUnlisted: declared?.mapsUnlisted ?? true, keyStyle: declared?.keyStyle ?? keyStyle)
        for property in maps.ignored where entity.attributePosition(property) == nil && entity.relationshipPosition(property) == nil {
            throw MappingError(.unknownName, "the mapping of \(name) ignores \(property), which \(name) does not have", entity: name, property: property)
        }
        for map in declared?.attributes ?? [] {
            try Self.checkDeclared(map.attribute, isAttribute: true, of: entity)
            guard maps.attributes.updateValue(map, forKey: map.attribute) == nil else { throw Self.mappedTwice(map.attribute, of: entity) }
        }
        for map in declared?.relationships ?? [] {
            try Self.checkDeclared(map.relationship, isAttribute: false, of: entity)
            guard maps.relationships.updateValue(map, forKey: map.relationship) == nil else { throw Self.mappedTwice(map.relationship, of: entity) }
        }
        return maps
    }

    /// Checks that a declared map names a property of `entity` of its kind (an attribute for an
    /// `AttributeMap`), with a hint when it names one of the other kind.
    private static func checkDeclared(_ property: String, isAttribute: Bool, of entity: EntityDescription) throws(MappingError) {
        let found = isAttribute ? entity.attributePosition(property) : entity.relationshipPosition(property)
        guard found == nil else { return }
        let other = isAttribute ? entity.relationshipPosition(property) : entity.attributePosition(property)
        let hint =
            other == nil
            ? "" : isAttribute ? " (it is a relationship: map it with RelationshipMap)" : " (it is an attribute: map it with AttributeMap)"
        let name = entity.name
        throw MappingError(
            .unknownName, "the mapping of \(name) maps \(isAttribute ? "attribute" : "relationship") \(property), which \(name) does not have\(hint)",
            entity: name, property: property)
    }

    private static func mappedTwice(_ property: String, of entity: EntityDescription) -> MappingError {
        MappingError(.invalidMapping, "\(entity.name).\(property) is mapped twice", entity: entity.name, property: property)
    }

    /// The entity and its ancestors, nearest first.
    func ancestry(_ entity: EntityDescription) -> [EntityDescription] {
        var chain = [entity]
        while let parent = chain[chain.count - 1].parentIndex, chain.count <= model.descriptions.count { chain.append(model.descriptions[parent]) }
        return chain
    }

    /// The entity's declared mapping, with the maps and ignored properties of its ancestors'
    /// declared mappings for what it does not map itself; nil when none of them is declared.
    /// (The unique key is inherited apart: see ``resolveIdentity(_:_:)``.)
    func inheritedMapping(_ entity: EntityDescription, _ all: [String: EntityMapping]) -> EntityMapping? {
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
}
