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

    /// The fetched entities.
    let family: Set<Int>
    /// Each chain of relationships the predicate or a sort key follows from the fetched entity
    /// (each prefix of a longer one included).
    let chains: [[Step]]
    /// Each entity's family (itself and its sub-entities), by index.
    private let families: [Set<Int>]
    /// Each entity's attribute count (where its relationships start), by index.
    private let attributeCounts: [Int]

    init(_ query: PreparedQuery) {
        family = query.family
        let model = query.model
        families = model.descriptions.map(\.family)
        attributeCounts = model.descriptions.map(\.attributes.count)
        var chains = Set<[Step]>()
        let root = query.entity.index
        for path in query.sortPaths { Self.collect(path, from: root, after: [], model, into: &chains) }
        if let predicate = query.predicate { Self.collect(predicate, from: root, after: [], model, into: &chains) }
        self.chains = chains.sorted { $0.count < $1.count }
    }

    /// The fetched objects whose membership or place a change to the objects `changed` can
    /// change, as the two snapshots link them (nil: one of them cannot be traced: refetch).
    func affected(by changed: some Sequence<ObjectID>, before: StoreSnapshot, after: StoreSnapshot) -> Set<ObjectID>? {
        var roots = Set<ObjectID>()
        for id in changed {
            if family.contains(id.entity) { roots.insert(id) }
            for chain in chains {
                guard let depth = chain.indices.last, families[chain[depth].destination].contains(id.entity) else { continue }
                // (A relationship without an inverse cannot be followed back.)
                guard chain.allSatisfy({ $0.inverse != nil }) else { return nil }
                for snapshot in [before, after] { roots.formUnion(back(from: [id], along: chain, in: snapshot)) }
            }
        }
        return roots
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

    /// The chains a key path follows (each prefix that leads to a related object).
    private static func collect(_ path: CompiledKeyPath, from entity: Int, after prefix: [Step], _ model: Model, into chains: inout Set<[Step]>) {
        var current = entity
        var chain = prefix
        // (A key path ending on a relationship reads the related objects' IDs, which the object
        // reaching them holds: its last relationship adds no chain of its own.)
        for step in path.steps {
            guard model.descriptions.indices.contains(current), model.descriptions[current].destinations.indices.contains(step.number) else { return }
            let description = model.descriptions[current]
            chain.append(Step(destination: description.destinations[step.number], inverse: description.inverses[step.number]))
            chains.insert(chain)
            current = description.destinations[step.number]
        }
    }

    /// The chains a predicate's key paths follow, `SUBQUERY` and collection operators included.
    private static func collect(_ predicate: CompiledPredicate, from entity: Int, after prefix: [Step], _ model: Model, into chains: inout Set<[Step]>) {
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
            chains.insert(chain)
            collect(collection, from: entity, after: prefix, model, into: &chains)
            collect(inner, from: destination, after: chain, model, into: &chains)
        }
    }

    private static func collect(_ expression: CompiledExpression, from entity: Int, after prefix: [Step], _ model: Model, into chains: inout Set<[Step]>) {
        switch expression {
        case .keyPath(let path):
            collect(path, from: entity, after: prefix, model, into: &chains)
        case .collection(_, let collection, let element):
            collect(collection, from: entity, after: prefix, model, into: &chains)
            guard let element, let (chain, destination) = extended(collection, from: entity, after: prefix, model) else { return }
            chains.insert(chain)
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
