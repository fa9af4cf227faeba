import Synchronization

/// Reads of memory made only to bring it into the cache ahead of use: a batch of lookups
/// reads, for all of its keys, the first place each will need before it reads any key's
/// next one, so that their cache misses overlap instead of following one another (a lookup's
/// reads depend on each other; those of different keys do not).
package enum MemoryTouch {
    private static let sink = Atomic<UInt64>(0)

    /// Keeps the values read to touch memory: stored where the optimizer cannot drop the reads
    /// that made them. One relaxed store; call it once per batch, not per read.
    @inline(never)
    package static func keep(_ touched: UInt64) {
        sink.store(touched, ordering: .relaxed)
    }
}
