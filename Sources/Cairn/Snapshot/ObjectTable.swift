import CCairnSupport
import CairnLog
import Foundation
import Synchronization

/// Sees the objects of a scan one at a time, on one thread (``ObjectTable/visit(_:_:)``).
/// A value type, so that the state it updates for every row needs no dynamic exclusivity check.
protocol RowVisitor: SendableMetatype {
    associatedtype Result: Sendable
    /// Sees one object; `row` is valid only during the call (``BorrowedRow/owned()`` keeps it).
    mutating func visit(_ id: ObjectID, _ row: BorrowedRow)
    /// What it saw since the last call; it then starts again, empty.
    mutating func takeResult() -> Result
}

/// Collects the objects a test accepts.
private struct MatchCollector: RowVisitor {
    private let test: (ObjectID, BorrowedRow) -> Bool
    private var result: [(ObjectID, Row)] = []

    init(_ test: @escaping (ObjectID, BorrowedRow) -> Bool) { self.test = test }

    mutating func visit(_ id: ObjectID, _ row: BorrowedRow) {
        if test(id, row) { result.append((id, row.owned())) }
    }

    mutating func takeResult() -> [(ObjectID, Row)] {
        defer { result = [] }
        return result
    }
}

/// Per-thread results of a parallel scan.
private final class ResultParts<Part: Sendable>: @unchecked Sendable {
    // Safety: every access holds `lock`.
    private let lock = NSLock()
    private var parts: [Part?]

    init(count: Int) { parts = Array(repeating: nil, count: count) }

    func set(_ index: Int, _ part: Part) {
        lock.lock()
        parts[index] = part
        lock.unlock()
    }

    func all() -> [Part] {
        lock.lock()
        defer { lock.unlock() }
        return parts.compactMap { $0 }
    }
}

/// The committed objects of a snapshot, by key, in fixed-size chunks shared between snapshots.
///
/// Object keys come from one counter, so they are mostly dense: slot `key % 256` of chunk
/// `key / 256` holds the object. A chunk keeps its rows' bytes in one buffer and, per slot, where
/// the row is, its version and its entity (24 bytes), so an object costs its bytes and little
/// more. Replay fills one chunk after another, appending to its buffer; a save copies only the
/// chunks it touches (a chunk still shared with an older snapshot is copied before it changes,
/// and its buffer too, keeping only live rows); a chunk whose objects are all deleted is dropped.
/// Chunks are found through a ``ChunkDirectory`` (two array reads for the keys a counter hands out).
struct ObjectTable: Sendable {
    private static let shift: UInt64 = 8
    private static let size = 1 << 8
    /// Rows at least this long get a buffer of their own (so a chunk's buffer stays far below
    /// the 4 GiB its 32-bit offsets reach).
    private static let largeRow = 1 << 20

    /// Where a slot's row is, and what the table knows of its object.
    struct Entry {
        /// Start and length of the row in the chunk's buffer (`start == .max`: in `large`).
        var start: UInt32
        var length: UInt32
        var version: LSN
        var entity: UInt16
        var count: UInt16
    }

    /// One chunk of slots. Mutated only when uniquely referenced (copied otherwise).
    final class Chunk: @unchecked Sendable {
        // Safety: a chunk reachable from a published snapshot is never mutated: `modify` copies
        // any chunk that is not uniquely referenced first, and the buffer is appended to only
        // while the chunk alone refers to it. (So no two accesses can overlap, and the dynamic
        // exclusivity check, a cost at every access, is off.)
        @exclusivity(unchecked) var entries: [Entry?]
        @exclusivity(unchecked) var buffer: RowStorage
        /// Rows too long for the buffer, by slot.
        @exclusivity(unchecked) var large: [Int: Row] = [:]
        @exclusivity(unchecked) var live: Int
        /// Bytes of the buffer no longer used by a row (replaced or deleted rows).
        @exclusivity(unchecked) var garbage: Int
        /// Where the values of each row start: made when the chunk fills, or by the first scan
        /// that finds none; dropped when a row is replaced or removed (a row added later has no
        /// entry and is walked).
        private let valueStarts: Mutex<ValueStarts?>

        init() {
            entries = Array(repeating: nil, count: ObjectTable.size)
            buffer = RowStorage.make(capacity: 0)
            live = 0
            garbage = 0
            valueStarts = Mutex(nil)
        }

        init(copying other: Chunk) {
            entries = other.entries
            buffer = other.buffer
            large = other.large
            live = other.live
            garbage = other.garbage
            // Offsets within rows: true of the copy's rows too, until one changes.
            valueStarts = Mutex(other.valueStarts.withLock { $0 })
        }

        func record(_ slot: Int) -> ObjectRecord? {
            guard let entry = entries[slot] else { return nil }
            let row = entry.start == .max
                ? large[slot] ?? Row.make(count: 0, bytes: UnsafeRawBufferPointer(start: nil, count: 0))
                : Row.view(buffer, start: Int(entry.start), length: Int(entry.length), count: Int(entry.count))
            return ObjectRecord(row: row, version: entry.version, entity: Int(entry.entity))
        }

        /// Puts a record in a slot (the slot's previous row, if any, becomes garbage).
        func store(_ record: ObjectRecord, slot: Int) {
            record.row.withBorrowed { store($0, version: record.version, entity: record.entity, slot: slot) }
        }

        /// Puts a row's bytes in a slot: copied into the buffer, or (a long row) kept as it is.
        func store(_ row: BorrowedRow, version: LSN, entity: Int, slot: Int) {
            clear(slot)
            let length = row.bytes.bytes.count
            if length < ObjectTable.largeRow, entity <= Int(UInt16.max), row.bytes.count <= Int(UInt16.max),
               let stored = writableBuffer(room: length).append(row.bytes.bytes), let start = UInt32(exactly: stored) {
                entries[slot] = Entry(start: start, length: UInt32(length), version: version, entity: UInt16(entity), count: UInt16(row.bytes.count))
                return
            }
            // A long row (or one the buffer cannot take) keeps a buffer of its own.
            large[slot] = row.owned()
            entries[slot] = Entry(start: .max, length: UInt32(truncatingIfNeeded: length), version: version,
                                  entity: UInt16(truncatingIfNeeded: entity), count: 0)
        }

        /// The chunk's table of value starts, made now if it has none.
        @discardableResult
        func scanStarts() -> ValueStarts {
            valueStarts.withLock { known in
                if let known { return known }
                let entries = entries
                let made = buffer.withBytes { all in
                    ValueStarts(slots: entries.count) { slot -> (UnsafeRawBufferPointer, Int)? in
                        guard let entry = entries[slot], entry.start != .max, Int(entry.start) + Int(entry.length) <= all.count else { return nil }
                        return (UnsafeRawBufferPointer(rebasing: all[Int(entry.start)..<(Int(entry.start) + Int(entry.length))]), Int(entry.count))
                    }
                }
                known = made
                return made
            }
        }

        /// Shows the objects of the wanted entities (by entity index) to `visitor`, their rows
        /// borrowed from the buffer (no reference counting per object).
        func visit<Visitor: RowVisitor>(_ firstKey: UInt64, _ wanted: [Bool], _ memo: RowMemo, _ visitor: inout Visitor) {
            let entries = entries
            let buffer = buffer
            let starts = scanStarts()
            buffer.withBytes { all in
                let ahead = 4
                for slot in entries.indices {
                    // The row a few slots on starts loading now (rows are read one after the
                    // other, each walked from its start: without this, each waits for memory).
                    if slot + ahead < entries.count, let next = entries[slot + ahead], next.start != .max, Int(next.start) < all.count,
                       let base = all.baseAddress {
                        cairn_prefetch(base + Int(next.start))
                        cairn_prefetch(base + min(all.count - 1, Int(next.start) + 64))
                    }
                    guard let entry = entries[slot], Int(entry.entity) < wanted.count, wanted[Int(entry.entity)] else { continue }
                    let id = ObjectID(entity: Int(entry.entity), key: firstKey | UInt64(slot))
                    if entry.start == .max {
                        large[slot]?.withBorrowed { visitor.visit(id, $0) }
                        continue
                    }
                    let start = Int(entry.start), end = start + Int(entry.length)
                    guard end <= all.count else { continue }
                    let rowStarts = starts.entries(slot)
                    if rowStarts == nil { memo.reset() }
                    let bytes = RowBytes(bytes: UnsafeRawBufferPointer(rebasing: all[start..<end]), count: Int(entry.count),
                                         memo: rowStarts == nil ? memo : nil, starts: rowStarts, wideStarts: starts.wide)
                    visitor.visit(id, BorrowedRow(bytes: bytes, storage: buffer, start: start))
                }
            }
        }

        /// Shrinks the buffer to its live rows, when this chunk alone holds it.
        func trim() {
            guard isKnownUniquelyReferenced(&buffer), buffer.room > 0 || garbage > 0 else { return }
            let fresh = RowStorage.make(capacity: buffer.used - garbage)
            copyLiveRows(into: fresh)
        }

        /// Copies the live rows into `fresh`, which becomes the buffer.
        private func copyLiveRows(into fresh: RowStorage) {
            buffer.withBytes { old in
                for slot in entries.indices {
                    guard let entry = entries[slot], entry.start != .max else { continue }
                    let range = Int(entry.start)..<(Int(entry.start) + Int(entry.length))
                    let start = fresh.append(UnsafeRawBufferPointer(rebasing: old[range])) ?? 0
                    entries[slot]?.start = UInt32(start)
                }
            }
            buffer = fresh
            garbage = 0
        }

        /// Removes a slot's record.
        func clear(_ slot: Int) {
            guard let old = entries[slot] else { return }
            valueStarts.withLock { $0 = nil }
            if old.start == .max { large[slot] = nil } else { garbage += Int(old.length) }
            entries[slot] = nil
        }

        /// The buffer, made this chunk's alone and with `room` free bytes: a shared buffer (a
        /// published snapshot or a reader still holds rows of it), or one that is mostly garbage,
        /// is replaced by a copy of its live rows.
        private func writableBuffer(room: Int) -> RowStorage {
            let shared = !isKnownUniquelyReferenced(&buffer)
            if !shared && buffer.room >= room { return buffer }
            let liveBytes = buffer.used - garbage
            if shared || garbage > liveBytes {
                // Copy the live rows (compacting), with room to grow.
                // A save usually changes a few rows of a chunk: a little room, grown if needed.
                copyLiveRows(into: RowStorage.make(capacity: liveBytes + room + max(1024, liveBytes / 8)))
                return buffer
            }
            // Unique but full: grow (by half, at least what is needed). A chunk's first row sizes
            // the buffer for a chunk of rows like it, so that replay fills it without copies
            // (a chunk that fills up gives the rest back, see `trim`).
            let growth = live == 0 && buffer.used == 0 ? min(room * ObjectTable.size * 5 / 4, 1 << 20) : max(room, buffer.used / 2, 1024)
            let grown = RowStorage.make(capacity: buffer.used + growth)
            buffer.withBytes { old in _ = grown.append(old) }
            buffer = grown
            return buffer
        }
    }

    private var chunks = ChunkDirectory<Chunk>()
    /// Objects per entity (by index).
    private(set) var counts: [Int]

    init(entityCount: Int) {
        counts = Array(repeating: 0, count: entityCount)
    }

    private static func place(_ key: UInt64) -> (chunk: UInt64, slot: Int) {
        (key >> shift, Int(key & UInt64(size - 1)))
    }

    /// The object with this ID, if it exists (and is of that entity).
    func record(_ id: ObjectID) -> ObjectRecord? {
        let (chunk, slot) = Self.place(id.key)
        guard let chunk = chunks[chunk], let entry = chunk.entries[slot], Int(entry.entity) == id.entity else { return nil }
        return chunk.record(slot)
    }

    /// Calls `body` with an object's row, borrowed (no reference counting); nil when the object
    /// does not exist (or is of another entity).
    func withBorrowedRow<R>(_ id: ObjectID, _ body: (BorrowedRow) -> R) -> R? {
        let (number, slot) = Self.place(id.key)
        guard let chunk = chunks[number], let entry = chunk.entries[slot], Int(entry.entity) == id.entity else { return nil }
        if entry.start == .max { return chunk.large[slot].map { $0.withBorrowed(body) } }
        let buffer = chunk.buffer
        return buffer.withBytes { all -> R? in
            let start = Int(entry.start), end = start + Int(entry.length)
            guard end <= all.count else { return nil }
            return body(BorrowedRow(bytes: RowBytes(bytes: UnsafeRawBufferPointer(rebasing: all[start..<end]), count: Int(entry.count)),
                                    storage: buffer, start: start))
        }
    }

    /// Calls `body` with the bytes of an object's row (see ``withBorrowedRow(_:_:)``).
    func withRowBytes<R>(_ id: ObjectID, _ body: (RowBytes) -> R) -> R? {
        withBorrowedRow(id) { body($0.bytes) }
    }

    /// Calls `body` with the chunk holding `key`, made unique and created when missing.
    private mutating func modify<R>(_ key: UInt64, _ body: (Chunk, Int) -> R) -> R {
        let (number, slot) = Self.place(key)
        return body(chunks.unique(number, make: Chunk.init, copy: Chunk.init(copying:)), slot)
    }

    /// Adds an object; false when the key is taken.
    mutating func insert(_ record: ObjectRecord, key: UInt64) -> Bool {
        let added = modify(key) { chunk, slot -> Bool in
            guard chunk.entries[slot] == nil else { return false }
            chunk.store(record, slot: slot)
            Self.filled(chunk)
            return true
        }
        if added { counts[record.entity] += 1 }
        return added
    }

    /// One more object in `chunk`: a chunk just filled (as replay fills them, one after the
    /// other) gives back the room its buffer grew by and makes its table of value starts.
    private static func filled(_ chunk: Chunk) {
        chunk.live += 1
        if chunk.live == size {
            chunk.trim()
            chunk.scanStarts()   // while its rows are in the cache
        }
    }

    /// Adds a record's inserted objects, a run of keys that fall in one chunk at a time (one
    /// lookup of the chunk per run: a record's keys are mostly consecutive). Returns the first
    /// object whose key is taken (that object and those after it are not added), or nil when
    /// all were.
    mutating func insert(_ changes: RowChangeSet, version: LSN) -> ObjectID? {
        let inserts = changes.inserts
        var start = 0
        while start < inserts.count {
            let chunkNumber = inserts[start].id.key >> Self.shift
            var end = start + 1
            while end < inserts.count, inserts[end].id.key >> Self.shift == chunkNumber { end += 1 }
            let stopped = modify(inserts[start].id.key) { chunk, _ -> Int? in
                for index in start..<end {
                    let insert = inserts[index]
                    let slot = Int(insert.id.key & UInt64(Self.size - 1))
                    guard chunk.entries[slot] == nil else { return index }
                    changes.withRow(insert) { chunk.store($0, version: version, entity: insert.id.entity, slot: slot) }
                    Self.filled(chunk)
                }
                return nil
            }
            for index in start..<(stopped ?? end) { counts[inserts[index].id.entity] += 1 }
            if let stopped { return inserts[stopped].id }
            start = end
        }
        return nil
    }

    /// Replaces an existing object's record.
    mutating func replace(_ record: ObjectRecord, key: UInt64) {
        modify(key) { chunk, slot in chunk.store(record, slot: slot) }
    }

    /// Removes an object and returns its record.
    mutating func remove(_ id: ObjectID) -> ObjectRecord? {
        guard let removed = record(id) else { return nil }
        let index = Self.place(id.key).chunk
        modify(id.key) { chunk, slot in
            chunk.clear(slot)
            chunk.live -= 1
        }
        if chunks[index]?.live == 0 { chunks.remove(index) }
        counts[removed.entity] -= 1
        return removed
    }

    /// Shows every object of `entities` to a visitor, on two threads when there are many, and
    /// returns the results of each batch of chunks, in the table's order (so that a sum of
    /// doubles is the same from one run to the next). The threads take batches as they finish
    /// the previous one, so a thread the machine slows down does not hold the other back. Each
    /// thread makes its own visitor with `make`, so that the threads never share the objects a
    /// visitor touches for every row: a reference count changed by two cores at once costs more
    /// than a comparison.
    func visit<Visitor: RowVisitor>(_ entities: Set<Int>, _ make: @Sendable () -> Visitor) -> [Visitor.Result] {
        let total = entities.reduce(0) { $0 + (counts.indices.contains($1) ? counts[$1] : 0) }
        guard total > 0 else { return [] }
        let parts = chunks.all
        let wanted = counts.indices.map(entities.contains)
        let workers = total >= 20_000 ? 2 : 1
        let batchSize = 16
        let batches = (parts.count + batchSize - 1) / batchSize
        let results = ResultParts<Visitor.Result>(count: batches)
        let next = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            var visitor = make()
            let memo = RowMemo.allocate()
            defer { memo.deallocate() }
            while true {
                let batch = next.wrappingAdd(1, ordering: .relaxed).oldValue
                guard batch < batches else { break }
                for index in (batch * batchSize)..<min(parts.count, (batch + 1) * batchSize) {
                    let (number, chunk) = parts[index]
                    chunk.visit(number << Self.shift, wanted, memo, &visitor)
                }
                results.set(batch, visitor.takeResult())
            }
        }
        return results.all()
    }

    /// The objects of `entities` (with their rows) for which the test holds; see ``visit(_:_:)``.
    func matching(_ entities: Set<Int>, _ makeTest: @Sendable () -> (ObjectID, BorrowedRow) -> Bool) -> [(ObjectID, Row)] {
        visit(entities) { MatchCollector(makeTest()) }.flatMap { $0 }
    }

    /// The IDs of the objects of `entities`, in one pass over the table.
    func ids(_ entities: Set<Int>) -> [ObjectID] {
        let wanted = counts.indices.map(entities.contains)
        var ids: [ObjectID] = []
        for (number, chunk) in chunks.all {
            for (slot, entry) in chunk.entries.enumerated() {
                guard let entry, wanted.indices.contains(Int(entry.entity)), wanted[Int(entry.entity)] else { continue }
                ids.append(ObjectID(entity: Int(entry.entity), key: number << Self.shift | UInt64(slot)))
            }
        }
        return ids
    }
}
