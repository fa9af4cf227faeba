import CairnSupport

// The rules of the uniqueness index, checked after every change when `CAIRN_INTERNAL_CHECKS`
// is set: the buckets a change touched, or the whole index while it is small.

extension UniqueIndex {
    /// Checks every rule of the index (see ``checkLocked(buckets:)``).
    func checkInvariants() throws(InvariantViolation) {
        let violation = lock.withLock { _ -> InvariantViolation? in
            do throws(InvariantViolation) { try checkLocked(buckets: buckets.indices, whole: true) } catch { return error }
            return nil
        }
        if let violation { throw violation }
    }

    /// Checks the index's rules (lock held) in `changed` buckets, or in every bucket when
    /// `whole` (a pass over the whole index: after a bulk build, a pass that drops entries, the
    /// table's growth, or a copy):
    /// - there are `1 << bucketBits` buckets, between the least and the most allowed, no more
    ///   crowded on average than ``Tuning/uniqueEntriesPerBucket`` a bucket once a build has
    ///   ended (checked over the whole index), and changes are queued only in a bulk build;
    /// - each entry is in the bucket its probe chooses;
    /// - an entry's save is at or before the newest applied, and a removed entry was removed by a
    ///   later save than the one that added it, at or before the newest (the visibility rule
    ///   `added <= lsn < removed` then shows each snapshot the keys as of its LSN);
    /// - an object is filed live at most once under the same probe in a bucket;
    /// - the live and removed counts are those of the entries (checked over the whole index).
    func checkLocked(buckets changed: some Sequence<Int>, whole: Bool = false) throws(InvariantViolation) {
        try require(
            (Tuning.uniqueMinimumBucketBits...Tuning.uniqueMaximumBucketBits).contains(bucketBits) && buckets.count == 1 << bucketBits,
            "UniqueIndex", "\(buckets.count) buckets for \(bucketBits) bits")
        try require(bulk || queued.isEmpty, "UniqueIndex", "\(queued.count) changes queued outside a bulk build")
        try require(liveCount >= 0 && removedCount >= 0, "UniqueIndex", "counts of \(liveCount) live and \(removedCount) removed entries")
        let checksAll = whole
        var live = 0, removed = 0
        for bucket in checksAll ? AnySequence(buckets.indices) : AnySequence(changed) {
            guard buckets.indices.contains(bucket), !buckets[bucket].isEmpty else { continue }
            var filed = Set<[UInt64]>()
            for entry in buckets[bucket] {
                try require(
                    entry.probe.bucket(bits: bucketBits) == bucket, "UniqueIndex",
                    "bucket \(bucket): object \(entry.id) belongs in bucket \(entry.probe.bucket(bits: bucketBits))")
                try require(entry.added <= newest, "UniqueIndex", "bucket \(bucket): an entry added at \(entry.added), past the newest save \(newest)")
                if entry.removed == Self.live {
                    live += 1
                    try require(
                        filed.insert([UInt64(entry.high) << 16 | UInt64(entry.low), UInt64(entry.entity), entry.key]).inserted,
                        "UniqueIndex", "bucket \(bucket): object \(entry.id) is filed live twice under one hash")
                } else {
                    removed += 1
                    try require(
                        entry.added < entry.removed && entry.removed <= newest, "UniqueIndex",
                        "bucket \(bucket): an entry added at \(entry.added) and removed at \(entry.removed), newest save \(newest)")
                }
            }
        }
        guard checksAll else { return }
        try require(
            bulk || bucketBits == Tuning.uniqueMaximumBucketBits || live + removed <= buckets.count * Tuning.uniqueEntriesPerBucket,
            "UniqueIndex", "\(live + removed) entries in \(buckets.count) buckets")
        try require(
            live == liveCount && removed == removedCount, "UniqueIndex",
            "counts say \(liveCount) live and \(removedCount) removed entries; the buckets hold \(live) and \(removed)")
    }
}
