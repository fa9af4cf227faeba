import CCairnSupport
import CairnSupport

/// The columns a chunk's scans made (``ChunkColumn``), true of its rows: a change to them
/// empties the cache (``ObjectChunk/dropColumns()``).
struct ColumnCache {
    /// By position: the column, or nil (none made yet).
    var byPosition: [ChunkColumn?] = []
    /// Positions whose values take too much room for a column.
    var refused: Set<Int> = []
}

extension ObjectChunk {
    /// The column of the values at `position`, made now if the chunk has none (or a stale one);
    /// nil when they take more than ``Tuning/chunkColumnBytes``. Made under the cache's lock, so
    /// that two scans never make one twice.
    func column(_ position: Int) -> ChunkColumn? {
        guard position >= 0 else { return nil }
        return columns.withLock { cache in
            if position < cache.byPosition.count, let made = cache.byPosition[position] { return made }
            guard !cache.refused.contains(position) else { return nil }
            let memo = RowMemo.allocate()
            defer { memo.deallocate() }
            // The rows a scan reads, as it reads them (a damaged row it skips is in no column).
            let made = ChunkColumn(position: position) { body in
                forEachRow(in: .all, firstKey: 0, memo: memo) { slot, id, row in body(slot, id.entity, row.bytes) }
            }
            columnsMade.store(true, ordering: .relaxed)
            guard let made else {
                cache.refused.insert(position)
                return nil
            }
            checkAfterMutation { () throws(InvariantViolation) in try checkColumn(made) }
            if position >= cache.byPosition.count { cache.byPosition += Array(repeating: nil, count: position + 1 - cache.byPosition.count) }
            cache.byPosition[position] = made
            return made
        }
    }

    /// Checks that a column says what the chunk's rows say: the filled slots and their entity,
    /// each slot's value bytes, and each decoded kind and number.
    func checkColumn(_ column: ChunkColumn) throws(InvariantViolation) {
        var filled = SlotMask.none
        var entities = Set<Int>()
        var failure: InvariantViolation?
        try require(Tuning.objectChunkSize == SlotMask.slots, "ChunkColumn", "chunks of \(Tuning.objectChunkSize) slots, masks of \(SlotMask.slots)")
        let memo = RowMemo.allocate()
        defer { memo.deallocate() }
        forEachRow(in: .all, firstKey: 0, memo: memo) { slot, id, row in
            guard failure == nil else { return }
            filled.insert(slot)
            entities.insert(id.entity)
            let value = row.bytes.value(column.position), kept = column.value(slot)
            let bit = { (mask: SlotMask) in mask.contains(slot) }
            let rules: [(Bool, String)] = [
                (RowBytes.same(value, kept), "holds other bytes"),
                (bit(column.nulls) == ValueEncoding.isNull(value), "null or not"),
                (bit(column.asciiTexts) == (ValueEncoding.text(value).map(RowComparison.isASCII) ?? false), "ASCII text or not"),
                (bit(column.integers) == (ValueEncoding.integer(value) != nil), "integer or not"),
                (!bit(column.integers) || column.integerValues?[slot] == ValueEncoding.integer(value), "its integer"),
                (bit(column.doubles) == (ValueEncoding.double(value).map { !$0.isNaN } ?? false), "double or not"),
                (bit(column.dates) == (ValueEncoding.dateSeconds(value).map { !$0.isNaN } ?? false), "date or not"),
                (!(bit(column.doubles) || bit(column.dates)) || column.doubleValues?[slot] == ValueEncoding.number(value), "its number"),
                (bit(column.trues) == (ValueEncoding.boolean(value) == true) && bit(column.falses) == (ValueEncoding.boolean(value) == false), "its boolean")
            ]
            if let broken = rules.first(where: { !$0.0 }) {
                failure = InvariantViolation("ChunkColumn", "slot \(slot) at position \(column.position): \(broken.1)")
            }
        }
        if let failure { throw failure }
        try require(filled == column.filled, "ChunkColumn", "filled slots differ from the chunk's")
        try require(
            column.entity == (entities.count == 1 ? entities.first : nil), "ChunkColumn", "entity \(column.entity.map(String.init) ?? "mixed") for \(entities)")
    }

    /// The column of the values at `position` if a scan made one already (nil otherwise: none
    /// is made).
    func existingColumn(_ position: Int) -> ChunkColumn? {
        guard position >= 0 else { return nil }
        return columns.withLock { cache in
            position < cache.byPosition.count ? cache.byPosition[position] : nil
        }
    }

    /// The bytes the chunk's columns hold.
    var columnBytes: Int {
        columns.withLock { cache in cache.byPosition.reduce(0) { $0 + ($1?.memoryBytes ?? 0) } }
    }

    /// The slots holding an object of a wanted entity (by entity index) whose row a scan reads:
    /// from `column` when its rows share one entity, else from the entries.
    func slots(of wanted: [Bool], column: ChunkColumn? = nil) -> SlotMask {
        if let column, let entity = column.entity { return wanted.indices.contains(entity) && wanted[entity] ? column.filled : .none }
        var mask = SlotMask.none
        let used = buffer.used, spilled = overflow?.used
        for slot in entries.indices.prefix(SlotMask.slots) {
            guard let entry = entries[slot], Int(entry.entity) < wanted.count, wanted[Int(entry.entity)] else { continue }
            // As ``forEachRow(in:firstKey:memo:_:)`` reads rows: one that lies outside its buffer
            // (damage) is skipped.
            let readable =
                switch entry.place {
                case .buffer(let start): start + Int(entry.length) <= used
                case .overflow(let start): spilled.map { start + Int(entry.length) <= $0 } ?? false
                case .large: large[slot] != nil
                }
            if readable { mask.insert(slot) }
        }
        return mask
    }

    /// Forgets the chunk's columns (its rows are changing), when it has any.
    func dropColumns() {
        guard columnsMade.load(ordering: .relaxed) else { return }
        columns.withLock { $0 = ColumnCache() }
        columnsMade.store(false, ordering: .relaxed)
    }

    /// Calls `body` with each slot of `mask` that holds a row, its object's ID and its row
    /// (borrowed from the buffer for the call: no reference counting per object), in slot order.
    /// The chunk's table of value starts is made first if it has none, unless `makingStarts`
    /// is false (a walk that reads a few values of each row once: ``IndexEntryGatherer``).
    func forEachRow(in mask: SlotMask, firstKey: UInt64, memo: RowMemo, makingStarts: Bool = true, _ body: (Int, ObjectID, BorrowedRow) -> Void) {
        let entries = entries
        let buffer = buffer
        let spill = overflow
        let starts = makingStarts ? scanStarts() : existingValueStarts()
        buffer.withBytes { all in
            let ahead = Tuning.prefetchDistance
            mask.forEach { slot in
                guard slot < entries.count, let entry = entries[slot] else { return }
                // The row a few slots on starts loading now (rows are read one after the
                // other, each walked from its start: without this, each waits for memory).
                if slot + ahead < entries.count, let next = entries[slot + ahead], case .buffer(let nextStart) = next.place, nextStart < all.count,
                    let base = all.baseAddress
                {
                    cairn_prefetch(base + nextStart)
                    cairn_prefetch(base + min(all.count - 1, nextStart + 64))
                }
                let id = ObjectID(entity: Int(entry.entity), key: firstKey | UInt64(slot))
                switch entry.place {
                case .buffer(let start):
                    let end = start + Int(entry.length)
                    guard end <= all.count else { return }
                    let rowStarts = starts?.entries(slot)
                    if rowStarts == nil { memo.reset() }
                    let bytes = RowBytes(
                        bytes: UnsafeRawBufferPointer(rebasing: all[start..<end]), count: Int(entry.count),
                        memo: rowStarts == nil ? memo : nil, starts: rowStarts, wideStarts: starts?.wide ?? false)
                    body(slot, id, BorrowedRow(bytes: bytes, storage: buffer, start: start))
                case .overflow(let at):
                    // A row replaced since the buffer was shared: walked from its start.
                    guard let spill else { return }
                    spill.withBytes { extra in
                        guard at + Int(entry.length) <= extra.count else { return }
                        let bytes = RowBytes(bytes: UnsafeRawBufferPointer(rebasing: extra[at..<(at + Int(entry.length))]), count: Int(entry.count))
                        body(slot, id, BorrowedRow(bytes: bytes, storage: spill, start: at))
                    }
                case .large:
                    large[slot]?.withBorrowed { body(slot, id, $0) }
                }
            }
        }
    }

    /// Shows the objects of the wanted entities (by entity index) that pass the visitor's
    /// filter to the visitor: the filter decided on the chunk's columns where it can, on the
    /// rows for the rest.
    func visit<Visitor: RowVisitor>(_ firstKey: UInt64, _ wanted: [Bool], _ memo: RowMemo, _ visitor: inout Visitor) {
        let matches: SlotMask
        if let filter = visitor.filter {
            var accepted: SlotMask
            let rowsToTest: SlotMask
            if let decided = filter.rows.evaluate(columnsOf: self, wanted: wanted) {
                (accepted, rowsToTest) = decided
            } else {
                (accepted, rowsToTest) = (.none, slots(of: wanted))
            }
            if !rowsToTest.isEmpty {
                forEachRow(in: rowsToTest, firstKey: firstKey, memo: memo) { slot, id, row in
                    if filter.accepts(id, row) { accepted.insert(slot) }
                }
            }
            matches = accepted
        } else {
            matches = slots(of: wanted)
        }
        guard !matches.isEmpty else { return }
        visitor.visitMatches(matches, in: ChunkScan(chunk: self, firstKey: firstKey, memo: memo))
    }
}

/// A chunk as a scan's visitor sees it (``RowVisitor/visitMatches(_:in:)``): its rows, and its
/// columns.
struct ChunkScan {
    let chunk: ObjectChunk
    /// The key of the chunk's first slot.
    let firstKey: UInt64
    let memo: RowMemo

    /// The column of the values at `position`, made now if need be (nil: read the rows).
    func column(_ position: Int) -> ChunkColumn? { chunk.column(position) }

    /// The column of the values at `position` if one was made (nil: read the rows).
    func existingColumn(_ position: Int) -> ChunkColumn? { chunk.existingColumn(position) }

    /// The ID of the object in `slot` (which must hold one).
    func id(_ slot: Int) -> ObjectID {
        ObjectID(entity: Int(chunk.entries[slot]?.entity ?? 0), key: firstKey | UInt64(slot))
    }

    /// Calls `body` with each object of `mask`, its ID and its borrowed row, in slot order.
    func forEachRow(in mask: SlotMask, _ body: (Int, ObjectID, BorrowedRow) -> Void) {
        chunk.forEachRow(in: mask, firstKey: firstKey, memo: memo, body)
    }
}

/// A scan's filter: a flattened predicate and what reads the objects its comparisons across
/// relationships reach.
struct ScanFilter {
    let rows: RowFilter
    let reader: ObjectReader

    /// Whether the object with this row passes.
    @inline(__always)
    func accepts(_ id: ObjectID, _ row: BorrowedRow) -> Bool { rows.evaluate(id, row, reader) }
}
