extension UniqueIndex {
    /// An add or remove queued while the index is built in bulk (replay, loading a base). Its
    /// entry will be visible to every snapshot: none reads the index before the build ends,
    /// and every later one is at or past the newest LSN applied. 24 bytes.
    struct Queued {
        var hash: UInt64
        var key: UInt64
        /// The probe's top bits, worked out once, when the change is queued: its bucket at
        /// whatever number of buckets the build ends with.
        var high: UInt32
        var entity: UInt16
        var adding: Bool

        init(hash: UInt64, id: ObjectID, adding: Bool) {
            self.hash = hash
            key = id.key
            high = Probe(hash).high
            entity = UInt16(truncatingIfNeeded: id.entity)
            self.adding = adding
        }

        var id: ObjectID { ObjectID(entity: Int(entity), key: key) }
        var probe: Probe { Probe(hash) }
        /// The group of buckets (``ChangeQueue/groupBits``).
        var group: Int { Probe.bucket(high: high, bits: ChangeQueue.groupBits) }
    }

    /// The changes queued during a bulk build, in order, already sorted into groups of
    /// neighbouring buckets (the bucket's top bits) as they come: the first pass of a radix
    /// sort, made by the thread that files the keys while it has time to spare (a replay's
    /// applying thread waits for the reading one). The build then sorts each group by bucket
    /// in the cache: one pass scattering a million changes to 65,536 buckets missed the cache
    /// at nearly every change, and was most of the build's time.
    struct ChangeQueue {
        /// Groups of buckets: 16. Appending to each of them at random keeps every group's tail
        /// in the cache and the hardware's prefetch (measured at 1M keys, opening a base: 256
        /// groups cost the filing thread 20 ms more, 64 groups 10 ms more; 16 and 8 the same).
        /// A group holds a sixteenth of the buckets the build ends with (4,096 at a million
        /// keys, 65,536 at ten million), sorted by a counting sort with a table of as many
        /// starts: 512 KiB at ten million keys, within the second-level cache.
        static let groupBits = 4

        /// The changes of each group, in the order they were queued.
        private(set) var groups: [[Queued]] = []
        /// The number of changes queued, and of those that add.
        private(set) var count = 0
        private(set) var adds = 0

        var isEmpty: Bool { count == 0 }

        /// The entries a snapshot would count after the changes: adds less removes.
        var netAdds: Int { adds - (count - adds) }

        /// Queues a change after the others.
        mutating func append(_ change: Queued) {
            if groups.isEmpty { groups = Array(repeating: [], count: 1 << Self.groupBits) }
            groups[change.group].append(change)
            count += 1
            if change.adding { adds += 1 }
        }

        /// The changes queued for `hash`, in order.
        func changes(for hash: UInt64) -> [Queued] {
            guard !isEmpty else { return [] }
            return groups[Probe(hash).bucket(bits: Self.groupBits)].filter { $0.hash == hash }
        }

        /// Applies every change to `buckets` (``UniqueIndex/applyAtOnce(_:to:)``), each bucket's
        /// in the order queued; returns the change in the number of entries. The groups are
        /// disjoint ranges of buckets, so half of them go to another core when there are many:
        /// the build ends a replay, while the thread that read the log only waits.
        func apply(to buckets: UnsafeMutableBufferPointer<[Entry]>, bits: Int) -> Int {
            let half = groups.count / 2
            guard count >= Tuning.concurrentKeys, half > 0 else { return Self.apply(groups[...], to: buckets, bits: bits) }
            let shared = SharedBuckets(buckets: buckets)
            let groups = groups
            let upper = ConcurrentResult { () throws(Never) in Self.apply(groups[half...], to: shared.buckets, bits: bits) }
            let lower = Self.apply(groups[..<half], to: buckets, bits: bits)
            return lower + upper.value()
        }

        /// The buckets of the index, written by two threads at once, each in its own groups.
        private struct SharedBuckets: @unchecked Sendable {
            // Safety: each thread writes only the buckets of its own groups (disjoint ranges),
            // and the caller waits for both before it reads any.
            let buckets: UnsafeMutableBufferPointer<[Entry]>
        }

        /// Applies the changes of `groups` to their buckets: each group sorted by bucket (a
        /// counting sort by the bucket's low bits, stable, within the cache), then each bucket
        /// changed once.
        private static func apply(_ groups: ArraySlice<[Queued]>, to buckets: UnsafeMutableBufferPointer<[Entry]>, bits: Int) -> Int {
            let groupBuckets = 1 << (bits - groupBits)
            let mask = groupBuckets - 1
            func bucket(_ change: Queued) -> Int { Probe.bucket(high: change.high, bits: bits) }
            var starts = [Int](repeating: 0, count: groupBuckets + 1)
            var next = starts
            var sorted: [Queued] = []
            var added = 0
            for changes in groups where !changes.isEmpty {
                for index in starts.indices { starts[index] = 0 }
                for change in changes { starts[(bucket(change) & mask) + 1] += 1 }
                for bucket in 0..<groupBuckets { starts[bucket + 1] += starts[bucket] }
                next = starts
                sorted.removeAll(keepingCapacity: true)
                sorted.append(contentsOf: changes)
                for change in changes {
                    let place = bucket(change) & mask
                    sorted[next[place]] = change
                    next[place] += 1
                }
                let first = bucket(changes[0]) & ~mask
                for place in 0..<groupBuckets where starts[place] < starts[place + 1] {
                    var entries = buckets[first | place]
                    buckets[first | place] = []
                    entries.reserveCapacity(entries.count + starts[place + 1] - starts[place])
                    for change in sorted[starts[place]..<starts[place + 1]] { added += UniqueIndex.applyAtOnce(change, to: &entries) }
                    buckets[first | place] = entries
                }
            }
            return added
        }

        /// Every change, group after group (each bucket's changes in the order queued).
        func forEach(_ body: (Queued) -> Void) {
            for group in groups { for change in group { body(change) } }
        }
    }
}
