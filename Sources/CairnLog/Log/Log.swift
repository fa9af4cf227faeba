import CairnSupport
import Glibc
import class Foundation.NSLock
import Synchronization
import struct Foundation.UUID

/// A store's append-only log: numbered segment files of checksummed, optionally compressed
/// frames, each holding one opaque payload (a transaction) under a contiguous LSN.
///
/// ```swift
/// let log = try Log.open(at: "/var/lib/app/store")
/// let lsn = try await log.append(Array("hello".utf8))
/// for record in try log.records(from: .first) { … }   // see LogReader
/// try await log.close()
/// ```
///
/// Opening recovers the log (see ``RecoveryMode``); ``append(_:)`` returns once the frame is as
/// durable as ``LogOptions/durability`` says, batching concurrent appends into one write and one
/// sync. A failed write or sync poisons the log: that append and every later one throws until
/// the store is reopened. One process at a time may open a store for writing (`flock` on `LOCK`).
///
/// `Log` is `Sendable`: append and read from any task or thread.
public final class Log: Sendable {
    /// The store's directory.
    public let directory: String
    /// The options the log was opened with.
    public let options: LogOptions
    /// What opening found and did.
    public let recoveryReport: RecoveryReport

    package let layout: StoreLayout
    package let io: any FileIO
    package let codec: PayloadCodec
    let manifestFile: ManifestFile
    /// The store's random identity, fixed when it was created (it is in every segment header).
    public let storeID: UUID
    /// The largest frame readers accept: the manifest's maximum frame size.
    let frameLimit: Int
    let lockFile: Protected<OpenFile?>
    let appendState: Protected<AppendState>
    /// The active segment and manifest; held by the one task that writes, syncs or rolls.
    let writer: Protected<WriterState?>
    /// Syncs written frames off the cooperative pool (absent in `.none` mode and read-only).
    let syncThread = Protected<SyncThread?>(nil)
    /// Set after each write, cleared by each sync: lets the sync thread poll without a lock.
    let unsyncedWrites = Atomic<Bool>(false)
    /// Held across every `fdatasync` of the log and the decision that follows it (acknowledge,
    /// or poison): two syncs of one file racing on a failed writeback can see one error and one
    /// success, and the success must not acknowledge what the failure lost. Lock order:
    /// `writer`, then `syncOrder`, then `appendState`.
    let syncOrder = NSLock()
    /// The base the manifest names (replaced by ``installBase(_:stopCutting:)``).
    let installedBase: Protected<Manifest.Base?>
    /// Set while a base is being written (one compaction at a time).
    let compacting = Atomic<Bool>(false)
    /// A writer's ``AcknowledgedFile``, rewritten after each acknowledgement.
    let acknowledgedFile = Protected<AcknowledgedFileWriter?>(nil)
    /// A read-only log's manifest as it last read it (its open's, or a later one
    /// ``followWriter(byteLimit:)`` read): the files it reads.
    let followedManifest: Protected<Manifest>
    /// What ``followWriter(byteLimit:)`` reads next. Taken before `appendState`,
    /// `installedBase`, `followedManifest` and the codec's lock, and held through a step's reads.
    let following = Protected(FollowState())

    init(
        layout: StoreLayout, options: LogOptions, report: RecoveryReport, codec: PayloadCodec, storeID: UUID,
        frameLimit: Int, lockFile: OpenFile?, writer: WriterState?, extents: [SegmentExtent], nextLSN: LSN, manifest: Manifest
    ) {
        self.installedBase = Protected(manifest.base)
        self.followedManifest = Protected(manifest)
        self.layout = layout
        self.directory = layout.directory
        self.options = options
        self.recoveryReport = report
        self.io = options.fileIO
        self.codec = codec
        self.storeID = storeID
        self.frameLimit = frameLimit
        self.manifestFile = ManifestFile(layout: layout, io: options.fileIO)
        self.lockFile = Protected(lockFile)
        self.writer = Protected(writer)
        let last = nextLSN.previous
        self.appendState = Protected(
            AppendState(
                nextLSN: nextLSN, writtenLSN: last, durableLSN: last, extents: extents,
                lastSync: .now, readOnly: writer == nil))
    }

    deinit {
        syncThread.withLock { $0?.stopSoon() }
        acknowledgedFile.withLock { writer in
            if let writer { io.close(writer.file) }
        }
        following.withLock { state in
            if let file = state.file { io.close(file) }
        }
        lockFile.withLock { file in
            if let file { io.close(file) }
        }
    }

    /// The LSN of the last acknowledged frame (``LSN/zero`` for an empty log).
    public var lastLSN: LSN {
        appendState.withLock { state in
            state.acknowledged(for: options.durability)
        }
    }

    /// The LSN of the last frame known to be on disk.
    public var durableLSN: LSN { appendState.withLock { $0.durableLSN } }

    /// The LSN of the first frame the log still holds.
    public var firstLSN: LSN { appendState.withLock { $0.extents.first?.segment.firstLSN ?? .first } }

    /// The LSN whose state the store's base holds (nil: no compaction yet). Frames up to it
    /// are not replayed.
    public var baseLSN: LSN? { installedBase.withLock { $0?.lastLSN } }

    /// The bytes of the installed base file (0 without one).
    public var baseBytes: UInt64 { installedBase.withLock { $0?.length ?? 0 } }

    /// The bytes of the log's segments up to the last acknowledged frame: the log after the base.
    public var segmentBytes: UInt64 { appendState.withLock { $0.extents.reduce(0) { $0 + $1.end } } }

    /// Finishes pending appends, syncs, and releases the writer lock. Later appends throw
    /// ``LogError/Code/closed``; readers made before keep working.
    public func close() async throws {
        let last = appendState.withLock { state -> LSN in
            state.closed = true
            return state.nextLSN.previous
        }
        // An append that failed has already reported its error; close only reports its own.
        try? await waitFor(last)
        try finishClosing()
    }

    /// Closes at once, from synchronous code that has no append in flight (opening code).
    package func closeNow() throws {
        appendState.withLock { $0.closed = true }
        try finishClosing()
    }

    /// Appends and syncs from synchronous code that has no other append in flight: the caller
    /// writes its own frame and syncs it on its thread.
    package func appendNow(_ payload: [UInt8]) throws -> LSN {
        let lsn = try submit(payload)
        try syncWrittenFrames()
        if let failure = appendState.withLock({ $0.outcome(of: lsn, .always) }), case .failure(let error) = failure { throw error }
        return lsn
    }

    private func finishClosing() throws {
        let thread = syncThread.withLock { thread in
            defer { thread = nil }
            return thread
        }
        thread?.stop()
        var failure: (any Error)?
        if appendState.withLock({ $0.failure == nil && !$0.readOnly }) {
            do { try syncWrittenFrames() } catch { failure = error }
        }
        writer.withLock { $0 = nil }
        appendState.withLock { $0.syncTarget = nil }
        lockFile.withLock { file in
            if let file { io.close(file) }
            file = nil
        }
        acknowledgedFile.withLock { writer in
            if let writer { io.close(writer.file) }
            writer = nil
        }
        following.withLock { state in
            if let file = state.file { io.close(file) }
            state = FollowState(acknowledged: state.acknowledged)
        }
        if let failure { throw failure }
    }
}
