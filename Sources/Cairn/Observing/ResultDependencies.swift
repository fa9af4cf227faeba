/// Which fetched objects a save can change the membership or the place of: the objects of the
/// fetched entities it changed, and those whose predicate or sort keys read, through
/// relationships, an object it changed (`author.name` reads the author: a renamed author moves
/// its books). Found by following the relationships back, through their inverses, in the
/// snapshots before and after the save.
struct ResultDependencies: Sendable {
    /// One relationship followed from the fetched entity on the way to a value.
    struct Step: Sendable, Hashable {
        /// The entity the relationship leads to (its sub-entities' objects count too).
        var destination: Int
        /// The inverse's number among the destination's relationships; nil without one.
        var inverse: Int?
    }

    /// What a predicate or sort key reads of the objects at the end of a chain.
    struct Reads: Sendable {
        /// Attribute positions.
        var attributes = Set<Int>()
        /// Relationship numbers.
        var relationships = Set<Int>()
    }

    /// The fetched entities.
    let family: Set<Int>
    /// Each chain of relationships the predicate or a sort key follows from the fetched entity
    /// (each prefix of a longer one included), with what is read at its end.
    let chains: [[Step]: Reads]
    /// Each entity's family (itself and its sub-entities), by index.
    private let families: [Set<Int>]
    /// Each entity's attribute count (where its relationships start), by index.
    private let attributeCounts: [Int]

    init(_ query: PreparedQuery) {
        family = query.family
        let model = query.model
        families = model.descriptions.map(\.family)
        attributeCounts = model.descriptions.map(\.attributes.count)
        var chains: [[Step]: Reads] = [:]
        let root = query.entity.index
        for path in query.sortPaths { Self.collect(path, from: root, after: [], model, into: &chains) }
        if let predicate = query.predicate { Self.collect(predicate, from: root, after: [], model, into: &chains) }
        self.chains = chains
    }

    /// The fetched objects whose membership or place a save can change: one that inserted or
    /// deleted the objects `changed` and updated the properties at `positions` of the objects
    /// `updated`, as the two snapshots link them (nil: one of them cannot be traced: refetch).
    /// An updated related object counts only when it changed what the chain reads of it.
    func affected(by changed: [ObjectID], updated: [(id: ObjectID, positions: [Int])], before: StoreSnapshot, after: StoreSnapshot) -> Set<ObjectID>? {
        var roots = Set<ObjectID>()
        func reach(_ id: ObjectID, positions: [Int]?) -> Bool {
            if family.contains(id.entity) { roots.insert(id) }
            for (chain, reads) in chains {
                guard let depth = chain.indices.last, families[chain[depth].destination].contains(id.entity) else { continue }
                if let positions, !positions.contains(where: { Self.reads(reads, $0, attributeCount: attributeCounts[id.entity]) }) { continue }
                // (A relationship without an inverse cannot be followed back.)
                guard chain.allSatisfy({ $0.inverse != nil }) else { return false }
                for snapshot in [before, after] { roots.formUnion(back(from: [id], along: chain, in: snapshot)) }
            }
            return true
        }
        for id in changed where !reach(id, positions: nil) { return nil }
        for (id, positions) in updated where attributeCounts.indices.contains(id.entity) && !reach(id, positions: positions) { return nil }
        return roots
    }

    /// Whether `reads` reads property `position` of an object whose entity has `attributeCount`
    /// attributes.
    private static func reads(_ reads: Reads, _ position: Int, attributeCount: Int) -> Bool {
        position < attributeCount ? reads.attributes.contains(position) : reads.relationships.contains(position - attributeCount)
    }

    /// The objects of the fetched entities that reach `objects` (at the end of `chain`) along it.
    private func back(from objects: Set<ObjectID>, along chain: [Step], in snapshot: StoreSnapshot) -> Set<ObjectID> {
        var current = objects
        for step in chain.reversed() {
            guard let inverse = step.inverse else { return [] }
            var previous = Set<ObjectID>()
            for id in current {
                guard let record = snapshot.record(id), attributeCounts.indices.contains(id.entity) else { continue }
                let position = attributeCounts[id.entity] + inverse
                guard position < record.row.count else { continue }
                previous.formUnion(record.row.value(position).targets)
            }
            current = previous
        }
        return current.filter { family.contains($0.entity) }
    }

    /// The chains a key path follows (each prefix that leads to a related object), and what it
    /// reads at the end of each.
    private static func collect(_ path: CompiledKeyPath, from entity: Int, after prefix: [Step], _ model: Model, into chains: inout [[Step]: Reads]) {
        var current = entity
        var chain = prefix
        // (A key path ending on a relationship reads the related objects' IDs, which the object
        // reaching them holds: its last relationship adds no chain of its own.)
        for step in path.steps {
            guard model.descriptions.indices.contains(current), model.descriptions[current].destinations.indices.contains(step.number) else { return }
            if !chain.isEmpty { chains[chain, default: Reads()].relationships.insert(step.number) }
            let description = model.descriptions[current]
            chain.append(Step(destination: description.destinations[step.number], inverse: description.inverses[step.number]))
            current = description.destinations[step.number]
        }
        guard !chain.isEmpty else { return }
        switch path.terminal {
        case .attribute(let position, _): chains[chain, default: Reads()].attributes.insert(position)
        case .relationship(let number, _, _): chains[chain, default: Reads()].relationships.insert(number)
        }
    }

    /// The chains a predicate's key paths follow, `SUBQUERY` and collection operators included.
    private static func collect(_ predicate: CompiledPredicate, from entity: Int, after prefix: [Step], _ model: Model, into chains: inout [[Step]: Reads]) {
        switch predicate {
        case .comparison(let comparison):
            for side in [comparison.lhs, comparison.rhs] { collect(side, from: entity, after: prefix, model, into: &chains) }
        case .and(let parts), .or(let parts):
            for part in parts { collect(part, from: entity, after: prefix, model, into: &chains) }
        case .not(let part):
            collect(part, from: entity, after: prefix, model, into: &chains)
        case .constant:
            break
        case .someMatch(let collection, let inner):
            guard let (chain, destination) = extended(collection, from: entity, after: prefix, model) else { return }
            collect(collection, from: entity, after: prefix, model, into: &chains)
            collect(inner, from: destination, after: chain, model, into: &chains)
        }
    }

    private static func collect(_ expression: CompiledExpression, from entity: Int, after prefix: [Step], _ model: Model, into chains: inout [[Step]: Reads]) {
        switch expression {
        case .keyPath(let path):
            collect(path, from: entity, after: prefix, model, into: &chains)
        case .collection(_, let collection, let element):
            collect(collection, from: entity, after: prefix, model, into: &chains)
            guard let element, let (chain, destination) = extended(collection, from: entity, after: prefix, model) else { return }
            collect(element, from: destination, after: chain, model, into: &chains)
        case .constant, .list, .evaluatedObject, .object, .objects:
            break
        }
    }

    /// `prefix` extended by a key path that ends on a relationship (its steps and that
    /// relationship), with the entity it leads to.
    private static func extended(_ path: CompiledKeyPath, from entity: Int, after prefix: [Step], _ model: Model) -> ([Step], Int)? {
        guard case .relationship(let last, _, _) = path.terminal else { return nil }
        var current = entity
        var chain = prefix
        for number in path.steps.map(\.number) + [last] {
            guard model.descriptions.indices.contains(current), model.descriptions[current].destinations.indices.contains(number) else { return nil }
            let description = model.descriptions[current]
            chain.append(Step(destination: description.destinations[number], inverse: description.inverses[number]))
            current = description.destinations[number]
        }
        return (chain, current)
    }
}
