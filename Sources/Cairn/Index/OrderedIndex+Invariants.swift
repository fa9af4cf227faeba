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

    /// Checks the index after a change at `position` of chunk `index`: the count; the sizes and
    /// boundaries of the chunks from `index - 1` to `index + 1`; the order of the entries near
    /// `position` (the whole index while it is small).
    func checkInvariants(around index: Int, position: Int) throws(InvariantViolation) {
        if count <= Tuning.wholeCheckLimit { return try checkInvariants() }
        try checkChunks(max(0, index - 1)..<min(chunks.count, index + 2), near: position)
    }

    private func checkChunks(_ range: Range<Int>, near position: Int? = nil) throws(InvariantViolation) {
        let total = chunks.reduce(0) { $0 + $1.entries.count }
        try require(total == count, "OrderedIndex", "count is \(count), the chunks hold \(total) entries")
        for index in range {
            let all = chunks[index].entries
            try require(!all.isEmpty && all.count <= Tuning.orderedChunkLimit, "OrderedIndex", "chunk \(index) holds \(all.count) entries")
            let entries = position.map { all[max(0, min($0, all.count) - 2)..<min(all.count, $0 + 2)] } ?? all[...]
            for entry in entries { try require(entry.value != .null, "OrderedIndex", "chunk \(index) files a nil value") }
            for (before, after) in zip(entries, entries.dropFirst()) {
                try require(Self.precedes(before, after), "OrderedIndex", "chunk \(index): \(before.id) does not precede \(after.id)")
            }
            if index + 1 < chunks.count, let last = all.last, let next = chunks[index + 1].entries.first {
                try require(Self.precedes(last, next), "OrderedIndex", "the last entry of chunk \(index) does not precede the next chunk's first")
            }
        }
    }
}
