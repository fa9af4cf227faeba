/// Checks a model's entities and resolves inheritance, destinations and inverses.
struct ModelResolver {
    let entities: [Entity]
    let positions: [String: Int]
    let composites: [String: Composite]

    func resolve() throws(ModelError) -> [EntityDescription] {
        let parents = try parentIndexes()
        func chain(_ index: Int) -> [Int] { Self.chain(index, parents) }
        let (attributes, relationships, _) = try flatten(parents)
        var strict: [ModelError]? = nil
        let (destinations, inverses) = try link(relationships, owners: nil, parents, rejecting: &strict)
        // Uniqueness constraints, checked where declared, applied to descendants.
        var declared: [[UniquenessConstraint]] = []
        for (index, entity) in entities.enumerated() {
            var constraints: [UniquenessConstraint] = []
            for (number, names) in entity.uniquenessConstraints.enumerated() {
                guard !names.isEmpty else {
                    throw ModelError(.unknownConstraintAttribute, "an empty uniqueness constraint", entity: entity.name)
                }
                var positions: [Int] = []
                for name in names {
                    guard let position = attributes[index].firstIndex(where: { $0.name == name }), !attributes[index][position].isTransient else {
                        throw ModelError(
                            .unknownConstraintAttribute, "uniqueness constraint names \(name), which is not a stored attribute",
                            entity: entity.name, property: name)
                    }
                    positions.append(position)
                }
                constraints.append(UniquenessConstraint(owner: index, number: number, positions: positions, names: names))
            }
            declared.append(constraints)
            try checkFetchIndexes(of: entity, attributes: attributes[index])
        }
        return entities.indices.map { index in
            let descendants = entities.indices.filter { $0 != index && chain($0).contains(index) }
            return EntityDescription(
                index: index, entity: entities[index], attributes: attributes[index],
                relationships: relationships[index], parentIndex: parents[index], descendants: descendants,
                uniqueness: chain(index).flatMap { declared[$0] },
                destinations: destinations[index], inverses: inverses[index])
        }
    }

    /// Each entity's parent, checked: it exists, and no entity is its own ancestor.
    func parentIndexes() throws(ModelError) -> [Int?] {
        var parents: [Int?] = []
        for entity in entities {
            guard let parent = entity.parent else { parents.append(nil); continue }
            guard let index = positions[parent] else {
                throw ModelError(.unknownParent, "parent entity \(parent) does not exist", entity: entity.name)
            }
            parents.append(index)
        }
        for start in entities.indices {
            var seen: Set<Int> = [start]
            var current = parents[start]
            while let index = current {
                guard seen.insert(index).inserted else {
                    throw ModelError(.inheritanceCycle, "the parents of \(entities[start].name) lead back to it", entity: entities[start].name)
                }
                current = parents[index]
            }
        }
        return parents
    }

    /// An entity and its ancestors, the root first.
    static func chain(_ index: Int, _ parents: [Int?]) -> [Int] {
        var result = [index]
        var current = parents[index]
        while let parent = current { result.insert(parent, at: 0); current = parents[parent] }
        return result
    }

    /// Each entity's attributes (composites expanded) and relationships, inherited ones first,
    /// checked; and for each relationship, the entity that declares it.
    func flatten(_ parents: [Int?]) throws(ModelError) -> (attributes: [[Attribute]], relationships: [[Relationship]], owners: [[Int]]) {
        var attributes: [[Attribute]] = []
        var relationships: [[Relationship]] = []
        var owners: [[Int]] = []
        var storedTotal = 0
        for index in entities.indices {
            var names: Set<String> = []
            var ownAttributes: [Attribute] = []
            var ownRelationships: [Relationship] = []
            var ownOwners: [Int] = []
            for ancestor in Self.chain(index, parents) {
                let entity = entities[ancestor]
                for declared in entity.attributes {
                    try checkName(declared.name, entity: entities[index].name, &names)
                    let expanded = try declared.expanded(composites, entity: entity.name)
                    storedTotal += expanded.count
                    guard storedTotal <= Model.maximumAttributeCount else {
                        throw ModelError(
                            .invalidFormat,
                            "the model's entities hold more than \(Model.maximumAttributeCount) attributes, inherited ones and composite elements counted in each entity",
                            entity: entities[index].name)
                    }
                    for attribute in expanded {
                        try checkDefault(attribute, entity: entity.name)
                        if attribute.type == .undefined && !attribute.isTransient {
                            throw ModelError(
                                .unsupportedType,
                                "an undefined attribute holds any value, which Cairn cannot store: only a transient one is allowed",
                                entity: entity.name, property: attribute.name)
                        }
                        ownAttributes.append(attribute)
                    }
                }
                for relationship in entity.relationships {
                    try checkName(relationship.name, entity: entities[index].name, &names)
                    ownRelationships.append(relationship)
                    ownOwners.append(ancestor)
                }
            }
            attributes.append(ownAttributes)
            relationships.append(ownRelationships)
            owners.append(ownOwners)
        }
        return (attributes, relationships, owners)
    }

    private func checkName(_ name: String, entity: String, _ names: inout Set<String>) throws(ModelError) {
        guard Model.isValidName(name) else {
            throw ModelError(.invalidName, "property name \(Model.shown(name)) is not valid", entity: entity, property: Model.clipped(name))
        }
        guard names.insert(name).inserted else {
            throw ModelError(.duplicateName, "two properties are named \(name) (inherited ones included)", entity: entity, property: name)
        }
    }

    private func checkDefault(_ attribute: Attribute, entity: String) throws(ModelError) {
        if attribute.type == .undefined, attribute.defaultValue != nil {
            throw ModelError(.invalidDefault, "an undefined attribute takes no default", entity: entity, property: attribute.name)
        }
        var finite = true
        if case .double(let number)? = attribute.defaultValue { finite = number.isFinite }
        if case .float(let number)? = attribute.defaultValue { finite = number.isFinite }
        guard finite else {
            throw ModelError(
                .invalidDefault, "default \(attribute.defaultValue?.description ?? "") is not a finite number", entity: entity, property: attribute.name)
        }
        guard let value = attribute.defaultValue, !value.fits(attribute.type) else { return }
        throw ModelError(
            .invalidDefault, "default \(value) (\(value.typeName)) does not fit type \(attribute.type)",
            entity: entity, property: attribute.name)
    }

    private func checkFetchIndexes(of entity: Entity, attributes: [Attribute]) throws(ModelError) {
        var names: Set<String> = []
        for index in entity.fetchIndexes {
            guard names.insert(index.name).inserted else {
                throw ModelError(.invalidFetchIndex, "two fetch indexes are named \(index.name)", entity: entity.name)
            }
            guard !index.elements.isEmpty else {
                throw ModelError(.invalidFetchIndex, "fetch index \(index.name) has no attribute", entity: entity.name)
            }
            for element in index.elements where !attributes.contains(where: { $0.name == element.attribute && !$0.isTransient }) {
                throw ModelError(
                    .invalidFetchIndex, "fetch index \(index.name) names \(element.attribute), which is not a stored attribute",
                    entity: entity.name, property: element.attribute)
            }
        }
    }

    func checkCounts(_ relationship: Relationship, entity: String) throws(ModelError) {
        let minimum = relationship.minimumCount ?? 0, maximum = relationship.maximumCount ?? Int.max
        guard minimum >= 0, maximum >= 0, minimum <= maximum, relationship.isToMany || (minimum <= 1 && maximum >= 1) else {
            throw ModelError(
                .invalidCount, "minimum \(minimum) and maximum \(maximum) counts are inconsistent",
                entity: entity, property: relationship.name)
        }
    }
}
