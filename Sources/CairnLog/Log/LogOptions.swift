/// When an append counts as done.
public enum Durability: Sendable, Equatable {
    /// An append returns once its frame is on disk (`fdatasync`). Concurrent appends are
    /// batched into one write and one sync (group commit). The default.
    case always
    /// An append returns once its frame is handed to the operating system; a background task
    /// syncs every `interval`. When unsynced data is older than two intervals, appends wait for a
    /// sync (back-pressure), so at most about two intervals of work can be lost in a power cut.
    case interval(Duration)
    /// An append returns once its frame is handed to the operating system; the log syncs only
    /// at segment rolls and at close. A process crash loses nothing; a power cut may.
    case none
}

/// What to do at open with a damaged end of the active segment.
public enum RecoveryMode: Sendable, Equatable {
    /// Cut the active segment at its first invalid frame when nothing valid follows it (a torn
    /// write from a crash), sync the cut, and report it. The default.
    case pointInTime
    /// Refuse to open when the active segment ends in an incomplete frame.
    case absoluteConsistency
    /// Read-only: skip damaged frames anywhere, and report the LSN ranges lost. For getting
    /// what can be had out of a damaged store; appends are refused.
    case salvage
}

/// How a log is opened.
public struct LogOptions: Sendable {
    /// When an append counts as done. Default ``Durability/always``.
    public var durability: Durability = .always
    /// The size at which the active segment is sealed and a new one started. Default 64 MiB.
    public var segmentSize: Int = 64 << 20
    /// The largest payload (before and after compression) a frame may hold. A longer payload is
    /// appended as one record of several frames of this size at most (a version 2 segment,
    /// docs/FORMAT.md §4); a frame over the store's recorded maximum is damage when read.
    /// Default 16 MiB.
    public var maximumFrameSize: Int = 16 << 20
    /// What to do with a damaged end of the log at open. Default ``RecoveryMode/pointInTime``.
    public var recovery: RecoveryMode = .pointInTime
    /// How payloads are compressed. Default ``CompressionPolicy/lz4Dictionary``.
    public var compression: CompressionPolicy = .lz4Dictionary
    /// Open without the writer lock, changing nothing on disk; appends are refused.
    public var readOnly = false
    /// Create the store when the directory holds none. Default true (ignored when read-only).
    /// When false, an open of a directory holding no file of a store fails with `notFound` and
    /// writes nothing there.
    public var createIfMissing = true

    /// The file system, replaceable in tests to inject faults.
    package var fileIO: any FileIO = PosixFileIO()
    /// When compression dictionaries are built.
    package var dictionaryTraining = DictionaryTrainingPolicy()
    /// Called at each named step of compaction (crash tests end the process there); nil in use.
    package var compactionStep: (@Sendable (CompactionStep) -> Void)?
    /// Bytes by which a file a compaction replaced is cut down at a time before it is removed
    /// (``Log/removeReplacedFiles(_:stopCutting:afterFirst:)``); 0: removed at once.
    package var releaseStep = LogTuning.releaseStep
    /// How many files a read-only open holds open together (``PinnedFiles``); tests lower it.
    package var pinnedFilesLimit = LogTuning.pinnedFilesLimit
    /// A read-only open reads no frame of the active segment after the writer's last
    /// acknowledgement (``AcknowledgedFile``): a follower's, which must never show a save that
    /// may yet be cut.
    package var readsAcknowledgedOnly = false

    /// The default options.
    public init() {}

    /// Whether the log may change files on disk.
    var isWritable: Bool { !readOnly && recovery != .salvage }

    func validate() throws {
        guard segmentSize >= 4096 else {
            throw LogError(.invalidArgument, "segment size \(segmentSize) is below the 4096-byte minimum")
        }
        guard maximumFrameSize >= 1, maximumFrameSize <= Int(UInt32.max) - FrameHeader.size else {
            throw LogError(.invalidArgument, "maximum frame size \(maximumFrameSize) is out of range")
        }
        if case .interval(let interval) = durability, interval <= .zero {
            throw LogError(.invalidArgument, "sync interval must be positive")
        }
    }
}
