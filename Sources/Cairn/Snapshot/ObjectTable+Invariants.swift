import CairnSupport

// The rules of the object table and its chunks, checked after every change when
// `CAIRN_INTERNAL_CHECKS` is set (a slot after each store, a whole chunk when it fills, is
// compacted or loses an object, the whole table while it is small).

extension ObjectChunk {
    /// Checks every rule of the chunk: 256 slots; `live` counts the filled ones; a row in a
    /// buffer (the chunk's or its overflow buffer) lies within its used bytes, and no two
    /// overlap; the bytes the two use are the live rows' plus `garbage`; a slot whose row is
    /// long (`start == .max`) has it in `large`, and `large` holds nothing else; the table of
    /// value starts, if any, is what the rows make (``checkValueStarts()``).
    func checkInvariants() throws(InvariantViolation) {
        try require(entries.count == Tuning.objectChunkSize, "ObjectChunk", "\(entries.count) slots, not \(Tuning.objectChunkSize)")
        var filled = 0, inBuffers = 0, longRows = 0
        var ranges: [(start: Int, end: Int)] = []  // overflow rows from `overflowStart` on
        for slot in entries.indices {
            try checkSlot(slot)
            guard let entry = entries[slot] else { continue }
            filled += 1
            if entry.place == .large {
                longRows += 1
            } else {
                inBuffers += Int(entry.length)
                ranges.append((Int(entry.start), Int(entry.start) + Int(entry.length)))
            }
        }
        let used = buffer.used + (overflow?.used ?? 0)
        try require(live == filled, "ObjectChunk", "live is \(live) but \(filled) slots are filled")
        try require(large.count == longRows, "ObjectChunk", "\(large.count) long rows kept for \(longRows) long slots")
        try require(
            used == inBuffers + garbage, "ObjectChunk", "the buffers use \(used) bytes, rows hold \(inBuffers) and garbage is \(garbage)")
        ranges.sort { $0.start < $1.start }
        for (before, after) in zip(ranges, ranges.dropFirst()) {
            try require(before.end <= after.start, "ObjectChunk", "rows at \(before.start) and \(after.start) overlap")
        }
        try checkValueStarts()
    }

    /// Checks the rules of one slot (see ``checkInvariants()``).
    func checkSlot(_ slot: Int) throws(InvariantViolation) {
        try require(live >= 0 && live <= entries.count, "ObjectChunk", "live is \(live)")
        let used = buffer.used + (overflow?.used ?? 0)
        try require(garbage >= 0 && garbage <= used, "ObjectChunk", "garbage is \(garbage) of \(used) bytes")
        guard let entry = entries[slot] else {
            try require(large[slot] == nil, "ObjectChunk", "empty slot \(slot) keeps a long row")
            return
        }
        switch entry.place {
        case .large:
            try require(large[slot] != nil, "ObjectChunk", "slot \(slot) is long but has no row")
        case .buffer(let start):
            try require(large[slot] == nil, "ObjectChunk", "slot \(slot) is in the buffer and keeps a long row")
            try require(
                start + Int(entry.length) <= buffer.used, "ObjectChunk",
                "slot \(slot)'s row ends at \(start + Int(entry.length)), past the \(buffer.used) bytes used")
        case .overflow(let start):
            try require(large[slot] == nil, "ObjectChunk", "slot \(slot) is in the overflow buffer and keeps a long row")
            let extra = overflow?.used ?? 0
            try require(
                start + Int(entry.length) <= extra, "ObjectChunk",
                "slot \(slot)'s row ends at \(start + Int(entry.length)) of the overflow buffer, past the \(extra) bytes used")
        }
    }
}

extension ObjectTable {
    /// Checks every rule of the table: each chunk's (``ObjectChunk/checkInvariants()``) and the
    /// directory's; no chunk is empty (a chunk whose objects are all removed is dropped); every
    /// object's entity is one of the model's; `counts` holds each entity's number of objects.
    func checkInvariants() throws(InvariantViolation) {
        try chunks.checkInvariants()
        var found = Array(repeating: 0, count: counts.count)
        for (number, chunk) in chunks.all {
            try chunk.checkInvariants()
            try require(chunk.live > 0, "ObjectTable", "chunk \(number) is empty and still listed")
            for case let entry? in chunk.entries {
                try require(Int(entry.entity) < counts.count, "ObjectTable", "an object of chunk \(number) has entity \(entry.entity) of \(counts.count)")
                found[Int(entry.entity)] += 1
            }
        }
        try require(found == counts, "ObjectTable", "counts by entity are \(counts), the chunks hold \(found)")
    }

    /// The check after a change to `slots` of the chunk holding `key`: those slots, the whole
    /// chunk when it is full or lost an object (`wholeChunk`), the whole table while it is small.
    func checkAfterChange(key: UInt64, slots: Range<Int>, wholeChunk: Bool = false) {
        checkAfterMutation { () throws(InvariantViolation) in
            if counts.reduce(0, +) <= Tuning.wholeCheckLimit { return try checkInvariants() }
            guard let chunk = chunks[key >> Tuning.objectChunkShift] else { return }
            if wholeChunk || chunk.live == Tuning.objectChunkSize { return try chunk.checkInvariants() }
            for slot in slots.clamped(to: 0..<Tuning.objectChunkSize) { try chunk.checkSlot(slot) }
        }
    }
}

extension ChunkDirectory {
    /// Checks the directory's rules: each leaf is empty or holds ``Tuning/directoryLeafSize``
    /// places; the hash trie holds only numbers past ``Tuning/directoryNearLimit``.
    func checkInvariants() throws(InvariantViolation) {
        for (index, leaf) in leaves.enumerated() {
            try require(leaf.isEmpty || leaf.count == Tuning.directoryLeafSize, "ChunkDirectory", "leaf \(index) has \(leaf.count) places")
        }
        for key in far.keys {
            try require(key.value >= Tuning.directoryNearLimit, "ChunkDirectory", "chunk \(key.value) is in the trie, below the near limit")
        }
    }
}
