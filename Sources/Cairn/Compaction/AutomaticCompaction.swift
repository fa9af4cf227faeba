import CairnLog

/// When a store compacts itself (``StoreOptions/automaticCompaction``): after a save, when the
/// log after the base has outgrown the base, or when most bytes on disk are dead.
///
/// ```swift
/// var options = StoreOptions()
/// options.automaticCompaction.deadFraction = 0.7   // wait until 70% is dead
/// options.automaticCompaction = .disabled          // or never compact by itself
/// ```
///
/// A compaction that fails (a full disk, an I/O error) leaves the store as it was, is reported
/// through ``Store/compactionStatus`` and ``Store/observeCompactions(_:)``, and is tried again
/// after ``firstRetryDelay``, doubling after each further failure up to ``maximumRetryDelay``.
public struct AutomaticCompaction: Sendable, Equatable {
    /// Whether the store compacts by itself. Default true.
    public var isEnabled = true
    /// Compact when the log after the base is larger than the base and at least this many
    /// bytes. Default 64 MiB.
    public var minimumLogSize: UInt64 = 64 << 20
    /// Compact when at least this fraction of the store's bytes is dead (replaced or deleted
    /// values), once the store holds at least ``minimumStoreSize`` bytes. Default 0.5.
    ///
    /// Dead bytes are estimated from uncompressed sizes: the base's entries and the change
    /// records after it, against the live objects' rows.
    public var deadFraction = 0.5
    /// The size below which dead bytes alone never start a compaction (a small store rewritten
    /// on every few saves would spend more on its syncs than it saves). Default 1 MiB.
    public var minimumStoreSize: UInt64 = 1 << 20
    /// How hard the base is compressed. Default `CompactionLevel.fast`.
    public var level: CompactionLevel = .fast
    /// The history each automatic compaction keeps. Default nil: none.
    public var retainHistory: HistoryRetention?
    /// The wait before trying again after a failed automatic compaction. Default 1 s.
    public var firstRetryDelay: Duration = .seconds(1)
    /// The longest wait between tries. Default 1 hour.
    public var maximumRetryDelay: Duration = .seconds(3600)

    /// The defaults.
    public init() {}

    /// Never compact by itself (``Store/compact(level:retainHistory:onlyIfSmaller:progress:)`` still does on demand).
    public static var disabled: AutomaticCompaction {
        var options = AutomaticCompaction()
        options.isEnabled = false
        return options
    }

    /// The wait before the next try after `failures` consecutive failed ones (at least 1).
    func retryDelay(after failures: Int) -> Duration {
        var delay = firstRetryDelay
        for _ in 1..<max(1, min(failures, 64)) {
            // Doubling past the maximum (or overflowing) is never needed.
            guard delay < maximumRetryDelay / 2 else { return maximumRetryDelay }
            delay *= 2
        }
        return min(delay, maximumRetryDelay)
    }

    /// Raw bytes appended between two looks at the thresholds: often enough for the smallest
    /// threshold, rarely enough that looking costs nothing next to the saves.
    var checkInterval: UInt64 {
        min(max(min(minimumLogSize, minimumStoreSize) / 16, 4 << 10), 1 << 20)
    }
}

/// How much history a compaction keeps: the frames after an LSN stay in the log, so that
/// readers of history can still read the changes since their token and a store can be opened
/// as of any LSN from there on (``StoreOptions/asOf``). The base then holds the state as of
/// that LSN rather than the latest.
public enum HistoryRetention: Sendable, Equatable {
    /// Keep every save after this LSN.
    case since(LSN)
    /// Keep the last this many saves.
    case transactions(UInt64)
    /// Keep at least the saves of this long ago (counted by whole segments: a segment written
    /// before then is dropped, one written since is kept).
    case duration(Duration)
}
