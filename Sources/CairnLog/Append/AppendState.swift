/// A record waiting to be written, with the LSN it was given: its frames (one, or several for a
/// payload over the maximum frame size), written together.
struct PendingRecord: Sendable {
    var lsn: LSN
    var frames: [EncodedPayload]
}

/// An append waiting for its frame to be acknowledged.
struct Waiter: Sendable {
    var lsn: LSN
    var continuation: CheckedContinuation<Void, any Error>
}

/// What appenders share: LSN assignment, the queue of frames to write, who is writing, how far
/// writing and syncing got, and the appenders waiting for that. Guarded by `Log.appendState`.
struct AppendState: Sendable {
    /// The LSN the next append gets.
    var nextLSN: LSN
    /// The last LSN handed to the operating system.
    var writtenLSN: LSN
    /// The last LSN synced to disk.
    var durableLSN: LSN
    /// The segments as readers may see them (up to the last acknowledged frame).
    var extents: [SegmentExtent]
    /// When the last sync finished (for the interval mode's back-pressure).
    var lastSync: ContinuousClock.Instant
    /// Opened read-only: appends are refused.
    var readOnly: Bool
    /// Records with an LSN, not yet written, in LSN order.
    var pending: [PendingRecord] = []
    /// Whether an appender is currently writing the queue (the leader of the group commit).
    var writing = false
    /// Appends waiting for their LSN to be acknowledged.
    var waiters: [Waiter] = []
    /// The write or sync failure that poisoned the log, if any.
    var failure: LogError?
    /// Set by `close()`.
    var closed = false
    /// The newest written frame, for the sync thread.
    var syncTarget: SyncTarget?

    /// The last LSN an append in this durability mode may report as done.
    func acknowledged(for durability: Durability) -> LSN {
        durability == .always ? durableLSN : writtenLSN
    }

    /// The outcome of the append of `lsn`, once there is one.
    func outcome(of lsn: LSN, _ durability: Durability) -> Result<Void, LogError>? {
        if lsn <= acknowledged(for: durability) { return .success(()) }
        if let failure { return .failure(failure) }
        return nil
    }

    /// Removes and returns the waiters whose frames are now acknowledged.
    mutating func takeSatisfiedWaiters(_ durability: Durability) -> [Waiter] {
        let level = acknowledged(for: durability)
        guard waiters.contains(where: { $0.lsn <= level }) else { return [] }
        let ready = waiters.filter { $0.lsn <= level }
        waiters.removeAll { $0.lsn <= level }
        return ready
    }

    /// Throws when a new append must be refused, saying why.
    func checkAcceptingAppends(_ directory: String) throws {
        if closed { throw LogError(.closed, "the log is closed", path: directory) }
        if readOnly { throw LogError(.readOnly, "the log was opened read-only", path: directory) }
        guard let failure else { return }
        if failure.code == .diskFull {
            throw LogError(
                .readOnly, "the disk filled up; the store is read-only until it is reopened (\(failure))",
                path: failure.path, offset: failure.offset)
        }
        throw LogError(
            .poisoned, "an earlier write or sync failed; appends are refused until the store is reopened (\(failure))",
            path: failure.path, offset: failure.offset)
    }
}

/// The active segment and the manifest, owned by the one task that writes at a time.
struct WriterState: Sendable {
    var manifest: Manifest
    /// The active segment, open for writing.
    var segment: SegmentHandle
    /// The active segment's length: the end of its last written frame.
    var length: UInt64
    /// Records in the active segment (the manifest's count: LSNs, not frames).
    var frameCount: UInt64
    /// The active segment's format version: whether it may hold a record of several frames.
    var segmentVersion: UInt16
    /// Reused for building each batch's bytes.
    var buffer: [UInt8] = []
}
