import Glibc

/// The tuning constants of the log, in one place: buffer sizes, retry counts and times. None of
/// them is part of the file format (the format's sizes and limits are in the types that read
/// and write it: ``FrameHeader``, ``SegmentHeader``, ``Manifest``, ``CompressionDictionary``);
/// changing one changes performance, never what a store holds. docs/PERFORMANCE.md says why
/// each has its value. The dictionary training defaults are in ``DictionaryTrainingPolicy``.
package enum LogTuning {
    /// Bytes a reader reads at a time (recovery, inspection, salvage).
    static let readBufferSize = 1 << 20
    /// Bytes the search for a valid frame after damage reads at a time.
    static let searchWindow = 1 << 20
    /// Bytes copied at a time when a torn tail is saved to its side file.
    static let copyChunkSize = 1 << 20
    /// The payload bytes one step of following a writer reads at most (the records it hands
    /// over are held in memory until applied): ``Log/followWriter(byteLimit:)``.
    package static let followBatchBytes = 64 << 20
    /// Bytes of zeros written at a time over unacknowledged bytes a failed cut left.
    static let zeroFillChunkSize = 64 << 10
    /// The capacity of the writer's batch buffer kept between batches: a larger one (a batch
    /// holding a large record) is let go, so that one large save does not pin its size.
    static let writeBufferKept = 64 << 20

    /// How often, and how long apart, a refused `LOCK` is tried again (a forked child holds a
    /// copy of the descriptor until it execs): 40 tries 5 ms apart.
    static let lockAttempts = 40
    static let lockRetryMicroseconds: UInt32 = 5_000
    /// How many times a torn last frame's store is asked again whether a writer holds its lock
    /// (`lockRetryMicroseconds` apart) before the frame is called a write in progress: a forked
    /// child holds a copy of a closed log's lock until it execs.
    static let forkedLockChecks = 10
    /// How often, and how long apart, a read-only open reads the directory and manifest again
    /// when a writer's roll makes a segment look unaccounted for: 5 tries 20 ms apart.
    static let rereadAttempts = 5
    static let rereadMicroseconds: UInt32 = 20_000
    /// How many files a reader opens together right after it reads the manifest
    /// (``PinnedFiles``): a quarter of the process's limit on open descriptors
    /// (`RLIMIT_NOFILE`, its soft limit, as it was when first asked), at most 256 (every file
    /// of a store of 16 GiB of segments), at least 1; the rest are opened when reached.
    static let pinnedFilesLimit: Int = {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 64 }
        // No limit (RLIM_INFINITY, the largest value) clamps to the largest Int.
        return max(1, min(256, Int(clamping: limit.rlim_cur) / 4))
    }()
    /// How many times a read of the store whose files a compaction replaced meanwhile
    /// (``LogError/Code/busy``) is made again from the start before `busy` is thrown
    /// (``Log/retryingWhileBusy(_:)``).
    static let busyAttempts = 5

    /// Bytes by which a file a compaction replaced is cut down at a time before it is removed:
    /// on a file system that discards freed blocks at each journal commit, a save's sync waits
    /// for the discard of one step at most (4 MiB: about 1 ms on this machine's disk, where
    /// removing 100 MB at once held saves for 10 ms).
    static let releaseStep: UInt64 = 4 << 20

    /// How long the sync thread polls for more work before it sleeps.
    static let syncPollingTime = Duration.microseconds(200)

    /// The uncompressed size a base file's blocks aim for: large enough that LZ4 finds the
    /// repeats between rows, small enough that a reader's buffers stay small (at most
    /// ``BaseFile/maximumRawBlock``).
    package static let baseBlockSize = 128 << 10
}
