import CairnSupport

// The rules of an ordered index, checked after every change when `CAIRN_INTERNAL_CHECKS` is
// set: around the chunk the change touched, or the whole index while it is small.

extension OrderedIndex {
    /// Checks every rule of the index: no chunk empty or past ``Tuning/orderedChunkLimit``;
    /// entries in strictly ascending order (``precedes(_:_:)``) within and across chunks; no nil
    /// value filed; `count` is the number of entries.
    func checkInvariants() throws(InvariantViolation) {
        try checkChunks(chunks.indices)
    }

    /// Checks the chunks from `index - 1` to `index + 1` (the whole index while it is small), and
    /// the count.
    func checkInvariants(around index: Int) throws(InvariantViolation) {
        if count <= Tuning.wholeCheckLimit { return try checkInvariants() }
        try checkChunks(max(0, index - 1)..<min(chunks.count, index + 2))
    }

    private func checkChunks(_ range: Range<Int>) throws(InvariantViolation) {
        let total = chunks.reduce(0) { $0 + $1.entries.count }
        try require(total == count, "OrderedIndex", "count is \(count), the chunks hold \(total) entries")
        for index in range {
            let entries = chunks[index].entries
            try require(!entries.isEmpty && entries.count <= Tuning.orderedChunkLimit, "OrderedIndex", "chunk \(index) holds \(entries.count) entries")
            for entry in entries { try require(entry.value != .null, "OrderedIndex", "chunk \(index) files a nil value") }
            for (before, after) in zip(entries, entries.dropFirst()) {
                try require(Self.precedes(before, after), "OrderedIndex", "chunk \(index): \(before.id) does not precede \(after.id)")
            }
            if index + 1 < chunks.count, let last = entries.last, let next = chunks[index + 1].entries.first {
                try require(Self.precedes(last, next), "OrderedIndex", "the last entry of chunk \(index) does not precede the next chunk's first")
            }
        }
    }

    /// Whether `id` is filed under `value` (a nil value is never filed).
    func contains(_ value: Value, _ id: ObjectID) -> Bool {
        value != .null && objects(from: Bound(value: value, inclusive: true), to: Bound(value: value, inclusive: true)).contains(id)
    }
}
