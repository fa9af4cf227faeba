import Cairn

extension MappingResolver {
    /// The entity's attributes as they are read: each stored one not ignored (by `maps` or by
    /// its userInfo) that a map lists, or that is unlisted while `maps` maps unlisted ones, or
    /// that is part of the unique key (`identity`). `dateFormat`: the entity's.
    func resolveAttributes(
        _ entity: EntityDescription, _ maps: inout DeclaredMaps, identity: [Int], dateFormat entityDateFormat: DateFormat
    ) throws(MappingError) -> [ResolvedAttribute] {
        let name = entity.name
        var attributes: [ResolvedAttribute] = []
        for (position, attribute) in entity.attributes.enumerated() {
            if conventions.ignores(attribute.userInfo) && maps.attributes[attribute.name] == nil { maps.ignored.insert(attribute.name) }
            guard !attribute.isTransient, !maps.ignored.contains(attribute.name) else { continue }
            let map = maps.attributes[attribute.name]
            guard map != nil || maps.mapsUnlisted || identity.contains(position) else { continue }
            var paths = map?.keyPaths ?? []
            if paths.isEmpty { paths = conventions.keyPaths(attribute.userInfo) ?? [maps.keyStyle.key(for: attribute.name)] }
            paths = laidOut(paths, isKey: identity == [position])
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
                if pattern?.isCompiled == false && format.offset.magnitude > FoundationDatePattern.widestOffset {
                    throw MappingError(
                        .invalidMapping,
                        "the date pattern \"\(text)\" is read by DateFormatter, whose zones lie within ±18:00 of UTC; the format's offset is \(format.offset) seconds",
                        entity: name, property: attribute.name)
                }
            }
            var transformable: String?
            if case .transformable(let transformerName) = attribute.type { transformable = transformerName }
            let transformerName = map?.transformer ?? conventions.transformer(attribute.userInfo, transformable: transformable)
            var transformer: (any MappingTransformer)?
            if let transformerName {
                transformer = try MappingTransformers.transformer(named: transformerName, for: attribute.type, entity: name, property: attribute.name)
            }
            if let transformerName, transformer == nil, map?.transformer != nil {
                throw MappingError(
                    .invalidMapping, MappingError.unregisteredTransformer(transformerName), entity: name, property: attribute.name)
            }
            attributes.append(
                ResolvedAttribute(
                    name: attribute.name, position: position, type: attribute.type, keyPaths: try Self.split(paths, name, attribute.name),
                    dateFormat: format, datePattern: pattern, transformerName: transformerName, transformer: transformer,
                    coercesText: map?.coercesText ?? true))
        }
        return attributes
    }

    /// The entity's relationships as they are read: each not ignored (by `maps` or by its
    /// userInfo) that a map lists, or that is unlisted while `maps` maps unlisted ones.
    func resolveRelationships(_ entity: EntityDescription, _ maps: inout DeclaredMaps) throws(MappingError) -> [ResolvedRelationship] {
        let name = entity.name
        var relationships: [ResolvedRelationship] = []
        for (index, relationship) in entity.relationships.enumerated() {
            if conventions.ignores(relationship.userInfo) && maps.relationships[relationship.name] == nil { maps.ignored.insert(relationship.name) }
            guard !maps.ignored.contains(relationship.name) else { continue }
            let map = maps.relationships[relationship.name]
            guard map != nil || maps.mapsUnlisted else { continue }
            guard let destination = model.entity(named: relationship.destination) else { continue }
            var paths = map?.keyPaths ?? []
            if paths.isEmpty { paths = conventions.keyPaths(relationship.userInfo) ?? [maps.keyStyle.key(for: relationship.name)] }
            paths = laidOut(paths, isKey: false)
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
                    name: relationship.name, index: index, position: entity.propertyPosition(ofRelationship: index),
                    keyPaths: try Self.split(paths, name, relationship.name), policy: policy, destination: destination.index,
                    isToMany: relationship.isToMany, isOrdered: relationship.isOrdered, relatedBy: relatedBy))
        }
        return relationships
    }
}
