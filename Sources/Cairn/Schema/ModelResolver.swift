/// Checks a model's entities and resolves inheritance, destinations and inverses.
struct ModelResolver {
    let entities: [Entity]
    let positions: [String: Int]
    let composites: [String: Composite]

    func resolve() throws(ModelError) -> [EntityDescription] {
        // Parents, without cycles.
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
        func chain(_ index: Int) -> [Int] {
            var result = [index]
            var current = parents[index]
            while let parent = current { result.insert(parent, at: 0); current = parents[parent] }
            return result
        }
        // Flattened properties.
        var attributes: [[Attribute]] = []
        var relationships: [[Relationship]] = []
        var storedTotal = 0
        for index in entities.indices {
            var names: Set<String> = []
            var ownAttributes: [Attribute] = []
            var ownRelationships: [Relationship] = []
            for ancestor in chain(index) {
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
                }
            }
            attributes.append(ownAttributes)
            relationships.append(ownRelationships)
        }
        // Destinations and inverses.
        var destinations: [[Int]] = []
        var inverses: [[Int?]] = []
        for (index, entity) in entities.enumerated() {
            var entityDestinations: [Int] = []
            var entityInverses: [Int?] = []
            for relationship in relationships[index] {
                guard let destination = positions[relationship.destination] else {
                    throw ModelError(
                        .unknownDestination, "destination entity \(relationship.destination) does not exist",
                        entity: entity.name, property: relationship.name)
                }
                try checkCounts(relationship, entity: entity.name)
                entityDestinations.append(destination)
                guard let inverseName = relationship.inverse else { entityInverses.append(nil); continue }
                guard let inverse = relationships[destination].firstIndex(where: { $0.name == inverseName }) else {
                    throw ModelError(
                        .invalidInverse, "inverse \(inverseName) is not a relationship of \(relationship.destination)",
                        entity: entity.name, property: relationship.name)
                }
                let back = relationships[destination][inverse]
                guard back.inverse == nil || back.inverse == relationship.name,
                    chain(index).contains(where: { entities[$0].name == back.destination })
                else {
                    throw ModelError(
                        .invalidInverse,
                        "inverse \(relationship.destination).\(inverseName) does not point back to \(entity.name).\(relationship.name)",
                        entity: entity.name, property: relationship.name)
                }
                entityInverses.append(inverse)
            }
            destinations.append(entityDestinations)
            inverses.append(entityInverses)
        }
        // A relationship named as an inverse from one side only gets the back link, so that
        // changes made from either end keep both ends in step.
        for index in entities.indices {
            for (relationship, inverse) in inverses[index].enumerated() {
                guard let inverse else { continue }
                let destination = destinations[index][relationship]
                guard destinations[destination][inverse] == index else { continue }
                for holder in entities.indices where chain(holder).contains(destination) {
                    switch inverses[holder][inverse] {
                    case nil:
                        inverses[holder][inverse] = relationship
                    case relationship?:
                        continue
                    default:
                        let name = relationships[holder][inverse].name
                        throw ModelError(
                            .invalidInverse, "\(entities[destination].name).\(name) is the inverse of more than one relationship",
                            entity: entities[index].name, property: relationships[index][relationship].name)
                    }
                }
            }
        }
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

    private func checkName(_ name: String, entity: String, _ names: inout Set<String>) throws(ModelError) {
        guard Model.isValidName(name) else { throw ModelError(.invalidName, "property name \"\(name)\" is not valid", entity: entity, property: name) }
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

    private func checkCounts(_ relationship: Relationship, entity: String) throws(ModelError) {
        let minimum = relationship.minimumCount ?? 0, maximum = relationship.maximumCount ?? Int.max
        guard minimum >= 0, maximum >= 0, minimum <= maximum, relationship.isToMany || (minimum <= 1 && maximum >= 1) else {
            throw ModelError(
                .invalidCount, "minimum \(minimum) and maximum \(maximum) counts are inconsistent",
                entity: entity, property: relationship.name)
        }
    }
}
