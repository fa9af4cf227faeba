extension ModelResolver {
    /// Each entity's own uniqueness constraints (attribute positions), checked where they are
    /// declared, with its fetch indexes, entity by entity. ``resolve()`` applies them to the
    /// entity's descendants too.
    func declaredConstraints(_ attributes: [[Attribute]]) throws(ModelError) -> [[UniquenessConstraint]] {
        var declared: [[UniquenessConstraint]] = []
        for (index, entity) in entities.enumerated() {
            declared.append(try uniquenessConstraints(of: index, attributes: attributes[index]))
            try checkFetchIndexes(of: entity, attributes: attributes[index])
        }
        return declared
    }

    /// The uniqueness constraints the entity at `index` declares: each names stored attributes.
    private func uniquenessConstraints(of index: Int, attributes: [Attribute]) throws(ModelError) -> [UniquenessConstraint] {
        let entity = entities[index]
        var constraints: [UniquenessConstraint] = []
        for (number, names) in entity.uniquenessConstraints.enumerated() {
            guard !names.isEmpty else {
                throw ModelError(.unknownConstraintAttribute, "an empty uniqueness constraint", entity: entity.name)
            }
            var positions: [Int] = []
            for name in names {
                guard let position = attributes.firstIndex(where: { $0.name == name }), !attributes[position].isTransient else {
                    throw ModelError(
                        .unknownConstraintAttribute, "uniqueness constraint names \(name), which is not a stored attribute",
                        entity: entity.name, property: name)
                }
                positions.append(position)
            }
            constraints.append(UniquenessConstraint(owner: index, number: number, positions: positions, names: names))
        }
        return constraints
    }

    /// The entity's fetch indexes: named once each, each naming stored attributes.
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
}
