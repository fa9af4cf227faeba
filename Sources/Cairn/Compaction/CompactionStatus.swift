import CairnLog
import Foundation

/// What a store's compaction is doing and last did (``Store/compactionStatus``).
public struct CompactionStatus: Sendable {
    /// Whether a compaction runs now.
    public var isRunning = false
    /// The last compaction that finished.
    public var lastReport: CompactionReport?
    /// The last compaction that failed, when it failed after the last one that finished.
    public var lastFailure: CompactionFailure?
    /// Automatic compactions that failed in a row (0 after one succeeds).
    public var consecutiveFailures = 0
    /// When the next automatic compaction may start, while one is being held back after a failure.
    public var nextAttempt: Date?
}

/// A compaction that failed, and what was left: the store is as it was before it.
public struct CompactionFailure: Error, Sendable, CustomStringConvertible {
    /// Why it failed (a `LogError` with `LogError.Code.diskFull` when
    /// the disk had no room, an I/O error, ``StoreError/Code/closed`` when the store closed).
    public let error: any Error
    /// Whether the store started it by itself.
    public let automatic: Bool
    /// When it failed.
    public let date: Date
    /// For an automatic one: the wait before the next try.
    public let retryDelay: Duration?

    /// The failure in words, with the wait before the next try when there is one.
    public var description: String {
        "compaction failed: \(error)" + (retryDelay.map { "; trying again in \($0)" } ?? "")
    }
}

/// What ``Store/observeCompactions(_:)`` reports.
public enum CompactionEvent: Sendable {
    /// A compaction started.
    case started(automatic: Bool)
    /// A compaction finished.
    case finished(CompactionReport)
    /// A compaction failed; the store is as it was.
    case failed(CompactionFailure)
}

/// How far a compaction got (``Store/compact(level:retainHistory:onlyIfSmaller:progress:)``).
public struct CompactionProgress: Sendable {
    /// Objects written into the base so far.
    public let objectsWritten: Int
    /// Objects the base will hold.
    public let objectCount: Int
    /// The live state's bytes written so far, uncompressed.
    public let bytesWritten: UInt64
    /// About how many bytes the live state holds, uncompressed.
    public let bytesExpected: UInt64
    /// The time since the compaction started.
    public let elapsed: Duration

    /// The part done, 0...1.
    public var fractionDone: Double {
        objectCount == 0 ? 1 : min(1, Double(objectsWritten) / Double(objectCount))
    }
}

/// What one compaction did.
public struct CompactionReport: Sendable {
    /// The LSN whose state the new base holds. When the history to keep reaches back to the
    /// store's base (or before its first record: zero), nothing can be replaced and no base is
    /// written: the LSN is then the base's, ``baseBytes`` is 0 and no file is removed (``skipped``
    /// says why, as it does for a base that would not have made the store smaller).
    public let lsn: LSN
    /// The objects it holds.
    public let objects: Int
    /// The base file's size.
    public let baseBytes: UInt64
    /// The live state's size, uncompressed (the base's entries).
    public let liveBytes: UInt64
    /// The store's files on disk before and after.
    public let bytesBefore: UInt64
    /// The store's files on disk after the compaction.
    public let bytesAfter: UInt64
    /// How long it took.
    public let duration: Duration
    /// The files it removed (the segments the base replaced, the previous base).
    public let removedFiles: [String]
    /// Whether the store started it by itself.
    public let automatic: Bool
    /// The saves whose history it dropped (history since an LSN before their last is no longer
    /// available: ``Store/historyHorizon``); nil when it dropped none. It keeps those after the
    /// oldest registered history consumer's token (``Store/registerHistoryConsumer(_:at:)``) and
    /// what `retainHistory` asks for.
    public let historyDropped: ClosedRange<LSN>?
    /// Why the store's files were left as they were; nil when a base was installed. With a
    /// reason, ``lsn`` is the installed base's (zero without one), ``baseBytes`` is 0 and no
    /// file was removed.
    public let skipped: CompactionSkip?
}
