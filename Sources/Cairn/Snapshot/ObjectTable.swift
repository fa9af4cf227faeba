import CairnLog

/// The committed objects of a snapshot, by key, in fixed-size chunks shared between snapshots.
///
/// Object keys come from one counter, so they are mostly dense: slot `key % 256` of chunk
/// `key / 256` holds the object. A chunk keeps its rows' bytes in one buffer and, per slot, where
/// the row is, its version and its entity (24 bytes), so an object costs its bytes and little
/// more. Replay fills one chunk after another, appending to its buffer; a save copies only the
/// chunks it touches (a chunk still shared with an older snapshot is copied before it changes;
/// its buffer stays shared, and the rows the save stores go to a small overflow buffer of the
/// copy, until garbage or overflow grow enough to compact both into one buffer: see
/// `ObjectChunk+Buffer.swift`); a chunk whose objects are all deleted is dropped.
/// Chunks are found through a ``ChunkDirectory`` (two array reads for the keys a counter hands out).
struct ObjectTable: Sendable {
    private(set) var chunks = ChunkDirectory<ObjectChunk>()
    /// Objects per entity (by index).
    private(set) var counts: [Int]

    init(entityCount: Int) {
        counts = Array(repeating: 0, count: entityCount)
    }

    /// Bytes of every live row (read chunk by chunk: cheap enough to ask after a save).
    var rowBytes: Int { chunks.all.reduce(0) { $0 + $1.chunk.rowBytes } }
    /// The bytes of the columns scans made (``ChunkColumn``).
    var columnBytes: Int { chunks.all.reduce(0) { $0 + $1.chunk.columnBytes } }

    static func place(_ key: UInt64) -> (chunk: UInt64, slot: Int) {
        (key >> Tuning.objectChunkShift, Int(key & UInt64(Tuning.objectChunkSize - 1)))
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
        guard let (buffer, start) = chunk.storage(entry.place) else { return chunk.large[slot].map { $0.withBorrowed(body) } }
        return buffer.withBytes { all -> R? in
            let end = start + Int(entry.length)
            guard end <= all.count else { return nil }
            return body(
                BorrowedRow(
                    bytes: RowBytes(bytes: UnsafeRawBufferPointer(rebasing: all[start..<end]), count: Int(entry.count)),
                    storage: buffer, start: start))
        }
    }

    /// Calls `body` with the bytes of an object's row (see ``withBorrowedRow(_:_:)``).
    func withRowBytes<R>(_ id: ObjectID, _ body: (RowBytes) -> R) -> R? {
        withBorrowedRow(id) { body($0.bytes) }
    }

    /// Calls `body` with the chunk holding `key`, made unique and created when missing.
    private mutating func modify<R>(_ key: UInt64, _ body: (ObjectChunk, Int) -> R) -> R {
        let (number, slot) = Self.place(key)
        return body(chunks.unique(number, make: ObjectChunk.init, copy: ObjectChunk.init(copying:)), slot)
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
        checkAfterChange(key: key, slots: Self.place(key).slot..<(Self.place(key).slot + 1))
        return added
    }

    /// Adds a whole chunk made elsewhere (a base's, ``ObjectChunk/loaded(_:)``) under its
    /// number; false when the table has a chunk there.
    mutating func install(_ chunk: ObjectChunk, number: UInt64) -> Bool {
        guard chunks[number] == nil else { return false }
        _ = chunks.unique(number, make: { chunk }, copy: ObjectChunk.init(copying:))
        for entry in chunk.entries { if let entry { counts[Int(entry.entity)] += 1 } }
        checkAfterChange(key: number << Tuning.objectChunkShift, slots: 0..<0, wholeChunk: true)
        return true
    }

    /// One more object in `chunk`: a chunk just filled (as replay fills them, one after the
    /// other) gives back the room its buffer grew by and takes `starts` as its table of value
    /// starts, or makes it.
    private static func filled(_ chunk: ObjectChunk, starts: ValueStarts? = nil) {
        chunk.live += 1
        if chunk.live == Tuning.objectChunkSize {
            chunk.trim()
            if let starts {
                chunk.setValueStarts(starts)
            } else {
                chunk.scanStarts()  // while its rows are in the cache
            }
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
            let chunkNumber = inserts[start].id.key >> Tuning.objectChunkShift
            var end = start + 1
            while end < inserts.count, inserts[end].id.key >> Tuning.objectChunkShift == chunkNumber { end += 1 }
            let stopped = modify(inserts[start].id.key) { chunk, _ -> Int? in
                // A chunk this run fills from empty holds exactly the run's rows: the table of
                // their value starts worked out ahead, if any, is its table.
                let starts = chunk.live == 0 ? changes.filledChunkStarts[chunkNumber] : nil
                // A run that fills the chunk from its first slot on: its buffer, sized for them.
                let firstSlot = Int(inserts[start].id.key & UInt64(Tuning.objectChunkSize - 1))
                if end - start == Tuning.objectChunkSize - firstSlot {
                    chunk.reserveFirstRows(inserts[start..<end].lazy.map { ($0.length, $0.id.entity, $0.count) })
                }
                for index in start..<end {
                    let insert = inserts[index]
                    let slot = Int(insert.id.key & UInt64(Tuning.objectChunkSize - 1))
                    guard chunk.entries[slot] == nil else { return index }
                    changes.withRow(insert) { chunk.store($0, version: version, entity: insert.id.entity, slot: slot) }
                    Self.filled(chunk, starts: starts)
                }
                return nil
            }
            for index in start..<(stopped ?? end) { counts[inserts[index].id.entity] += 1 }
            checkAfterChange(key: inserts[start].id.key, slots: 0..<0, wholeChunk: true)
            if let stopped { return inserts[stopped].id }
            start = end
        }
        return nil
    }

    /// Replaces an existing object's record.
    mutating func replace(_ record: ObjectRecord, key: UInt64) {
        record.row.withBorrowed { replace($0, version: record.version, entity: record.entity, key: key) }
    }

    /// Replaces an existing object's row with a copy of `row` (its bytes are copied into the
    /// object's chunk unless the row is long), saved at `version`.
    mutating func replace(_ row: BorrowedRow, version: LSN, entity: Int, key: UInt64) {
        modify(key) { chunk, slot in chunk.store(row, version: version, entity: entity, slot: slot) }
        checkAfterChange(key: key, slots: Self.place(key).slot..<(Self.place(key).slot + 1))
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
        checkAfterChange(key: id.key, slots: 0..<0, wholeChunk: true)
        return removed
    }
}
