import CairnSupport
import Foundation

/// Compaction's shared state in a store (held under ``Store``'s `compaction` lock): the one
/// compaction slot, the status, the byte counts the automatic thresholds look at, and the
/// callers waiting for a compaction to end. Its functions keep the books; `Store+Compact.swift`
/// runs the compaction.
struct CompactionState: Sendable {
    /// What ``Store/compactionStatus`` reports.
    private(set) var status = CompactionStatus()
    /// Set by `close()`: the running compaction stops at its next chunk.
    private(set) var stopRequested = false
    /// The bytes of the models a base holds, once computed.
    var modelBytes: UInt64?
    private var waiters: [CheckedContinuation<Void, Never>] = []
    /// The base's entries, uncompressed.
    private var baseBytes: UInt64
    /// The change records after the base, uncompressed.
    private var logBytes: UInt64
    /// Of those, the bytes already counted when the running compaction took its snapshot.
    private var logBytesAtStart: UInt64 = 0
    /// With history kept by the last compaction: the change records and segment bytes it left
    /// in place, which the thresholds leave out.
    private var keptLogBytes: UInt64 = 0
    private var keptSegmentBytes: UInt64 = 0
    /// Bytes appended since the thresholds were last looked at.
    private var unchecked: UInt64 = 0
    /// No automatic compaction before this (after a failure).
    private var holdUntil: ContinuousClock.Instant?

    /// The state of a store opened with a base of `baseBytes` and `logBytes` of change records
    /// after it (uncompressed).
    init(baseBytes: UInt64, logBytes: UInt64) {
        self.baseBytes = baseBytes
        self.logBytes = logBytes
    }

    /// Whether automatic compactions are held back now, after a failure.
    private var isHeldBack: Bool {
        guard let holdUntil else { return false }
        return holdUntil > .now
    }

    /// Takes the one compaction slot, unless a compaction holds it; counts the change records
    /// appended so far as the ones the new base will hold.
    private mutating func claim() -> Bool {
        guard !status.isRunning else { return false }
        status.isRunning = true
        logBytesAtStart = logBytes
        return true
    }

    /// Takes the slot for a compaction the app asked for; false while another holds it.
    /// - Throws: ``StoreError/Code/closed`` once the store is closing.
    mutating func claimAskedFor() throws(StoreError) -> Bool {
        if stopRequested { throw StoreError(.closed, "the store is closed") }
        return claim()
    }

    /// Takes the slot for an automatic compaction: not while the store closes, while automatic
    /// ones are held back after a failure, or while another compaction holds it.
    mutating func claimAutomatic() -> Bool {
        guard !stopRequested, !isHeldBack else { return false }
        return claim()
    }

    /// Counts a saved record of `bytes` toward the automatic thresholds. Once `interval` bytes
    /// came since the thresholds were last looked at (and no compaction runs or is held back,
    /// and the store is not closing), returns what they compare: the base's entries, the change
    /// records since it and the segment bytes kept for history, which the thresholds leave out.
    mutating func countSaved(
        bytes: Int, lookingEvery interval: UInt64
    ) -> (base: UInt64, logged: UInt64, keptSegments: UInt64)? {
        logBytes += UInt64(bytes)
        unchecked += UInt64(bytes)
        guard unchecked >= interval, !status.isRunning, !stopRequested, !isHeldBack else { return nil }
        unchecked = 0
        return (baseBytes, logBytes - min(logBytes, keptLogBytes), keptSegmentBytes)
    }

    /// Books a compaction that replaced nothing (the history to keep reaches back to the base):
    /// the base is the one before; every frame stays on disk (`keptSegments` bytes of segments)
    /// and does not count toward the next one (or every save would start another).
    mutating func finishedWithoutBase(_ report: CompactionReport, keptSegments: UInt64) {
        status.lastReport = report
        status.lastFailure = nil
        status.consecutiveFailures = 0
        status.nextAttempt = nil
        holdUntil = nil
        keptLogBytes = logBytesAtStart
        keptSegmentBytes = keptSegments
    }

    /// Books a compaction that finished. `keptHistory`: its base is older than the latest save,
    /// so the frames before the compaction stay on disk (`keptSegments` bytes of segments) and
    /// do not count toward the next one (or every save would start another).
    mutating func finished(_ report: CompactionReport, keptHistory: Bool, keptSegments: UInt64) {
        status.lastReport = report
        status.lastFailure = nil
        status.consecutiveFailures = 0
        status.nextAttempt = nil
        holdUntil = nil
        baseBytes = report.liveBytes
        if keptHistory {
            keptLogBytes = logBytesAtStart
            keptSegmentBytes = keptSegments
        } else {
            logBytes -= min(logBytes, logBytesAtStart)
            keptLogBytes = 0
            keptSegmentBytes = 0
        }
    }

    /// Books a compaction that failed with `error` and returns the failure to report. After an
    /// automatic one, automatic compactions are held back for `settings`' retry delay.
    mutating func failed(with error: any Error, automatic: Bool, settings: AutomaticCompaction) -> CompactionFailure {
        var delay: Duration?
        if automatic {
            status.consecutiveFailures += 1
            let wait = settings.retryDelay(after: status.consecutiveFailures)
            holdUntil = .now + wait
            status.nextAttempt = Date(timeIntervalSinceNow: wait.inSeconds)
            delay = wait
        }
        let failure = CompactionFailure(error: error, automatic: automatic, date: Date(), retryDelay: delay)
        status.lastFailure = failure
        return failure
    }

    /// Frees the slot of the compaction that ended; returns the callers waiting for it, to wake.
    mutating func end() -> [CheckedContinuation<Void, Never>] {
        status.isRunning = false
        defer { waiters = [] }
        return waiters
    }

    /// Keeps `waiter` to be woken when the running compaction ends, and returns true; returns
    /// false when none runs (the waiter is not kept). `stopping` (``Store/close()``): asks the
    /// running compaction to stop first, and no compaction starts after it.
    mutating func wait(_ waiter: CheckedContinuation<Void, Never>, stopping: Bool) -> Bool {
        if stopping { stopRequested = true }
        if status.isRunning { waiters.append(waiter) }
        return status.isRunning
    }
}
