/// The uniqueness index of a snapshot: the objects holding each key hash (of every uniqueness
/// constraint; ``KeyHasher``), checked against their rows by whoever reads it.
///
/// A persistent two-level table of 256 × 256 buckets, each a small array of (hash, object)
/// entries, chosen by the hash's mixed top bits. Arrays are copy-on-write at every level, so a
/// save copies the top level (256 references), the middle blocks it touches and the buckets it
/// changes, and a snapshot keeps sharing everything else. At a million keys a bucket holds about
/// fifteen entries: finding a key is two array reads and a short scan, and adding one an append,
/// which costs far less than a hash trie's walk and node resizing.
struct UniqueIndex: Sendable {
    private struct Entry: Sendable {
        var hash: UInt64
        var id: ObjectID
    }

    /// An add or remove queued while the index is built in bulk (replay).
    private struct Queued {
        var hash: UInt64
        var id: ObjectID
        var adding: Bool
    }

    private static let width = 256
    /// `levels[top][middle]`: a bucket; an empty middle level has no blocks yet.
    private var levels: [[[Entry]]] = Array(repeating: [], count: UniqueIndex.width)

    /// The number of (hash, object) entries.
    private(set) var count = 0
    /// While the index is built in bulk: the changes, in order, applied by ``finishBulkBuild()``.
    private var queued: [Queued] = []
    private var bulk = false

    /// From now until ``finishBulkBuild()``, changes are queued and applied at the end, bucket
    /// after bucket: a replay adds a key per object, and a random bucket per add costs a cache
    /// miss, while the bulk build goes through memory in order.
    mutating func startBulkBuild() { bulk = true }

    /// Applies the queued changes (each bucket's in their order) and stops queueing.
    mutating func finishBulkBuild() {
        bulk = false
        guard !queued.isEmpty else { return }
        let bucketCount = Self.width * Self.width
        // A counting sort by bucket (stable, so each bucket's changes keep their order).
        var starts = [Int](repeating: 0, count: bucketCount + 1)
        let buckets = queued.map { change -> Int in
            let (top, middle) = Self.place(change.hash)
            return top * Self.width + middle
        }
        for bucket in buckets { starts[bucket + 1] += 1 }
        for bucket in 0..<bucketCount { starts[bucket + 1] += starts[bucket] }
        var next = starts
        var sorted = queued
        for (index, bucket) in buckets.enumerated() {
            sorted[next[bucket]] = queued[index]
            next[bucket] += 1
        }
        queued = []
        for bucket in 0..<bucketCount where starts[bucket] < starts[bucket + 1] {
            let top = bucket / Self.width, middle = bucket % Self.width
            if levels[top].isEmpty { levels[top] = Array(repeating: [], count: Self.width) }
            var entries = levels[top][middle]
            levels[top][middle] = []
            for change in sorted[starts[bucket]..<starts[bucket + 1]] {
                count += Self.apply(change, to: &entries)
            }
            levels[top][middle] = entries
        }
    }

    /// Applies one change to a bucket; returns the change in the number of entries.
    private static func apply(_ change: Queued, to entries: inout [Entry]) -> Int {
        let index = entries.firstIndex { $0.hash == change.hash && $0.id == change.id }
        switch (index, change.adding) {
        case (nil, true):
            entries.append(Entry(hash: change.hash, id: change.id))
            return 1
        case (let index?, false):
            entries.swapAt(index, entries.count - 1)
            entries.removeLast()
            return -1
        default:
            return 0
        }
    }

    private static func place(_ hash: UInt64) -> (top: Int, middle: Int) {
        let mixed = avalanche(hash)
        return (Int(truncatingIfNeeded: mixed >> 56), Int(truncatingIfNeeded: (mixed >> 48) & 0xFF))
    }

    /// The objects filed under `hash`.
    func holders(_ hash: UInt64) -> [ObjectID] {
        let (top, middle) = Self.place(hash)
        var entries = levels[top].isEmpty ? [] : levels[top][middle]
        if !queued.isEmpty {
            // Read during a bulk build (nothing does, but the answer stays right).
            for change in queued where change.hash == hash { _ = Self.apply(change, to: &entries) }
        }
        return entries.compactMap { $0.hash == hash ? $0.id : nil }
    }

    /// The first object filed under `hash` for which `test` holds (no array made: a lookup by
    /// unique key reads the bucket in place).
    func firstHolder(_ hash: UInt64, where test: (ObjectID) -> Bool) -> ObjectID? {
        guard queued.isEmpty else { return holders(hash).first(where: test) }
        let (top, middle) = Self.place(hash)
        guard !levels[top].isEmpty else { return nil }
        return levels[top][middle].withUnsafeBufferPointer { entries in
            for entry in entries where entry.hash == hash && test(entry.id) { return entry.id }
            return nil
        }
    }

    /// Files `id` under `hash` (once).
    mutating func add(_ hash: UInt64, _ id: ObjectID) {
        change(Queued(hash: hash, id: id, adding: true))
    }

    /// Removes `id` from `hash`.
    mutating func remove(_ hash: UInt64, _ id: ObjectID) {
        change(Queued(hash: hash, id: id, adding: false))
    }

    private mutating func change(_ change: Queued) {
        if bulk {
            queued.append(change)
            return
        }
        let (top, middle) = Self.place(change.hash)
        if levels[top].isEmpty { levels[top] = Array(repeating: [], count: Self.width) }
        count += Self.apply(change, to: &levels[top][middle])
    }
}
