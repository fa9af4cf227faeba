import CairnLog
import CairnSupport
import Synchronization

/// One chunk of the ``ObjectTable``: 256 slots, their rows' bytes in one buffer (and the rows
/// replaced since it was shared in a small second one, `overflow`), and per slot where its row
/// is, its version and its entity (an ``Entry``, 24 bytes). Mutated only when uniquely
/// referenced (``ObjectTable`` copies a shared chunk first).
final class ObjectChunk: @unchecked Sendable {
    /// Where a slot's row is, and what the table knows of its object.
    struct Entry {
        /// Where the row starts: in the chunk's buffer, in its overflow buffer (from
        /// ``ObjectChunk/overflowStart`` on), or in `large` (`.max`); see ``place``.
        var start: UInt32
        var length: UInt32
        var version: LSN
        var entity: UInt16
        var count: UInt16

        /// Where the row is.
        var place: Place {
            if start == .max { return .large }
            return start >= ObjectChunk.overflowStart ? .overflow(Int(start - ObjectChunk.overflowStart)) : .buffer(Int(start))
        }
    }

    /// Where a slot's row is: at an offset of the buffer or of the overflow buffer, or kept on
    /// its own in `large`.
    enum Place: Equatable {
        case buffer(Int)
        case overflow(Int)
        case large
    }

    /// `Entry.start` of a row in the overflow buffer: this plus its offset there.
    static let overflowStart: UInt32 = 1 << 31

    // Safety: a chunk reachable from a published snapshot is never mutated: `modify` copies
    // any chunk that is not uniquely referenced first, and a buffer (`buffer` or `overflow`)
    // is appended to only while the chunk alone refers to it; a shared one is replaced by a
    // new buffer. (So no two accesses can overlap, and the dynamic exclusivity check, a cost
    // at every access, is off.)
    @exclusivity(unchecked) var entries: [Entry?]
    @exclusivity(unchecked) var buffer: RowStorage
    /// Rows stored while `buffer` was shared or full (a save replacing a few rows of a chunk
    /// an older snapshot still reads): a small buffer, copied instead of `buffer` when shared.
    @exclusivity(unchecked) var overflow: RowStorage?
    /// Rows too long for the buffer, by slot.
    @exclusivity(unchecked) var large: [Int: Row] = [:]
    @exclusivity(unchecked) var live: Int
    /// Bytes of the two buffers no longer used by a row (replaced or deleted rows).
    @exclusivity(unchecked) var garbage: Int
    /// Where the values of each row start: made when the chunk fills (or a full chunk is
    /// loaded from a base), or by the first scan that finds none; dropped when a row is
    /// replaced or removed (a row added later has no entry and is walked).
    private let valueStarts: Mutex<ValueStarts?>
    /// The columns scans made of the chunk's rows, by position (``ChunkColumn``).
    let columns = Mutex(ColumnCache())
    /// Whether `columns` may hold a column: a change to the rows then drops them at once.
    let columnsMade = Atomic(false)

    init() {
        entries = Array(repeating: nil, count: Tuning.objectChunkSize)
        buffer = RowStorage.make(capacity: 0)
        live = 0
        garbage = 0
        valueStarts = Mutex(nil)
    }

    /// A chunk of these rows (``loaded(_:)``).
    init(entries: [Entry?], buffer: RowStorage, large: [Int: Row], live: Int) {
        self.entries = entries
        self.buffer = buffer
        self.large = large
        self.live = live
        garbage = 0
        valueStarts = Mutex(nil)
    }

    /// Sets the table of value starts of a chunk whose rows have not changed since it was made.
    func setValueStarts(_ starts: ValueStarts) {
        valueStarts.withLock { $0 = starts }
    }

    init(copying other: ObjectChunk) {
        entries = other.entries
        buffer = other.buffer
        overflow = other.overflow
        large = other.large
        live = other.live
        garbage = other.garbage
        // Offsets within rows: true of the copy's rows too, until one changes.
        valueStarts = Mutex(other.valueStarts.withLock { $0 })
    }

    func record(_ slot: Int) -> ObjectRecord? {
        guard let entry = entries[slot] else { return nil }
        let row =
            storage(entry.place).map { buffer, start in Row.view(buffer, start: start, length: Int(entry.length), count: Int(entry.count)) }
            ?? large[slot] ?? Row.make(count: 0, bytes: UnsafeRawBufferPointer(start: nil, count: 0))
        return ObjectRecord(row: row, version: entry.version, entity: Int(entry.entity))
    }

    /// Calls `body` with every filled slot in order: its slot, version, entity and row bytes
    /// (borrowed for the call).
    func forEachRow(_ body: (Int, LSN, Int, RowBytes) throws -> Void) rethrows {
        // The two buffers are borrowed once, not once per row.
        try buffer.withBytes { main in
            try (overflow ?? buffer).withBytes { spill in
                for slot in entries.indices {
                    guard let entry = entries[slot] else { continue }
                    let all: UnsafeRawBufferPointer, start: Int
                    switch entry.place {
                    case .buffer(let offset): (all, start) = (main, offset)
                    case .overflow(let offset): (all, start) = (overflow == nil ? UnsafeRawBufferPointer(start: nil, count: 0) : spill, offset)
                    case .large:
                        if let row = large[slot] { try row.withBorrowed { try body(slot, entry.version, Int(entry.entity), $0.bytes) } }
                        continue
                    }
                    let end = min(all.count, start + Int(entry.length))
                    try body(
                        slot, entry.version, Int(entry.entity),
                        RowBytes(bytes: UnsafeRawBufferPointer(rebasing: all[min(start, end)..<end]), count: Int(entry.count)))
                }
            }
        }
    }

    /// The buffer holding a row at `place` and the row's offset in it (nil: a long row).
    func storage(_ place: Place) -> (RowStorage, Int)? {
        switch place {
        case .buffer(let start): return (buffer, start)
        case .overflow(let start): return overflow.map { ($0, start) }
        case .large: return nil
        }
    }

    /// Puts a record in a slot (the slot's previous row, if any, becomes garbage).
    func store(_ record: ObjectRecord, slot: Int) {
        record.row.withBorrowed { store($0, version: record.version, entity: record.entity, slot: slot) }
    }

    /// Whether a row goes in a chunk's buffers (else it keeps a buffer of its own, `large`).
    static func fitsBuffer(length: Int, entity: Int, count: Int) -> Bool {
        length < Tuning.largeRow && entity <= Int(UInt16.max) && count <= Int(UInt16.max)
    }

    /// The entry of a row kept in `large`.
    static func largeEntry(length: Int, version: LSN, entity: Int) -> Entry {
        Entry(start: .max, length: UInt32(truncatingIfNeeded: length), version: version, entity: UInt16(truncatingIfNeeded: entity), count: 0)
    }

    /// Puts a row's bytes in a slot: copied into the buffer, or (a long row) kept as it is.
    func store(_ row: BorrowedRow, version: LSN, entity: Int, slot: Int) {
        clear(slot)
        dropColumns()
        let length = row.bytes.bytes.count
        if Self.fitsBuffer(length: length, entity: entity, count: row.bytes.count) {
            let (storage, inOverflow) = writableStorage(room: length)
            if let stored = storage.append(row.bytes.bytes), let offset = UInt32(exactly: stored), offset < Self.overflowStart {
                entries[slot] = Entry(
                    start: inOverflow ? Self.overflowStart + offset : offset, length: UInt32(length), version: version, entity: UInt16(entity),
                    count: UInt16(row.bytes.count))
                return
            }
        }
        // A long row (or one the buffer cannot take) keeps a buffer of its own.
        large[slot] = row.owned()
        entries[slot] = Self.largeEntry(length: length, version: version, entity: entity)
    }

    /// The chunk's table of value starts if it has one (none is made).
    func existingValueStarts() -> ValueStarts? {
        valueStarts.withLock { $0 }
    }

    /// The chunk's table of value starts, made now if it has none.
    @discardableResult
    func scanStarts() -> ValueStarts {
        valueStarts.withLock { known in
            if let known { return known }
            let made = makeValueStarts()
            known = made
            return made
        }
    }

    /// A table of value starts made from the rows.
    private func makeValueStarts() -> ValueStarts {
        let entries = entries
        return buffer.withBytes { all in
            ValueStarts(slots: entries.count) { slot -> (UnsafeRawBufferPointer, Int)? in
                // Rows of the overflow buffer (few) have no starts: they are walked.
                guard let entry = entries[slot], case .buffer(let start) = entry.place, start + Int(entry.length) <= all.count else { return nil }
                return (UnsafeRawBufferPointer(rebasing: all[start..<(start + Int(entry.length))]), Int(entry.count))
            }
        }
    }

    /// Checks that the chunk's table of value starts, if it has one, says what its rows say:
    /// every slot with entries has a row, and the entries are those its row makes.
    func checkValueStarts() throws(InvariantViolation) {
        guard let known = valueStarts.withLock({ $0 }) else { return }
        let fresh = makeValueStarts()
        let knownCounts = known.entryCounts(), freshCounts = fresh.entryCounts()
        for slot in entries.indices {
            guard let count = knownCounts[slot] else { continue }
            guard let entry = entries[slot] else { throw InvariantViolation("ObjectChunk", "empty slot \(slot) has value starts") }
            try require(count == Int(entry.count) + 1, "ObjectChunk", "slot \(slot) has \(count) value starts for its \(entry.count) values")
            for index in 0...Int(entry.count) {
                let kept = known.entry(slot, index, of: knownCounts), made = fresh.entry(slot, index, of: freshCounts)
                guard kept != made else { continue }
                throw InvariantViolation(
                    "ObjectChunk", "slot \(slot)'s value start \(index) is \(kept.map(String.init) ?? "none"), its row says \(made.map(String.init) ?? "none")")
            }
        }
    }

    /// Removes a slot's record.
    func clear(_ slot: Int) {
        guard let old = entries[slot] else { return }
        dropColumns()
        valueStarts.withLock { $0 = nil }
        if old.start == .max { large[slot] = nil } else { garbage += Int(old.length) }
        entries[slot] = nil
    }
}
