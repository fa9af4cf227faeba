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
            guard entity.attributePosition(map.attribute) != nil else {
                let hint = entity.relationshipPosition(map.attribute) != nil ? " (it is a relationship: map it with RelationshipMap)" : ""
                throw MappingError(
                    .unknownName, "the mapping of \(name) maps attribute \(map.attribute), which \(name) does not have\(hint)", entity: name,
                    property: map.attribute)
            }
            guard maps.attributes.updateValue(map, forKey: map.attribute) == nil else {
                throw MappingError(.invalidMapping, "\(name).\(map.attribute) is mapped twice", entity: name, property: map.attribute)
            }
        }
        for map in declared?.relationships ?? [] {
            guard entity.relationshipPosition(map.relationship) != nil else {
                let hint = entity.attributePosition(map.relationship) != nil ? " (it is an attribute: map it with AttributeMap)" : ""
                throw MappingError(
                    .unknownName, "the mapping of \(name) maps relationship \(map.relationship), which \(name) does not have\(hint)", entity: name,
                    property: map.relationship)
            }
            guard maps.relationships.updateValue(map, forKey: map.relationship) == nil else {
                throw MappingError(.invalidMapping, "\(name).\(map.relationship) is mapped twice", entity: name, property: map.relationship)
            }
        }
        return maps
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
