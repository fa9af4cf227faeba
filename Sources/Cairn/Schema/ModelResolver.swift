/// Checks a model's entities and resolves inheritance, destinations and inverses.
///
/// ``resolve()`` runs the phases in order, each in a function of its own: the parents
/// (``parentIndexes()``), each entity's properties with the inherited ones
/// (``flatten(_:)``, `ModelResolver+Properties.swift`), destinations and inverses
/// (``link(_:owners:_:rejecting:)``, `ModelResolver+Inverses.swift`), uniqueness constraints
/// and fetch indexes (``declaredConstraints(_:)``, `ModelResolver+Constraints.swift`), then
/// the descriptions.
struct ModelResolver {
    let entities: [Entity]
    let positions: [String: Int]
    let composites: [String: Composite]

    /// Each entity's description, checked; the first problem found throws.
    func resolve() throws(ModelError) -> [EntityDescription] {
        let parents = try parentIndexes()
        let (attributes, relationships, _) = try flatten(parents)
        var strict: [ModelError]? = nil
        let (destinations, inverses) = try link(relationships, owners: nil, parents, rejecting: &strict)
        let declared = try declaredConstraints(attributes)
        return entities.indices.map { index in
            EntityDescription(
                index: index, entity: entities[index], attributes: attributes[index],
                relationships: relationships[index], parentIndex: parents[index], descendants: descendants(of: index, parents),
                uniqueness: Self.chain(index, parents).flatMap { declared[$0] },
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

    /// The entities that inherit from the one at `index`, directly or not, in model order.
    private func descendants(of index: Int, _ parents: [Int?]) -> [Int] {
        entities.indices.filter { $0 != index && Self.chain($0, parents).contains(index) }
    }
}
