/// How a fetch finds its candidates: through the uniqueness index, an attribute's index (its
/// hash index, or its ordered index), or by scanning every object of the entity. Every candidate is
/// then checked against the whole predicate (unless the index answers exactly:
/// ``findsExactly(_:)``), and the context's unsaved changes are added.
enum QueryPlan {
    /// Every object of the entities.
    case scan
    /// `==` on every attribute of a uniqueness constraint, or `IN` on the one attribute of a
    /// constraint: the keys (each the constraint's values, in its order) to look up.
    case unique(UniquenessConstraint, keys: [[Value]])
    /// `==` or `IN` on an indexed attribute: through its hash index when it has one
    /// (`hashed`), else its ordered index.
    case equal(attribute: String, position: Int, values: [Value], hashed: Bool)
    /// A range on an indexed attribute.
    case range(attribute: String, position: Int, lower: OrderedIndex.Bound?, upper: OrderedIndex.Bound?)
    /// `SELF == object` or `SELF IN {objects}`: the objects named.
    case objects([ObjectID])

    /// The plan in words, for ``ObjectContext/explain(_:)``.
    func explanation(entity: String, predicate: Bool) -> String {
        let check = predicate ? ", then the whole predicate on each" : ""
        switch self {
        case .scan:
            return "scan every \(entity)" + (predicate ? " and evaluate the predicate on each" : "")
        case .objects(let ids):
            return "read the \(ids.count) object\(ids.count == 1 ? "" : "s") named by SELF" + check
        case .unique(let constraint, let keys):
            let names = constraint.names.joined(separator: ", ")
            let what =
                keys.count == 1
                ? "= " + keys[0].map(\.description).joined(separator: ", ")
                : "IN {\(keys.map { $0.map(\.description).joined(separator: ", ") }.joined(separator: ", "))}"
            return "look up \(entity)(\(names)) \(what) in the uniqueness index" + check
        case .equal(let attribute, _, let values, let hashed):
            let what = values.count == 1 ? "= \(values[0])" : "IN {\(values.map(\.description).joined(separator: ", "))}"
            return "look up \(entity).\(attribute) \(what) in its \(hashed ? "hash" : "ordered") index" + check
        case .range(let attribute, _, let lower, let upper):
            let low = lower.map { ($0.inclusive ? "≥ " : "> ") + $0.value.description }
            let high = upper.map { ($0.inclusive ? "≤ " : "< ") + $0.value.description }
            return "read \(entity).\(attribute) \([low, high].compactMap { $0 }.joined(separator: " and ")) from its ordered index"
                + " (a scan instead when the range holds more than one object in sixteen)" + check
        }
    }

    /// Chooses a plan: a uniqueness constraint pinned by `==` (or `IN` on its one attribute),
    /// else `==`/`IN` on an indexed attribute, else a range on one, else a scan.
    static func choose(_ predicate: CompiledPredicate?, entity: EntityDescription, family: Set<Int>, model: Model) -> QueryPlan {
        guard let predicate else { return .scan }
        let conjuncts: [CompiledComparison]
        switch predicate {
        case .comparison(let comparison): conjuncts = [comparison]
        case .and(let parts): conjuncts = parts.compactMap { if case .comparison(let comparison) = $0 { comparison } else { nil } }
        default: return .scan
        }
        // SELF compared with objects given as arguments: those objects are the candidates.
        for comparison in conjuncts where comparison.modifier == .direct {
            guard case .evaluatedObject = comparison.lhs else { continue }
            switch (comparison.op, comparison.rhs) {
            case (.equal, .object(let id)): return .objects([id])
            case (.in, .objects(let ids)): return .objects(ids)
            default: continue
            }
        }
        var equalities: [Int: [Value]] = [:]
        var lowers: [Int: OrderedIndex.Bound] = [:]
        var uppers: [Int: OrderedIndex.Bound] = [:]
        for comparison in conjuncts {
            guard comparison.modifier == .direct, comparison.options.isEmpty,
                case .keyPath(let path) = comparison.lhs, let position = path.directAttribute
            else { continue }
            switch (comparison.op, comparison.rhs) {
            case (.equal, .constant(let value)) where value != .null: equalities[position] = [value]
            case (.in, .list(let values)) where !values.contains(.null): equalities[position] = equalities[position] ?? values
            case (.less, .constant(let value)) where value != .null: uppers[position] = .init(value: value, inclusive: false)
            case (.lessOrEqual, .constant(let value)) where value != .null: uppers[position] = .init(value: value, inclusive: true)
            case (.greater, .constant(let value)) where value != .null: lowers[position] = .init(value: value, inclusive: false)
            case (.greaterOrEqual, .constant(let value)) where value != .null: lowers[position] = .init(value: value, inclusive: true)
            case (.between, .list(let bounds)) where bounds.count == 2 && !bounds.contains(.null):
                lowers[position] = .init(value: bounds[0], inclusive: true)
                uppers[position] = .init(value: bounds[1], inclusive: true)
            default: continue
            }
        }
        for constraint in entity.uniqueness {
            // A key the index can find: values whose encoding is canonical and fits the type.
            func findable(_ values: [Value]) -> Bool {
                values.allSatisfy(\.isByteCanonical) && zip(constraint.positions, values).allSatisfy { $1.fits(entity.attributes[$0].type) }
            }
            if constraint.positions.count == 1, let values = equalities[constraint.positions[0]], findable(values) {
                return .unique(constraint, keys: values.map { [$0] })
            }
            let values = constraint.positions.compactMap { equalities[$0]?.count == 1 ? equalities[$0]?[0] : nil }
            guard values.count == constraint.positions.count, findable(values) else { continue }
            return .unique(constraint, keys: [values])
        }
        func indexed(_ position: Int) -> Bool {
            family.allSatisfy { model.indexLayout.slot(entity: $0, position: position) != nil || model.descriptions[$0].isAbstract }
        }
        if let (position, values) = equalities.sorted(by: { $0.value.count < $1.value.count }).first(where: { indexed($0.key) }) {
            let attribute = entity.attributes[position]
            return .equal(attribute: attribute.name, position: position, values: values, hashed: PackedKind(attribute.type) == nil)
        }
        if let position = Set(lowers.keys).union(uppers.keys).sorted().first(where: indexed) {
            return .range(attribute: entity.attributes[position].name, position: position, lower: lowers[position], upper: uppers[position])
        }
        return .scan
    }

    /// Whether the plan reads every object of `snapshot` (a scan, or a range too wide for its
    /// index), so that ``candidates(in:family:)`` gives nil.
    func scans(_ snapshot: StoreSnapshot, family: Set<Int>) -> Bool {
        switch self {
        case .scan: true
        case .range(_, let position, let lower, let upper): Self.rangeIsWide(snapshot, family, position, lower, upper)
        case .unique, .equal, .objects: false
        }
    }

    private static func rangeIsWide(
        _ snapshot: StoreSnapshot, _ family: Set<Int>, _ position: Int, _ lower: OrderedIndex.Bound?, _ upper: OrderedIndex.Bound?
    ) -> Bool {
        let slots = family.sorted().compactMap { snapshot.model.indexLayout.slot(entity: $0, position: position) }
        let inRange = slots.reduce(0) { $0 + snapshot.indexes[$1].ordered.count(from: lower, to: upper) }
        let objects = family.reduce(0) { $0 + (snapshot.objects.counts.indices.contains($1) ? snapshot.objects.counts[$1] : 0) }
        return inRange > widestRange(of: objects)
    }

    /// Whether the plan's candidates are exactly the objects that match `predicate`, with no
    /// row to read: the predicate is one `==` or `IN` on the indexed attribute, answered by its
    /// ordered index, which finds the values that order the same as the constant: by the rules
    /// of `==` (``QueryValue/order(_:_:)``), exactly its matches. (A hash index's candidates
    /// are only those that share a hash.)
    func findsExactly(_ predicate: CompiledPredicate?) -> Bool {
        guard case .equal(_, let position, _, let hashed) = self, !hashed, case .comparison(let comparison)? = predicate,
            comparison.modifier == .direct, comparison.options.isEmpty, [.equal, .in].contains(comparison.op),
            case .keyPath(let path) = comparison.lhs, path.directAttribute == position
        else { return false }
        return true
    }

    /// The committed objects the plan finds in `snapshot` (nil for a scan), in no set order.
    func candidates(in snapshot: StoreSnapshot, family: Set<Int>) -> [ObjectID]? {
        switch self {
        case .scan:
            return nil
        case .objects(let ids):
            return Array(Set(ids.filter { family.contains($0.entity) && snapshot.record($0) != nil }))
        case .unique(let constraint, let keys):
            let holders = keys.compactMap { values in
                snapshot.holder(of: UniqueKey(owner: constraint.owner, number: constraint.number, values: values))
            }
            return Array(Set(holders.filter { family.contains($0.entity) }))
        case .equal(_, let position, let values, _):
            // In the objects' order when there is one value (each entity's list is in key order).
            var ids: [ObjectID] = []
            for entity in family.sorted() {
                guard let slot = snapshot.model.indexLayout.slot(entity: entity, position: position) else { continue }
                for value in values { snapshot.indexes[slot].appendObjects(equalTo: value, entity: entity, to: &ids) }
            }
            return values.count > 1 ? Array(Set(ids)) : ids
        case .range(_, let position, let lower, let upper):
            // A wide range reads faster by a scan (in the table's order) than object by object.
            if Self.rangeIsWide(snapshot, family, position, lower, upper) { return nil }
            let slots = family.sorted().compactMap { snapshot.model.indexLayout.slot(entity: $0, position: position) }
            return slots.flatMap { snapshot.indexes[$0].ordered.objects(from: lower, to: upper, entity: snapshot.model.indexLayout.slots[$0].entity) }
        }
    }

    /// How many committed objects an `==` or `IN` plan on ordered indexes finds in `snapshot`,
    /// counted by the indexes without listing them (binary searches, and a sum of the sizes of
    /// the runs in between), each object once (``OrderedIndex/count(equalToAny:)``); nil for
    /// another plan. Exactly the matches when ``findsExactly(_:)`` holds.
    func count(in snapshot: StoreSnapshot, family: Set<Int>) -> Int? {
        guard case .equal(_, let position, let values, false) = self else { return nil }
        let layout = snapshot.model.indexLayout
        return family.reduce(0) { total, entity in
            guard let slot = layout.slot(entity: entity, position: position) else { return total }
            return total + snapshot.indexes[slot].ordered.count(equalToAny: values)
        }
    }

    /// The most objects a range reads through its ordered index, out of `objects`: beyond that
    /// (one in sixteen, and at least a few thousand), the scan is cheaper.
    static func widestRange(of objects: Int) -> Int {
        max(objects / 16, 4096)
    }
}
