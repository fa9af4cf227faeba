/// The committed objects of a snapshot, by key, in fixed-size chunks shared between snapshots.
///
/// Object keys come from one counter, so they are dense: slot `key % 1024` of chunk
/// `key / 1024` holds the object. Replay appends to the last chunk; a save copies only the
/// chunks it touches (a chunk still shared with an older snapshot is copied before it changes);
/// a chunk whose objects are all deleted is dropped, so deleted keys cost nothing for long.
struct ObjectTable: Sendable {
    private static let shift: UInt64 = 10
    private static let size = 1 << 10

    /// One chunk of slots. Mutated only when uniquely referenced (copied otherwise).
    final class Chunk: @unchecked Sendable {
        // Safety: a chunk reachable from a published snapshot is never mutated: `modify` copies
        // any chunk that is not uniquely referenced first.
        var slots: [ObjectRecord?]
        var live: Int

        init() {
            slots = Array(repeating: nil, count: ObjectTable.size)
            live = 0
        }

        init(copying other: Chunk) {
            slots = other.slots
            live = other.live
        }
    }

    private var chunks: [Chunk?] = []
    /// Objects per entity (by index).
    private(set) var counts: [Int]

    init(entityCount: Int) {
        counts = Array(repeating: 0, count: entityCount)
    }

    private static func place(_ key: UInt64) -> (chunk: Int, slot: Int)? {
        let chunk = key >> shift
        guard chunk < UInt64(Int.max) else { return nil }
        return (Int(chunk), Int(key & UInt64(size - 1)))
    }

    /// The object with this ID, if it exists (and is of that entity).
    func record(_ id: ObjectID) -> ObjectRecord? {
        guard let (chunk, slot) = Self.place(id.key), chunk < chunks.count, let record = chunks[chunk]?.slots[slot],
              record.entity == id.entity else { return nil }
        return record
    }

    /// Whether any object has this key.
    func contains(key: UInt64) -> Bool {
        guard let (chunk, slot) = Self.place(key), chunk < chunks.count else { return false }
        return chunks[chunk]?.slots[slot] != nil
    }

    /// Calls `body` with the chunk holding `key`, made unique and created when missing.
    private mutating func modify<R>(_ key: UInt64, _ body: (Chunk, Int) -> R) -> R? {
        guard let (chunk, slot) = Self.place(key) else { return nil }
        if chunk >= chunks.count {
            guard chunk < chunks.count + (1 << 20) else { return nil }     // a key far beyond any object: refuse
            chunks.append(contentsOf: repeatElement(nil, count: chunk - chunks.count + 1))
        }
        if chunks[chunk] == nil {
            chunks[chunk] = Chunk()
        } else if !isKnownUniquelyReferenced(&chunks[chunk]) {
            chunks[chunk] = chunks[chunk].map(Chunk.init(copying:))
        }
        guard let target = chunks[chunk] else { return nil }
        return body(target, slot)
    }

    /// Adds an object; false when the key is taken (or unusable).
    mutating func insert(_ record: ObjectRecord, key: UInt64) -> Bool {
        let added = modify(key) { chunk, slot -> Bool in
            guard chunk.slots[slot] == nil else { return false }
            chunk.slots[slot] = record
            chunk.live += 1
            return true
        } ?? false
        if added { counts[record.entity] += 1 }
        return added
    }

    /// Replaces an existing object's record.
    mutating func replace(_ record: ObjectRecord, key: UInt64) {
        _ = modify(key) { chunk, slot in chunk.slots[slot] = record }
    }

    /// Removes an object and returns its record.
    mutating func remove(_ id: ObjectID) -> ObjectRecord? {
        guard record(id) != nil, let (index, _) = Self.place(id.key) else { return nil }
        let removed = modify(id.key) { chunk, slot -> ObjectRecord? in
            defer { chunk.slots[slot] = nil; chunk.live -= 1 }
            return chunk.slots[slot]
        } ?? nil
        if chunks[index]?.live == 0 { chunks[index] = nil }
        if let removed { counts[removed.entity] -= 1 }
        return removed
    }

    /// The keys of the objects of an entity.
    func keys(entity: Int) -> [UInt64] {
        guard counts.indices.contains(entity), counts[entity] > 0 else { return [] }
        var keys: [UInt64] = []
        keys.reserveCapacity(counts[entity])
        for (index, chunk) in chunks.enumerated() {
            guard let chunk else { continue }
            for (slot, record) in chunk.slots.enumerated() where record?.entity == entity {
                keys.append(UInt64(index) << Self.shift | UInt64(slot))
            }
        }
        return keys
    }
}
