extension ModelResolver {
    /// The relationships whose inverse cannot be kept (one that names no relationship of the
    /// destination, that does not point back, or that several relationships claim), each as the
    /// error ``resolve()`` would throw, naming the entity that declares the relationship. Other
    /// problems throw as in ``resolve()``.
    func unmatchedInverses() throws(ModelError) -> [ModelError] {
        let parents = try parentIndexes()
        let (_, relationships, owners) = try flatten(parents)
        var rejected: [ModelError]? = []
        _ = try link(relationships, owners: owners, parents, rejecting: &rejected)
        var seen: Set<[String?]> = []
        return (rejected ?? []).filter { seen.insert([$0.entity, $0.property]).inserted }
    }

    /// Each relationship's destination and inverse (positions). An inverse that cannot be kept
    /// throws, or, when `rejected` is not nil, is added to it (naming the relationship's
    /// declaring entity, from `owners`) and left out.
    func link(
        _ relationships: [[Relationship]], owners: [[Int]]?, _ parents: [Int?], rejecting rejected: inout [ModelError]?
    ) throws(ModelError) -> (destinations: [[Int]], inverses: [[Int?]]) {
        func chain(_ index: Int) -> [Int] { Self.chain(index, parents) }
        func reject(_ message: String, _ index: Int, _ relationship: Int) throws(ModelError) {
            guard rejected != nil else {
                throw ModelError(.invalidInverse, message, entity: entities[index].name, property: relationships[index][relationship].name)
            }
            let owner = owners?[index][relationship] ?? index
            rejected?.append(ModelError(.invalidInverse, message, entity: entities[owner].name, property: relationships[index][relationship].name))
        }
        var destinations: [[Int]] = []
        var inverses: [[Int?]] = []
        for (index, entity) in entities.enumerated() {
            var entityDestinations: [Int] = []
            var entityInverses: [Int?] = []
            for (position, relationship) in relationships[index].enumerated() {
                guard let destination = positions[relationship.destination] else {
                    throw ModelError(
                        .unknownDestination, "destination entity \(relationship.destination) does not exist",
                        entity: entity.name, property: relationship.name)
                }
                try checkCounts(relationship, entity: entity.name)
                entityDestinations.append(destination)
                guard let inverseName = relationship.inverse else { entityInverses.append(nil); continue }
                guard let inverse = relationships[destination].firstIndex(where: { $0.name == inverseName }) else {
                    try reject("inverse \(inverseName) is not a relationship of \(relationship.destination)", index, position)
                    entityInverses.append(nil)
                    continue
                }
                let back = relationships[destination][inverse]
                guard back.inverse == nil || back.inverse == relationship.name,
                    chain(index).contains(where: { entities[$0].name == back.destination })
                else {
                    try reject(
                        "inverse \(relationship.destination).\(inverseName) does not point back to \(entity.name).\(relationship.name)", index,
                        position)
                    entityInverses.append(nil)
                    continue
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
                    case let other?:
                        let name = relationships[holder][inverse].name
                        let message = "\(entities[destination].name).\(name) is the inverse of more than one relationship"
                        try reject(message, index, relationship)
                        try reject(message, index, other)
                    }
                }
            }
        }
        return (destinations, inverses)
    }

    /// Checks a relationship's minimum and maximum counts: not negative, in order, and a to-one
    /// relationship allows one object.
    private func checkCounts(_ relationship: Relationship, entity: String) throws(ModelError) {
        let minimum = relationship.minimumCount ?? 0, maximum = relationship.maximumCount ?? Int.max
        guard minimum >= 0, maximum >= 0, minimum <= maximum, relationship.isToMany || (minimum <= 1 && maximum >= 1) else {
            throw ModelError(
                .invalidCount, "minimum \(minimum) and maximum \(maximum) counts are inconsistent",
                entity: entity, property: relationship.name)
        }
    }
}

extension Model {
    /// `entities` with the inverse left out of each relationship whose inverse cannot be kept
    /// (see ``ModelResolver/unmatchedInverses()``), and those relationships, each as the error a
    /// model check would throw. A model that fails another check is returned as it is, for
    /// ``Model/init(_:userInfo:configurations:composites:)`` to refuse.
    static func withoutUnmatchedInverses(_ entities: [Entity], composites: [Composite]) throws(ModelError) -> (entities: [Entity], unmatched: [ModelError]) {
        guard entities.count <= maximumEntityCount else { return (entities, []) }
        let compositesByName = try checkComposites(composites)
        var positions: [String: Int] = [:]
        for (index, entity) in entities.enumerated() where positions.updateValue(index, forKey: entity.name) != nil {
            return (entities, [])
        }
        var entities = entities
        var unmatched: [ModelError] = []
        // Leaving out one inverse can make the other end of a pair unmatched too: a few rounds
        // settle it (each round leaves out at least one of the model's inverses).
        for _ in 0..<8 {
            let found = try ModelResolver(entities: entities, positions: positions, composites: compositesByName).unmatchedInverses()
            guard !found.isEmpty else { break }
            for problem in found {
                guard let entity = problem.entity.flatMap({ positions[$0] }) else { continue }
                for index in entities[entity].relationships.indices where entities[entity].relationships[index].name == problem.property {
                    entities[entity].relationships[index].inverse = nil
                }
            }
            unmatched += found
        }
        return (entities, unmatched)
    }
}
