import CairnSupport

extension UniqueIndex {
    /// What the index holds under one key hash, as a batch lookup needs it: no object, one, or
    /// several (two keys whose hashes agree on the bits kept; the caller then looks that key up
    /// alone, testing each holder's row).
    enum Holding: Equatable {
        case none
        case one(ObjectID)
        case several
    }

    /// What the index holds under each of `hashes` as of `lsn`, in their order, under one take
    /// of the lock. The buckets of all the hashes are read first, one read each, and only then
    /// scanned: their cache misses overlap instead of following one another (in an index of
    /// millions of keys, each bucket is a miss). Keep `hashes` to a few dozen: the lock is held
    /// for all of them.
    func holdings(_ hashes: UnsafeBufferPointer<UInt64>, at lsn: LSN) -> [Holding] {
        lock.withLock { _ in
            guard queued.isEmpty else {
                // Read during a bulk build (nothing does): each key from the entries and the queue.
                return hashes.map { hash in
                    let holders = holdersLocked(hash, at: lsn.rawValue)
                    return holders.count > 1 ? .several : holders.first.map(Holding.one) ?? .none
                }
            }
            return buckets.withUnsafeBufferPointer { buckets in
                let probes = hashes.map(Probe.init)
                var touched: UInt64 = 0
                for probe in probes {
                    touched &+= buckets[bucket(probe)].withUnsafeBufferPointer { UInt64($0.first?.high ?? 0) }
                }
                MemoryTouch.keep(touched)
                return probes.map { probe in
                    buckets[bucket(probe)].withUnsafeBufferPointer { entries in
                        var holding = Holding.none
                        for entry in entries where entry.matches(probe) && entry.isVisible(at: lsn.rawValue) {
                            guard holding == .none else { return .several }
                            holding = .one(entry.id)
                        }
                        return holding
                    }
                }
            }
        }
    }
}
