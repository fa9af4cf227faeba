/// The tuning constants of the object graph, in one place: sizes, thresholds and worker counts
/// that trade memory for speed. None of them is part of the file format; changing one changes
/// performance, never what a store holds. docs/PERFORMANCE.md says why each has its value.
enum Tuning {
    // MARK: Object table (Snapshot/)

    /// Object keys per chunk of the object table, as a power of two: chunk `key >> shift`,
    /// slot `key & (size - 1)`.
    static let objectChunkShift: UInt64 = 8
    /// Object keys per chunk of the object table (256).
    static let objectChunkSize = 256
    /// Rows at least this long get a buffer of their own, so that a chunk's buffer stays far
    /// below the 4 GiB its 32-bit offsets reach.
    static let largeRow = 1 << 20
    /// The nice value of compaction and backup threads (0 is the default, 19 the lowest): with
    /// every core busy they get about a tenth of the share of an app thread.
    static let backgroundNice: Int32 = 10
    /// The saves a following store applies before it publishes them: the states of the saves
    /// applied and not yet published stay alive until then.
    static let followedSavesPublishedTogether = 256
    /// Chunks of a base the opening thread hands to the snapshot builder at a time.
    static let chunksPerHandOver = 16
    /// The largest first buffer of a chunk (sized by its first row for a chunk of rows like it).
    static let largestFirstChunkBuffer = 1 << 20
    /// The least a chunk's buffer grows by, and the least spare room a compacting copy keeps.
    static let smallestBufferGrowth = 1024
    /// Chunk numbers below this are in the chunk directory's two-level table (2^20 chunks of
    /// 256: 268 million objects); larger ones (keys no counter reaches) go to a hash trie.
    static let directoryNearLimit: UInt64 = 1 << 20
    /// Chunks per leaf of the chunk directory.
    static let directoryLeafSize = 256

    // MARK: Scans (Snapshot/ObjectTable+Scan.swift)

    /// The objects a scan must see to run on two threads (below, one thread is faster than the
    /// hand-over).
    static let parallelScanObjects = 20_000
    /// Threads of a large scan (the machines Cairn is measured on have two cores).
    static let parallelScanWorkers = 2
    /// Chunks a scanning thread takes at a time.
    static let scanBatchChunks = 16
    /// How many slots ahead a scan starts loading a row's memory.
    static let prefetchDistance = 4
    /// The most bytes a chunk's column of one attribute holds (``ChunkColumn``): beyond, the
    /// chunk's rows are read instead (values of 4 KiB on average are not what columns are for).
    static let chunkColumnBytes = 1 << 20

    // MARK: Saves (Store/, Snapshot/StoreSnapshot.swift)

    /// New uniqueness keys from which a save files them on another core.
    static let concurrentKeys = 4096
    /// Inserted objects from which a save gathers their attribute index entries and sorts
    /// them before filing them (``AttributeIndex/insert(gathered:filings:entity:)``).
    static let gatheredIndexInserts = 4096
    /// An ordered index merges a save's sorted entries with the runs they fall among, rather
    /// than filing each, when they number at least the entries of those runs over this (filing
    /// one moves half a run, about 3 KiB; merging copies each entry of those runs once).
    static let mergedIndexShare = 32
    /// Bytes of a change record from which a save compresses it on another core while it
    /// applies the changes.
    static let concurrentCompression = 1 << 16
    /// Inserts per part of a change record in parts (version 2, written from twice this many
    /// on): replay decodes one part while the builder applies the one before, as it does for
    /// separate saves of this size.
    static let recordPartInserts = 4096

    // MARK: Indexes (Index/)

    /// The bits of a key's probe that choose its bucket in a new uniqueness index: 4,096
    /// buckets, 32 KiB for a store of a few objects.
    static let uniqueMinimumBucketBits = 12
    /// The most bits a uniqueness index's buckets grow to (2^28 buckets: four billion keys at
    /// ``uniqueEntriesPerBucket``).
    static let uniqueMaximumBucketBits = 28
    /// The entries a uniqueness index holds a bucket before its buckets grow, four times as
    /// many at a time: so between 4 and 16 a bucket. A lookup scans its key's bucket (32 bytes
    /// an entry), so a fixed 65,536 buckets made a lookup among 10M keys scan 150 entries; at 1M
    /// keys, 4 and 15 a bucket looked up at the same speed. A bucket costs 8 bytes, and a
    /// non-empty one an allocation.
    static let uniqueEntriesPerBucket = 16
    /// The keys a batch lookup by unique key takes through each of its stages together
    /// (``StoreSnapshot/holders(of:for:)``): enough for their cache misses to overlap, few
    /// enough for what each stage reads to stay in the first-level cache.
    static let batchLookupGroup = 16
    /// Removed uniqueness entries from which a save looks for those no snapshot reads; the
    /// pass runs again once this many more (or an eighth of the index) were removed.
    static let uniqueDropMinimum = 4096
    /// How many times a thread filing a large save's keys yields to threads waiting for the
    /// uniqueness index's lock before it takes the lock again (a fetch waits for one batch of
    /// keys, not for the whole save).
    static let lockHandoffYields = 64
    /// Entries per chunk of an ordered (range) index.
    static let orderedChunkLimit = 512
    /// Keys per run of a posting list.
    static let postingRunLimit = 512

    // MARK: Contexts (Context/)

    /// The size below which a context's identity map never sweeps.
    static let identityMapMinimumSweep = 4096

    // MARK: Invariant checks (CAIRN_INTERNAL_CHECKS)

    /// Structures up to this many elements check all their rules after each change; larger
    /// ones check the part the change touched, so that the test suite stays fast.
    static let wholeCheckLimit = 512

    /// The bytes an objects entry of a base starts with room for (a chunk's rows are about
    /// this size; the buffer grows for more).
    static let baseEntryCapacity = 32 << 10
}
