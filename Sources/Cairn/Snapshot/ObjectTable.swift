import Foundation
import HashTreeCollections

/// Sees the objects of a scan one at a time, on one thread (``ObjectTable/visit(_:_:)``).
protocol RowVisitor: AnyObject, SendableMetatype {
    associatedtype Result: Sendable
    func visit(_ id: ObjectID, _ row: Row)
    var result: Result { get }
}

/// Collects the objects a test accepts.
private final class MatchCollector: RowVisitor {
    private let test: (ObjectID, Row) -> Bool
    private(set) var result: [(ObjectID, Row)] = []

    init(_ test: @escaping (ObjectID, Row) -> Bool) { self.test = test }

    func visit(_ id: ObjectID, _ row: Row) {
        if test(id, row) { result.append((id, row)) }
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
/// `key / 256` holds the object. Replay fills one chunk after another; a save copies only the
/// chunks it touches (a chunk still shared with an older snapshot is copied before it changes);
/// a chunk whose objects are all deleted is dropped. Chunks are found through a small persistent
/// map, so a gap in the keys (keys handed out to objects never saved) costs nothing.
struct ObjectTable: Sendable {
    private static let shift: UInt64 = 8
    private static let size = 1 << 8

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

    private var chunks: TreeDictionary<TrieKey, Chunk> = [:]
    /// Objects per entity (by index).
    private(set) var counts: [Int]

    init(entityCount: Int) {
        counts = Array(repeating: 0, count: entityCount)
    }

    private static func place(_ key: UInt64) -> (chunk: TrieKey, slot: Int) {
        (TrieKey(key >> shift), Int(key & UInt64(size - 1)))
    }

    /// The object with this ID, if it exists (and is of that entity).
    func record(_ id: ObjectID) -> ObjectRecord? {
        let (chunk, slot) = Self.place(id.key)
        guard let record = chunks[chunk]?.slots[slot], record.entity == id.entity else { return nil }
        return record
    }

    /// Calls `body` with the chunk holding `key`, made unique and created when missing.
    private mutating func modify<R>(_ key: UInt64, _ body: (Chunk, Int) -> R) -> R {
        let (chunk, slot) = Self.place(key)
        if chunks[chunk] == nil {
            chunks[chunk] = Chunk()
        } else if !isKnownUniquelyReferenced(&chunks[chunk]) {
            chunks[chunk] = chunks[chunk].map(Chunk.init(copying:))
        }
        let target = chunks[chunk] ?? Chunk()
        return body(target, slot)
    }

    /// Adds an object; false when the key is taken.
    mutating func insert(_ record: ObjectRecord, key: UInt64) -> Bool {
        let added = modify(key) { chunk, slot -> Bool in
            guard chunk.slots[slot] == nil else { return false }
            chunk.slots[slot] = record
            chunk.live += 1
            return true
        }
        if added { counts[record.entity] += 1 }
        return added
    }

    /// Replaces an existing object's record.
    mutating func replace(_ record: ObjectRecord, key: UInt64) {
        modify(key) { chunk, slot in chunk.slots[slot] = record }
    }

    /// Removes an object and returns its record.
    mutating func remove(_ id: ObjectID) -> ObjectRecord? {
        guard record(id) != nil else { return nil }
        let index = Self.place(id.key).chunk
        let removed = modify(id.key) { chunk, slot -> ObjectRecord? in
            defer { chunk.slots[slot] = nil; chunk.live -= 1 }
            return chunk.slots[slot]
        }
        if chunks[index]?.live == 0 { chunks[index] = nil }
        if let removed { counts[removed.entity] -= 1 }
        return removed
    }

    /// Shows every object of `entities` to a visitor, the chunks split between two threads
    /// when there are many, and returns each thread's result. Each thread makes its own visitor
    /// with `make`, so that the threads never share the objects a visitor touches for every
    /// row: a reference count changed by two cores at once costs more than a comparison.
    func visit<Visitor: RowVisitor>(_ entities: Set<Int>, _ make: @Sendable () -> Visitor) -> [Visitor.Result] {
        let total = entities.reduce(0) { $0 + (counts.indices.contains($1) ? counts[$1] : 0) }
        guard total > 0 else { return [] }
        let parts = Array(chunks)
        let wanted = counts.indices.map(entities.contains)
        let workers = total >= 20_000 ? 2 : 1
        let results = ResultParts<Visitor.Result>(count: workers)
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            let visitor = make()
            for index in stride(from: worker, to: parts.count, by: workers) {
                let (number, chunk) = parts[index]
                for (slot, record) in chunk.slots.enumerated() {
                    guard let record, wanted[record.entity] else { continue }
                    visitor.visit(ObjectID(entity: record.entity, key: number.value << Self.shift | UInt64(slot)), record.row)
                }
            }
            results.set(worker, visitor.result)
        }
        return results.all()
    }

    /// The objects of `entities` (with their rows) for which the test holds; see ``visit(_:_:)``.
    func matching(_ entities: Set<Int>, _ makeTest: @Sendable () -> (ObjectID, Row) -> Bool) -> [(ObjectID, Row)] {
        visit(entities) { MatchCollector(makeTest()) }.flatMap { $0 }
    }

    /// The IDs of the objects of `entities`, in one pass over the table.
    func ids(_ entities: Set<Int>) -> [ObjectID] {
        let wanted = counts.indices.map(entities.contains)
        var ids: [ObjectID] = []
        for (number, chunk) in chunks {
            for (slot, record) in chunk.slots.enumerated() where record.map({ wanted[$0.entity] }) == true {
                if let record { ids.append(ObjectID(entity: record.entity, key: number.value << Self.shift | UInt64(slot))) }
            }
        }
        return ids
    }

    /// The keys of the objects of an entity.
    func keys(entity: Int) -> [UInt64] {
        guard counts.indices.contains(entity), counts[entity] > 0 else { return [] }
        var keys: [UInt64] = []
        keys.reserveCapacity(counts[entity])
        for (index, chunk) in chunks {
            for (slot, record) in chunk.slots.enumerated() where record?.entity == entity {
                keys.append(index.value << Self.shift | UInt64(slot))
            }
        }
        return keys
    }
}
