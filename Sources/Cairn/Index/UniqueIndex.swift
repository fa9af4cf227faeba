import CairnLog
import CairnSupport
import Foundation
import Synchronization

/// The uniqueness index of a line of snapshots: the objects holding each key hash (of every
/// uniqueness constraint; ``KeyHasher``), checked against their rows by whoever reads it.
///
/// One index serves every snapshot of a store's line of saves, each reading it as of its own
/// LSN: an entry records the LSN of the save that added it and of the one that removed it, and a
/// snapshot at LSN `s` sees the entries with `added <= s < removed`. A save changes the index in
/// place (an append to one bucket per new key) instead of copying the buckets and levels it
/// touches: with keys spread by their hash, a save of 10,000 new keys touches nearly every
/// block of a persistent table, and copying them (and releasing the copies when the older
/// snapshot goes) cost more than all the rest of applying the save.
///
/// - The line: only a snapshot at the newest LSN applied to the index may apply a save to it
///   in place (``canApply(after:)``). A snapshot that branches off an older state (a second save built on a snapshot that
///   another save already advanced) first takes a copy of the index as of its LSN.
/// - A save that fails after changing the index is undone with ``rollback(_:)``.
/// - Entries removed by a save stay while an older snapshot may read them: snapshots register
///   their LSN (``register(_:)``/``unregister(_:)``), and once removed entries are an eighth of
///   the index (and at least 4,096 more than after the last such pass), those no registered
///   snapshot can see are dropped.
///
/// Buckets chosen by the top bits of the mixed hash, their number a power of two that grows
/// with the index (``Tuning/uniqueEntriesPerBucket``): a bucket holds a few entries at any
/// size, so finding a key is one array read and a short scan. Reads and changes take
/// a lock, one key or one batch of a few hundred keys at a time, and a thread filing batches lets
/// waiting readers in between them, so a reader waits at most for one batch, never for a whole
/// save. A larger table is built without the lock and put in place under it: readers wait for
/// the swap, not for the pass. The committing thread reads without the lock
/// (``firstHolderWhileCommitting(_:at:where:)``).
final class UniqueIndex: @unchecked Sendable {
    // Safety: every mutable property is written with `lock` held. One thread at a time
    // changes the index, and it alone reads it without the lock: the thread that holds the
    // store's commit lock, or work it waits for (a large save's keys, filed on another core,
    // which also builds a larger table without the lock before putting it in place under it),
    // or a replay or migration building an index no other thread sees yet. Other threads read
    // it with the lock held. `readers`, which any snapshot changes, is always read under
    // `lock`.

    /// What an entry keeps of a key hash: the top 48 bits of the mixed hash (``avalanche(_:)``).
    /// The top 32 (`high`) choose the bucket at any number of buckets up to 2^32, so the
    /// index grows without the hashes. Two keys that agree on all 48 bits both count as
    /// holders, and readers compare holders' rows anyway.
    struct Probe: Equatable {
        var high: UInt32
        var low: UInt16

        init(_ hash: UInt64) {
            let mixed = avalanche(hash)
            high = UInt32(truncatingIfNeeded: mixed >> 32)
            low = UInt16(truncatingIfNeeded: mixed >> 16)
        }

        init(high: UInt32, low: UInt16) {
            self.high = high
            self.low = low
        }

        /// The bucket among `1 << bits`.
        func bucket(bits: Int) -> Int { Self.bucket(high: high, bits: bits) }

        /// The bucket among `1 << bits` of a probe whose top bits are `high`.
        static func bucket(high: UInt32, bits: Int) -> Int { Int(high >> (32 - bits)) }
    }

    /// 32 bytes. The entity fits 16 bits: a model has at most ``Model/maximumEntityCount``.
    struct Entry {
        var high: UInt32
        var low: UInt16
        var entity: UInt16
        var key: UInt64
        var added: UInt64
        var removed: UInt64

        init(_ probe: Probe, id: ObjectID, added: UInt64, removed: UInt64 = UniqueIndex.live) {
            high = probe.high
            low = probe.low
            entity = UInt16(truncatingIfNeeded: id.entity)
            key = id.key
            self.added = added
            self.removed = removed
        }

        var id: ObjectID { ObjectID(entity: Int(entity), key: key) }
        var probe: Probe { Probe(high: high, low: low) }

        func matches(_ probe: Probe) -> Bool { high == probe.high && low == probe.low }
        func holds(_ id: ObjectID) -> Bool { key == id.key && Int(entity) == id.entity }
        func isVisible(at lsn: UInt64) -> Bool { added <= lsn && lsn < removed }
    }

    /// The LSN of an entry no save has removed.
    static let live = UInt64.max

    let lock = IndexLock()
    /// The entries by bucket. Internal, not private, only so that the tests can damage it and
    /// see ``checkInvariants()`` fail.
    @exclusivity(unchecked) var buckets: [[Entry]]
    /// The bits of a probe that choose its bucket: `buckets.count == 1 << bucketBits`.
    @exclusivity(unchecked) private(set) var bucketBits: Int
    /// The newest LSN applied: the one snapshot that may change the index in place is there.
    @exclusivity(unchecked) var newest: UInt64 = 0
    /// While a save is applied: the LSN before it, and what it changed (for a rollback).
    @exclusivity(unchecked) private var before: UInt64 = 0
    /// The top bits of the probes of the entries a save changed (their buckets at whatever
    /// number of buckets the table has when the save is rolled back: it may grow meanwhile).
    @exclusivity(unchecked) private var touched: [UInt32] = []
    /// Entries live at the newest LSN, and entries removed but kept for older snapshots.
    @exclusivity(unchecked) var liveCount = 0
    @exclusivity(unchecked) var removedCount = 0
    /// The number of removed entries at which the next save looks for entries to drop: a pass
    /// over the whole index, so not again until as many more were removed (an old snapshot may
    /// keep every one of them readable for long).
    @exclusivity(unchecked) private var dropAt = Tuning.uniqueDropMinimum
    /// How many passes looked for removed entries to drop (for tests).
    @exclusivity(unchecked) private(set) var dropPasses = 0
    /// How many snapshots read the index as of each LSN.
    @exclusivity(unchecked) private var readers: [UInt64: Int] = [:]
    /// While the index is built in bulk: the changes, in order, applied by ``finishBulkBuild()``.
    @exclusivity(unchecked) var queued = ChangeQueue()
    @exclusivity(unchecked) var bulk = false

    /// An empty index.
    init() {
        bucketBits = Tuning.uniqueMinimumBucketBits
        buckets = Array(repeating: [], count: 1 << bucketBits)
    }

    private init(buckets: [[Entry]], bits: Int, newest: UInt64, liveCount: Int) {
        self.buckets = buckets
        bucketBits = bits
        self.newest = newest
        self.liveCount = liveCount
    }

    /// The bucket of a probe (lock held, or the commit lock).
    func bucket(_ probe: Probe) -> Int { probe.bucket(bits: bucketBits) }

    /// Whether the index is being built in bulk (replay): changes are then only queued.
    var isBuildingInBulk: Bool { lock.withLock { _ in bulk } }

    // MARK: Reading

    /// The number of entries a snapshot at the newest LSN sees (during a bulk build, the entries
    /// so far plus the queued adds less the queued removes).
    var count: Int { lock.withLock { _ in liveCount + queued.netAdds } }

    /// The objects filed under `hash`, as of `lsn`.
    func holders(_ hash: UInt64, at lsn: LSN) -> [ObjectID] {
        lock.withLock { _ in holdersLocked(hash, at: lsn.rawValue) }
    }

    func holdersLocked(_ hash: UInt64, at lsn: UInt64) -> [ObjectID] {
        let probe = Probe(hash)
        var entries = buckets[bucket(probe)].filter { $0.matches(probe) && $0.isVisible(at: lsn) }
        // Read during a bulk build (nothing does; the answer is the state of every change so far).
        for change in queued.changes(for: hash) {
            _ = Self.applyAtOnce(change, to: &entries)
        }
        return entries.map(\.id)
    }

    /// The first object filed under `hash` as of `lsn` for which `test` holds (no array made: a
    /// lookup by unique key reads the bucket in place). `test` runs with the index locked: it
    /// must not use the index.
    func firstHolder(_ hash: UInt64, at lsn: LSN, where test: (ObjectID) -> Bool) -> ObjectID? {
        lock.withLock { _ in lookUpFirstHolder(hash, at: lsn, where: test) }
    }

    /// ``firstHolder(_:at:where:)`` for the thread that holds the store's commit lock, without
    /// this index's lock: the index changes only under the commit lock, never while its holder
    /// reads (see the type's rules), and other threads only read it, so these reads race with
    /// nothing. The lookups of a
    /// large save (a batch upsert's keys) then leave the lock to readers: taken a million
    /// times in a row, it would keep a view context's fetch waiting (a mutex is not fair).
    func firstHolderWhileCommitting(_ hash: UInt64, at lsn: LSN, where test: (ObjectID) -> Bool) -> ObjectID? {
        lookUpFirstHolder(hash, at: lsn, where: test)
    }

    /// The lookup of ``firstHolder(_:at:where:)``, for a caller that holds the lock or needs none.
    private func lookUpFirstHolder(_ hash: UInt64, at lsn: LSN, where test: (ObjectID) -> Bool) -> ObjectID? {
        guard queued.isEmpty else { return holdersLocked(hash, at: lsn.rawValue).first(where: test) }
        let probe = Probe(hash)
        return buckets[bucket(probe)].withUnsafeBufferPointer { entries in
            for entry in entries where entry.matches(probe) && entry.isVisible(at: lsn.rawValue) && test(entry.id) { return entry.id }
            return nil
        }
    }

    // MARK: Snapshots

    /// Counts a snapshot reading the index as of `lsn`.
    func register(_ lsn: LSN) {
        lock.withLock { _ in readers[lsn.rawValue, default: 0] += 1 }
    }

    /// Stops counting a snapshot that read the index as of `lsn`.
    func unregister(_ lsn: LSN) {
        lock.withLock { _ in
            guard let count = readers[lsn.rawValue] else { return }
            readers[lsn.rawValue] = count > 1 ? count - 1 : nil
        }
    }

    /// Whether a snapshot at `lsn` may apply a save to this index in place: no save after `lsn`
    /// was applied to it (by another snapshot that branched off the same state first).
    func canApply(after lsn: LSN) -> Bool {
        lock.withLock { _ in newest <= lsn.rawValue }
    }

    /// A new index holding what a snapshot at `lsn` sees of this one (for a snapshot that
    /// branches off an older state).
    func copy(asOf lsn: LSN) -> UniqueIndex {
        lock.withLock { _ in
            // What the snapshot sees is live in the copy: saves after `lsn` belong to the line.
            var copied = buckets.map { entries in
                entries.compactMap { entry -> Entry? in
                    guard entry.isVisible(at: lsn.rawValue) else { return nil }
                    var kept = entry
                    kept.removed = Self.live
                    return kept
                }
            }
            var live = copied.reduce(0) { $0 + $1.count }
            queued.forEach { change in live += Self.applyAtOnce(change, to: &copied[change.probe.bucket(bits: bucketBits)]) }
            return UniqueIndex(buckets: copied, bits: bucketBits, newest: lsn.rawValue, liveCount: live)
        }
    }

    // MARK: Changing

    /// Starts applying the save at `lsn` (after the newest): its changes can be undone with
    /// ``rollback(_:)`` until the next save begins. Drops the removed entries no snapshot can
    /// see any more when they are many.
    func begin(_ lsn: LSN) {
        lock.withLock { _ in
            before = newest
            newest = max(newest, lsn.rawValue)
            touched.removeAll(keepingCapacity: true)
            if removedCount > dropAt && removedCount * 8 > liveCount {
                dropUnreadEntries()
                dropAt = removedCount + max(Tuning.uniqueDropMinimum, liveCount / 8)
                checkAfterMutation { () throws(InvariantViolation) in try checkLocked(buckets: buckets.indices, whole: true) }
            }
        }
    }

    /// Undoes the changes of the save at `lsn` (begun with ``begin(_:)``, not yet followed by
    /// another): the index is again as the snapshot before it saw it.
    func rollback(_ lsn: LSN) {
        lock.withLock { _ in
            guard newest == lsn.rawValue else { return }
            let changed = Set(touched.map { Probe.bucket(high: $0, bits: bucketBits) })
            for bucket in changed {
                var entries = buckets[bucket]
                entries.removeAll { entry in
                    guard entry.added == lsn.rawValue else { return false }
                    if entry.removed == Self.live { liveCount -= 1 }
                    return true
                }
                for index in entries.indices where entries[index].removed == lsn.rawValue {
                    entries[index].removed = Self.live
                    liveCount += 1
                    removedCount -= 1
                }
                buckets[bucket] = entries
            }
            touched.removeAll()
            newest = before
            checkAfterMutation { () throws(InvariantViolation) in try checkLocked(buckets: changed) }
        }
    }

    /// From now until ``finishBulkBuild()``, changes are queued and applied at the end, bucket
    /// after bucket: a replay adds a key per object, and a random bucket per add costs a cache
    /// miss, while the bulk build goes through memory in order.
    func startBulkBuild() {
        lock.withLock { _ in bulk = true }
    }

    /// Applies the queued changes (each bucket's in their order) and stops queueing. Removed
    /// entries go at once: no snapshot reads the index while it is built in bulk.
    func finishBulkBuild() {
        lock.withLock { _ in
            bulk = false
            guard !queued.isEmpty else { return }
            let changes = queued
            queued = ChangeQueue()
            // The table for the entries there will be, before they are filed (no snapshot reads
            // the index during a bulk build: it grows in place).
            if let grown = grownTable(forEntries: liveCount + removedCount + max(0, changes.netAdds)) { install(grown) }
            let bits = bucketBits
            liveCount += buckets.withUnsafeMutableBufferPointer { changes.apply(to: $0, bits: bits) }
            if let grown = grownTable(forEntries: liveCount + removedCount) { install(grown) }
            checkAfterMutation { () throws(InvariantViolation) in try checkLocked(buckets: buckets.indices, whole: true) }
        }
    }

    /// An object's key hash, to file.
    struct Key {
        var hash: UInt64
        var id: ObjectID
    }

    /// Files many keys as of the save at `lsn`, as ``add(_:_:at:)`` files one, and returns the
    /// objects whose hash another object shares. They are filed in bucket order, a few hundred
    /// for each time the lock is taken: the buckets' cache misses then overlap, where one add at
    /// a time waits for each (the lock's atomic instructions order every memory access).
    func add(_ keys: [Key], at lsn: LSN) -> [ObjectID] {
        let queuedAll = lock.withLock { _ in
            guard bulk else { return false }
            for key in keys { queued.append(Queued(hash: key.hash, id: key.id, adding: true)) }
            newest = max(newest, lsn.rawValue)
            return true
        }
        if queuedAll { return [] }
        growIfCrowded(adding: keys.count)
        var shared: [ObjectID] = []
        // A counting sort of the keys by the top 8 bits of their probe: 256 groups of
        // neighbouring buckets, at any number of buckets.
        let groups = keys.map { Int(Probe($0.hash).high >> 24) }
        var starts = [Int](repeating: 0, count: 257)
        for group in groups { starts[group + 1] += 1 }
        for group in 0..<256 { starts[group + 1] += starts[group] }
        var order = [Int](repeating: 0, count: keys.count)
        for (index, group) in groups.enumerated() {
            order[starts[group]] = index
            starts[group] += 1
        }
        var start = 0
        while start < order.count {
            let end = min(order.count, start + 256)
            lock.withLock { _ in
                for index in order[start..<end] {
                    let key = keys[index]
                    if addLocked(key.hash, key.id, at: lsn.rawValue) { shared.append(key.id) }
                }
            }
            if end < order.count { lock.letWaitersIn() }
            start = end
        }
        return shared
    }

    /// Files `id` under `hash` as of the save at `lsn` (once). Returns whether another object
    /// is filed under the same hash (a possible clash, for the caller to check against rows).
    @discardableResult
    func add(_ hash: UInt64, _ id: ObjectID, at lsn: LSN) -> Bool {
        growIfCrowded(adding: 1)
        return lock.withLock { _ in addLocked(hash, id, at: lsn.rawValue) }
    }

    private func addLocked(_ hash: UInt64, _ id: ObjectID, at lsn: UInt64) -> Bool {
        if bulk {
            queued.append(Queued(hash: hash, id: id, adding: true))
            newest = max(newest, lsn)
            return false
        }
        let probe = Probe(hash)
        let bucket = bucket(probe)
        var shared = false
        var found: Int?
        var revive: Int?
        for (index, entry) in buckets[bucket].enumerated() where entry.matches(probe) {
            if entry.holds(id) {
                if entry.removed == Self.live { found = index } else if entry.removed == lsn { revive = index }
            } else if entry.removed == Self.live {
                shared = true
            }
        }
        if found != nil { return shared }
        touched.append(probe.high)
        if let revive {
            // Removed and filed again by the same save: as if never removed.
            buckets[bucket][revive].removed = Self.live
            removedCount -= 1
        } else {
            buckets[bucket].append(Entry(probe, id: id, added: lsn))
        }
        liveCount += 1
        checkAfterMutation { () throws(InvariantViolation) in try checkLocked(buckets: CollectionOfOne(bucket)) }
        return shared
    }

    /// Removes `id` from `hash` as of the save at `lsn`: snapshots before it still see it.
    func remove(_ hash: UInt64, _ id: ObjectID, at lsn: LSN) {
        lock.withLock { _ in
            if bulk {
                queued.append(Queued(hash: hash, id: id, adding: false))
                newest = max(newest, lsn.rawValue)
                return
            }
            let probe = Probe(hash)
            let bucket = bucket(probe)
            guard let index = buckets[bucket].firstIndex(where: { $0.matches(probe) && $0.holds(id) && $0.removed == Self.live })
            else { return }
            touched.append(probe.high)
            liveCount -= 1
            if buckets[bucket][index].added == lsn.rawValue {
                // Filed by this same save: no snapshot has seen it.
                buckets[bucket].remove(at: index)
            } else {
                buckets[bucket][index].removed = lsn.rawValue
                removedCount += 1
            }
            checkAfterMutation { () throws(InvariantViolation) in try checkLocked(buckets: CollectionOfOne(bucket)) }
        }
    }

    /// Applies one queued change to a bucket outright (no snapshot reads the old state);
    /// returns the change in the number of entries.
    static func applyAtOnce(_ change: Queued, to entries: inout [Entry]) -> Int {
        let probe = change.probe
        let index = entries.firstIndex { $0.matches(probe) && $0.holds(change.id) }
        switch (index, change.adding) {
        case (nil, true):
            entries.append(Entry(probe, id: change.id, added: 0))
            return 1
        case (let index?, false):
            entries.swapAt(index, entries.count - 1)
            entries.removeLast()
            return -1
        default:
            return 0
        }
    }

    /// Before `more` keys are filed outside a bulk build: grows the buckets when the entries
    /// would outnumber ``Tuning/uniqueEntriesPerBucket`` a bucket. Called by the thread filing
    /// keys, the index's one writer (see the type's rules), without the lock: it reads the
    /// index as the committing thread does, builds the larger table, and takes the lock only to
    /// put it in place.
    private func growIfCrowded(adding more: Int) {
        let (bits, entries) = (bucketBits, liveCount + removedCount)
        guard !bulk, let grown = grownTable(forEntries: entries + more) else { return }
        lock.withLock { _ in
            // No other thread changed the index while the table was built (see the type's rules).
            checkAfterMutation { () throws(InvariantViolation) in
                try require(
                    bucketBits == bits && liveCount + removedCount == entries, "UniqueIndex",
                    "the index changed while a larger table was built from it: \(bits) bits and \(entries) entries, now \(bucketBits) and \(liveCount + removedCount)"
                )
            }
            install(grown)
        }
    }

    /// The buckets enough for `entries` at ``Tuning/uniqueEntriesPerBucket`` a bucket, each
    /// step four times as many, with every entry of these buckets; nil when these are enough
    /// (or the most allowed). Reads the index only. Each bucket splits into those its probes'
    /// next bits choose, in order: entries keep their order within a bucket, and the pass reads
    /// and writes memory in order.
    private func grownTable(forEntries entries: Int) -> (buckets: [[Entry]], bits: Int)? {
        var bits = bucketBits
        while bits + 2 <= Tuning.uniqueMaximumBucketBits, entries > (1 << bits) * Tuning.uniqueEntriesPerBucket { bits += 2 }
        guard bits > bucketBits else { return nil }
        let split = 1 << (bits - bucketBits)
        var grown = [[Entry]]()
        grown.reserveCapacity(1 << bits)
        var parts = Array(repeating: [Entry](), count: split)
        for (old, entries) in buckets.enumerated() {
            for entry in entries { parts[entry.probe.bucket(bits: bits) - old * split].append(entry) }
            for part in parts.indices {
                grown.append(parts[part])
                parts[part] = []
            }
        }
        return (grown, bits)
    }

    /// Puts a table from ``grownTable(forEntries:)`` in place (lock held).
    private func install(_ grown: (buckets: [[Entry]], bits: Int)) {
        buckets = grown.buckets
        bucketBits = grown.bits
        checkAfterMutation { () throws(InvariantViolation) in try checkLocked(buckets: buckets.indices, whole: true) }
    }

    /// Drops the removed entries that no registered snapshot sees (lock held).
    private func dropUnreadEntries() {
        dropPasses += 1
        guard let oldest = readers.keys.min() else { return }
        for bucket in buckets.indices where buckets[bucket].contains(where: { $0.removed != Self.live }) {
            buckets[bucket].removeAll { entry in
                guard entry.removed != Self.live, entry.removed <= oldest else { return false }
                removedCount -= 1
                return true
            }
        }
    }
}

/// A pthread mutex (`NSLock`: the thread sanitizer sees it, where it reports every access
/// guarded by a `Synchronization.Mutex` on Linux as a race), taken as `Mutex.withLock` is.
final class IndexLock: @unchecked Sendable {
    // Safety: NSLock is thread-safe; `waiting` is atomic.
    private let lock = NSLock()
    /// Threads between asking for the lock and getting it.
    private let waiting = Atomic<Int>(0)

    func withLock<R>(_ body: (inout Void) throws -> R) rethrows -> R {
        waiting.add(1, ordering: .relaxed)
        lock.lock()
        waiting.subtract(1, ordering: .relaxed)
        defer { lock.unlock() }
        var unit: Void = ()
        return try body(&unit)
    }

    /// Between two takes of the lock in a long run (the keys of a large save, a few hundred at
    /// a time): lets the threads waiting for it take it first. A mutex is not fair: the thread
    /// that just released it takes it again before a woken waiter runs, and a view context's
    /// fetch could wait for the whole run. Gives up after a bounded number of yields.
    func letWaitersIn() {
        let waiters = waiting.load(ordering: .relaxed)
        guard waiters > 0 else { return }
        // Until one of them is in (others may keep coming: one batch's wait each, not more).
        var yields = 0
        while waiting.load(ordering: .relaxed) >= waiters && yields < Tuning.lockHandoffYields {
            sched_yield()
            yields += 1
        }
    }
}
