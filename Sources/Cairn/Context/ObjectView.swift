/// An object's values as a context sees them: committed values in their row (decoded when
/// read) or pending values, under the context's own changes.
struct ObjectView: Sendable {
    enum Base: Sendable {
        case row(Row)
        case values([PropertyValue])
    }

    var base: Base
    var changes: PropertyChanges?

    /// Value `position`.
    subscript(position: Int) -> PropertyValue {
        if let change = changes?[position] { return change }
        switch base {
        case .row(let row): return row.value(position)
        case .values(let values): return values[position]
        }
    }

    /// Whether value `position` is an attribute's null: a stored row's is told by its tag
    /// alone, without decoding the value.
    func isNull(_ position: Int) -> Bool {
        func null(_ value: PropertyValue) -> Bool {
            if case .attribute(.null) = value { return true }
            return false
        }
        if let change = changes?[position] { return null(change) }
        switch base {
        case .row(let row): return row.withValueBytes(position) { bytes in bytes.isEmpty || ValueEncoding.isNull(bytes) }
        case .values(let values): return null(values[position])
        }
    }

    /// The number of values.
    var count: Int {
        switch base {
        case .row(let row): row.count
        case .values(let values): values.count
        }
    }

    /// The bytes of the stored row it reads (0 for a new object's values).
    var storedLength: Int {
        if case .row(let row) = base { return row.length }
        return 0
    }

    /// The same view with its stored row copied into a buffer of its own (a row of a chunk
    /// shares the chunk's buffer: a view kept for long would keep the whole buffer alive).
    var detached: ObjectView {
        guard case .row(let row) = base, let own = row.copied(into: RowStorage.make(capacity: row.length)) else { return self }
        return ObjectView(base: .row(own), changes: changes)
    }

    /// Every value.
    var allValues: [PropertyValue] {
        var values: [PropertyValue]
        switch base {
        case .row(let row): values = row.values
        case .values(let all): values = all
        }
        for (position, value) in changes ?? PropertyChanges() { values[position] = value }
        return values
    }

    /// Lays more changes over this view (a context's own over its parent's).
    mutating func apply(_ more: PropertyChanges) {
        var merged = changes ?? PropertyChanges()
        merged.merge(more)
        changes = merged
    }
}
