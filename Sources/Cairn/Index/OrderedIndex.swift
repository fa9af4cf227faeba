import CairnSupport

/// Objects of one entity in the order of one attribute's value: answers ranges (`<`, `>=`,
/// `BETWEEN`…), and `==` and `IN` for the attributes that have no hash index (numbers, dates,
/// booleans). Persistent (``OrderedRuns``): snapshots share it. Nil values are not filed.
///
/// An attribute whose values pack into 64 bits in order (``PackedKind``) keeps 16 bytes an
/// entry; any other keeps the value and the key. Should a value of another kind reach a packed
/// index (a model's type never lets it), the index turns into one of values and stays right.
struct OrderedIndex: Sendable {
    enum Storage: Sendable {
        case packed(PackedKind, OrderedRuns<PackedEntry>)
        case values(OrderedRuns<ValueEntry>)
    }

    /// The entries. Internal, not private, only so that the tests can damage it and see
    /// ``checkInvariants()`` fail.
    var storage: Storage

    /// An empty index, packed when `kind` is given.
    init(kind: PackedKind? = nil) {
        storage = kind.map { .packed($0, OrderedRuns()) } ?? .values(OrderedRuns())
    }

    private init(storage: Storage) { self.storage = storage }

    /// How many entries.
    var count: Int {
        switch storage {
        case .packed(_, let runs): runs.count
        case .values(let runs): runs.count
        }
    }

    /// Whether the index keeps packed entries.
    var isPacked: Bool {
        if case .packed = storage { return true }
        return false
    }

    mutating func insert(_ value: Value, _ id: ObjectID) {
        guard value != .null else { return }
        switch storage {
        case .packed(let kind, var runs):
            guard let bits = kind.bits(value) else {
                unpack()
                return insert(value, id)
            }
            storage = .values(OrderedRuns())  // leave the runs uniquely referenced while they change
            let position = runs.insert(PackedEntry(bits: bits, key: id.key))
            storage = .packed(kind, runs)
            checkAfterMutation { () throws(InvariantViolation) in try checkInvariants(around: position) }
        case .values(var runs):
            storage = .values(OrderedRuns())
            let position = runs.insert(ValueEntry(value: QueryValue.normalized(value), key: id.key))
            storage = .values(runs)
            checkAfterMutation { () throws(InvariantViolation) in try checkInvariants(around: position) }
        }
    }

    mutating func remove(_ value: Value, _ id: ObjectID) {
        guard value != .null else { return }
        var position: OrderedRuns<PackedEntry>.Position?
        switch storage {
        case .packed(let kind, var runs):
            guard let bits = kind.bits(value) else { return }  // never filed
            storage = .values(OrderedRuns())
            position = runs.remove(PackedEntry(bits: bits, key: id.key))
            storage = .packed(kind, runs)
        case .values(var runs):
            storage = .values(OrderedRuns())
            position = runs.remove(ValueEntry(value: QueryValue.normalized(value), key: id.key))
            storage = .values(runs)
        }
        if let position { checkAfterMutation { () throws(InvariantViolation) in try checkInvariants(around: position) } }
    }

    /// Whether `id` is filed under `value` (two binary searches; a nil value is never filed).
    func contains(_ value: Value, _ id: ObjectID) -> Bool {
        guard value != .null else { return false }
        switch storage {
        case .packed(let kind, let runs): return kind.bits(value).map { runs.contains(PackedEntry(bits: $0, key: id.key)) } ?? false
        case .values(let runs): return runs.contains(ValueEntry(value: QueryValue.normalized(value), key: id.key))
        }
    }

    /// A bound of a range.
    struct Bound {
        var value: Value
        var inclusive: Bool
    }

    /// The objects of `entity` whose value lies between the bounds (nil: unbounded), in index
    /// order.
    func objects(from lower: Bound?, to upper: Bound?, entity: Int) -> [ObjectID] {
        let keys: [UInt64] =
            switch storage {
            case .packed(let kind, let runs):
                runs.keys(from: start(runs, lower) { kind.value($0.bits) }, to: end(runs, upper) { kind.value($0.bits) })
            case .values(let runs):
                runs.keys(from: start(runs, lower, \.value), to: end(runs, upper, \.value))
            }
        return keys.map { ObjectID(entity: entity, key: $0) }
    }

    /// The objects of `entity` whose value equals `value` under `==`.
    func objects(equalTo value: Value, entity: Int) -> [ObjectID] {
        let bound = Bound(value: value, inclusive: true)
        return objects(from: bound, to: bound, entity: entity)
    }

    /// How many objects have a value between the bounds (without listing them: a few binary
    /// searches and a sum over the runs in between).
    func count(from lower: Bound?, to upper: Bound?) -> Int {
        switch storage {
        case .packed(let kind, let runs):
            runs.count(from: start(runs, lower) { kind.value($0.bits) }, to: end(runs, upper) { kind.value($0.bits) })
        case .values(let runs):
            runs.count(from: start(runs, lower, \.value), to: end(runs, upper, \.value))
        }
    }

    /// How many objects have a value equal under `==` to any of `values`, each counted once:
    /// each value's matches are one stretch of the index (the entries that order the same as
    /// it), so the stretches are merged where they overlap and the merged ones counted (a
    /// double constant's stretch on integers can hold several values, and take in another
    /// constant's).
    func count(equalToAny values: [Value]) -> Int {
        switch storage {
        case .packed(let kind, let runs): countUnion(runs, values) { kind.value($0.bits) }
        case .values(let runs): countUnion(runs, values, \.value)
        }
    }

    private func countUnion<Entry>(_ runs: OrderedRuns<Entry>, _ values: [Value], _ value: (Entry) -> Value) -> Int {
        typealias Position = OrderedRuns<Entry>.Position
        let stretches = values.map { constant -> (start: Position, end: Position) in
            let bound = Bound(value: constant, inclusive: true)
            return (start(runs, bound, value), end(runs, bound, value))
        }
        .filter { $0.start < $0.end }.sorted { $0.start < $1.start }
        var total = 0
        var current: (start: Position, end: Position)?
        for stretch in stretches {
            if let open = current, !(open.end < stretch.start) {
                current = (open.start, open.end < stretch.end ? stretch.end : open.end)
            } else {
                if let open = current { total += runs.count(from: open.start, to: open.end) }
                current = stretch
            }
        }
        if let open = current { total += runs.count(from: open.start, to: open.end) }
        return total
    }

    /// The position of the first entry in the range.
    private func start<Entry>(_ runs: OrderedRuns<Entry>, _ lower: Bound?, _ value: (Entry) -> Value) -> OrderedRuns<Entry>.Position {
        guard let lower else { return (0, 0) }
        return runs.firstPosition { entry in
            let order = QueryValue.order(value(entry), lower.value) ?? .orderedAscending
            return order == .orderedDescending || (lower.inclusive && order == .orderedSame)
        }
    }

    /// The position of the first entry past the range: beyond the upper bound, or a value that
    /// cannot be ordered against it (values of another kind, which never match).
    private func end<Entry>(_ runs: OrderedRuns<Entry>, _ upper: Bound?, _ value: (Entry) -> Value) -> OrderedRuns<Entry>.Position {
        guard let upper else { return (runs.runs.count, 0) }
        return runs.firstPosition { entry in
            guard let order = QueryValue.order(value(entry), upper.value) else { return true }
            return order == .orderedDescending || (!upper.inclusive && order == .orderedSame)
        }
    }

    /// Files the entries a builder gathered, sorted (``Builder/sort()``), for objects of
    /// `entity` the index does not hold yet (a large save's inserts). When they are many
    /// against the entries of the runs they fall among (one for every
    /// ``Tuning/mergedIndexShare`` of those, or more), they are merged with those into new
    /// runs in one pass (``OrderedRuns/merge(sorted:)``), where filing each would move part of
    /// a run; otherwise, and for entries of another kind than the index's, each is filed.
    mutating func insert(_ builder: Builder, entity: Int) {
        guard builder.packed.count + builder.values.count > 0 else { return }
        let before = count
        let merged: Range<Int>
        switch (storage, builder.kind) {
        case (.packed(let kind, var runs), let gathered?) where gathered == kind && runs.mergeRepays(builder.packed):
            storage = .values(OrderedRuns())  // leave the runs uniquely referenced while they change
            merged = runs.merge(sorted: builder.packed)
            storage = .packed(kind, runs)
        case (.values(var runs), nil) where runs.mergeRepays(builder.values):
            storage = .values(OrderedRuns())
            merged = runs.merge(sorted: builder.values)
            storage = .values(runs)
        default:
            for entry in builder.valueEntries { insert(entry.value, ObjectID(entity: entity, key: entry.key)) }
            return
        }
        checkAfterMutation { () throws(InvariantViolation) in
            try require(
                count == before + builder.packed.count + builder.values.count, "OrderedIndex",
                "a merge filed \(count - before) entries of \(builder.packed.count + builder.values.count)")
            try checkInvariants(runs: merged)
        }
    }

    /// Turns a packed index into one of values (a value of another kind came).
    private mutating func unpack() {
        guard case .packed(let kind, let runs) = storage else { return }
        var entries: [ValueEntry] = []
        entries.reserveCapacity(runs.count)
        for run in runs.runs {
            for entry in run.entries { entries.append(ValueEntry(value: kind.value(entry.bits), key: entry.key)) }
        }
        storage = .values(OrderedRuns(entries: entries))
    }
}

extension OrderedIndex {
    /// Gathers an index's entries, then builds it at once: one sort rather than an insert each.
    struct Builder {
        fileprivate var kind: PackedKind?
        fileprivate var packed: [PackedEntry] = []
        fileprivate var values: [ValueEntry] = []

        /// A builder of an index packed when `kind` is given.
        init(kind: PackedKind?) { self.kind = kind }

        /// Files `key` under `value` (nil is left out).
        mutating func add(_ value: Value, key: UInt64) {
            guard value != .null else { return }
            if let kind {
                if let bits = kind.bits(value) {
                    packed.append(PackedEntry(bits: bits, key: key))
                    return
                }
                // A value of another kind: every entry so far becomes a value entry.
                values = packed.map { ValueEntry(value: kind.value($0.bits), key: $0.key) }
                packed = []
                self.kind = nil
            }
            values.append(ValueEntry(value: QueryValue.normalized(value), key: key))
        }

        /// Makes room for `count` entries.
        mutating func reserveCapacity(_ count: Int) {
            if kind != nil { packed.reserveCapacity(count) } else { values.reserveCapacity(count) }
        }

        /// Files `key` under a value of `kind` packed as `bits` (``PackedKind/bits(encoded:)``),
        /// as ``add(_:key:)`` files the value.
        @inline(__always)
        mutating func add(bits: UInt64, of kind: PackedKind, key: UInt64) {
            guard self.kind == kind else { return add(kind.value(bits), key: key) }
            packed.append(PackedEntry(bits: bits, key: key))
        }

        /// Sorts the entries gathered so far (each thread of a bulk build sorts its own, so
        /// that joining them is a merge: ``build(joining:)``).
        mutating func sort() {
            packed.sort(by: PackedEntry.precedes)
            values.sort(by: ValueEntry.precedes)
        }

        /// The index of the entries of several builders of it, each sorted: their lists merged
        /// into the index's runs in one pass (or, when some met a value of another kind and
        /// keep values, all gathered as values and sorted again).
        static func build(joining parts: [Builder]) -> OrderedIndex {
            guard let first = parts.first else { return OrderedIndex(kind: nil) }
            let storage: Storage
            if let kind = first.kind, parts.allSatisfy({ $0.kind == kind }) {
                storage = .packed(kind, OrderedRuns(mergingSorted: parts.map(\.packed)))
            } else if parts.allSatisfy({ $0.kind == nil }) {
                storage = .values(OrderedRuns(mergingSorted: parts.map(\.values)))
            } else {
                storage = .values(OrderedRuns(entries: parts.flatMap(\.valueEntries)))
            }
            let index = OrderedIndex(storage: storage)
            checkAfterMutation { () throws(InvariantViolation) in if index.count <= Tuning.wholeCheckLimit { try index.checkInvariants() } }
            return index
        }

        /// The entries as value entries.
        fileprivate var valueEntries: [ValueEntry] {
            guard let kind else { return values }
            return packed.map { ValueEntry(value: kind.value($0.bits), key: $0.key) }
        }

        /// The index.
        func build() -> OrderedIndex {
            let index = OrderedIndex(storage: kind.map { .packed($0, OrderedRuns(entries: packed)) } ?? .values(OrderedRuns(entries: values)))
            checkAfterMutation { () throws(InvariantViolation) in if index.count <= Tuning.wholeCheckLimit { try index.checkInvariants() } }
            return index
        }
    }
}
