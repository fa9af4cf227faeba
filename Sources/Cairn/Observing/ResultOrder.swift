import Foundation

/// The order of a fetch's matches, one object at a time: by the sort keys' values as the fetch
/// reads them (``PreparedQuery/sortValue(_:_:_:_:)``: nil first, strings folded for a
/// case-insensitive key, values of different kinds as queries order them), then by object ID,
/// the whole order reversed for a request that ``FetchRequest/reversesOrder``. The same order
/// as ``ObjectContext/fetch(_:)``'s for the values an attribute holds.
struct ResultOrder: Sendable {
    let query: PreparedQuery

    /// One object's place in the order: its sort values at one snapshot, and its ID.
    struct Key: Sendable {
        var values: [Value]
        var id: ObjectID
    }

    /// The key of object `id` read from `snapshot`; nil when it is not there.
    func key(_ id: ObjectID, in snapshot: StoreSnapshot) -> Key? {
        guard let record = snapshot.record(id) else { return nil }
        let view = ObjectView(base: .row(record.row), changes: nil)
        let reader = ObjectReader.committed(snapshot)
        return Key(values: query.sortPaths.indices.map { query.sortValue($0, id, view, reader) }, id: id)
    }

    /// Whether `a` comes before `b`.
    func precedes(_ a: Key, _ b: Key) -> Bool {
        query.request.reversesOrder ? ascendingOrder(b, a) : ascendingOrder(a, b)
    }

    /// Whether `a` comes before `b` before any reversal.
    private func ascendingOrder(_ a: Key, _ b: Key) -> Bool {
        for (index, key) in query.request.sortKeys.enumerated() where index < a.values.count && index < b.values.count {
            switch Self.compare(a.values[index], b.values[index]) {
            case .orderedAscending: return key.ascending
            case .orderedDescending: return !key.ascending
            case .orderedSame: continue
            }
        }
        return a.id < b.id
    }

    /// Two sort values compared: nil first, then as queries order values (values they cannot
    /// order count as equal, as the fetch's sort counts them).
    static func compare(_ a: Value, _ b: Value) -> ComparisonResult {
        switch (a, b) {
        case (.null, .null): return .orderedSame
        case (.null, _): return .orderedAscending
        case (_, .null): return .orderedDescending
        default: return QueryValue.order(a, b) ?? .orderedSame
        }
    }
}
