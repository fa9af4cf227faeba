import CairnLog
import CairnSupport
import Foundation

extension Store {
    /// Rewrites the store down to its live state: writes a base holding every object as of
    /// the last save readers see, then replaces the log's frames up to it (one manifest
    /// replacement; a crash before it leaves the store as it was, after it the store opens
    /// from the base). Saves go on meanwhile; they land in the log after the base.
    ///
    /// The store also compacts by itself (``StoreOptions/automaticCompaction``).
    ///
    /// - Parameter level: `.fast` (LZ4) or `.high` (LZ4-HC: smaller, slower to write).
    /// One compaction runs at a time: this one waits for a running one to end, then writes its
    /// own base.
    ///
    /// - Throws: ``StoreError/Code/invalidArgument`` for an in-memory or read-only store;
    ///   ``StoreError/Code/closed`` after ``close()``;
    ///   a ``LogError`` when writing fails (``LogError/Code/diskFull`` when the disk has no
    ///   room for the base and one more segment): the store is then as it was.
    /// - Parameter progress: called on the compacting thread as the base is written, about
    ///   every 256 objects.
    @discardableResult
    public func compact(
        level: CompactionLevel = .fast, progress: (@Sendable (CompactionProgress) -> Void)? = nil
    ) async throws -> CompactionReport {
        try await runCompaction(level: level, automatic: false, progress: progress)
    }

    /// What compaction is doing and last did: whether one runs, the last report, the last
    /// failure and when the next automatic try may start.
    public var compactionStatus: CompactionStatus { compaction.withLock { $0.status } }

    /// Calls `handler` when a compaction starts, finishes or fails (on the compacting task).
    public func observeCompactions(_ handler: @escaping @Sendable (CompactionEvent) -> Void) -> SaveObservation {
        let token = UUID()
        compactionObservers.withLock { $0[token] = handler }
        return SaveObservation { [weak self] in _ = self?.compactionObservers.withLock { $0.removeValue(forKey: token) } }
    }

    private func runCompaction(
        level: CompactionLevel, automatic: Bool, progress: (@Sendable (CompactionProgress) -> Void)? = nil
    ) async throws -> CompactionReport {
        guard let log, let directory else { throw StoreError(.invalidArgument, "an in-memory store has no log to compact") }
        guard !options.readOnly else { throw StoreError(.invalidArgument, "a store opened read-only is not compacted") }
        // One compaction at a time: an automatic one gives way, one asked for waits its turn.
        while try !compaction.withLock({ state in
            if state.stopRequested { throw StoreError(.closed, "the store is closed") }
            if state.status.isRunning {
                if automatic { throw StoreError(.invalidArgument, "a compaction is already running") }
                return false
            }
            state.status.isRunning = true
            state.logBytesAtStart = state.logBytes
            return true
        }) {
            await waitForCompaction(stopping: false)
        }
        notifyCompaction(.started(automatic: automatic))
        let started = ContinuousClock.now
        do {
            let before = Self.bytesOnDisk(directory)
            try log.ensureRoomForBase(expectedBytes: Self.liveBytes(snapshot))
            // A new segment first, so that the base replaces every sealed one before it.
            try log.sealActiveSegment()
            // The published snapshot: every save it holds is acknowledged.
            let snapshot = self.snapshot
            let models = modelHistory
            let expected = Self.liveBytes(snapshot)
            let count = snapshot.objects.counts.reduce(0, +)
            let (written, objects, live) = try await Self.onOwnThread { [compaction] in
                let writer = try log.makeBaseWriter(lastLSN: snapshot.lsn, level: level)
                do {
                    let objects = try BaseContents.write(snapshot, models: models, to: writer) { done in
                        if compaction.withLock({ $0.stopRequested }) {
                            throw StoreError(.closed, "the store was closed during compaction; it stays as it was")
                        }
                        progress?(
                            CompactionProgress(
                                objectsWritten: done, objectCount: count, bytesWritten: writer.rawBytes, bytesExpected: expected,
                                elapsed: ContinuousClock.now - started))
                    }
                    return (try writer.finish(), objects, writer.rawBytes)
                } catch {
                    writer.abandon()
                    throw error
                }
            }
            let removed = try log.installBase(written)
            let report = CompactionReport(
                lsn: written.lastLSN, objects: objects, baseBytes: written.length, liveBytes: live, bytesBefore: before,
                bytesAfter: Self.bytesOnDisk(directory), duration: ContinuousClock.now - started, removedFiles: removed,
                automatic: automatic)
            endCompaction { state in
                state.status.lastReport = report
                state.status.lastFailure = nil
                state.status.consecutiveFailures = 0
                state.status.nextAttempt = nil
                state.holdUntil = nil
                state.baseBytes = live
                state.logBytes -= min(state.logBytes, state.logBytesAtStart)
            }
            notifyCompaction(.finished(report))
            return report
        } catch {
            let failure = endCompaction { state -> CompactionFailure in
                var delay: Duration?
                if automatic {
                    state.status.consecutiveFailures += 1
                    let wait = options.automaticCompaction.retryDelay(after: state.status.consecutiveFailures)
                    state.holdUntil = .now + wait
                    state.status.nextAttempt = Date(timeIntervalSinceNow: wait.inSeconds)
                    delay = wait
                }
                let failure = CompactionFailure(error: error, automatic: automatic, date: Date(), retryDelay: delay)
                state.status.lastFailure = failure
                return failure
            }
            notifyCompaction(.failed(failure))
            throw error
        }
    }

    /// Marks the running compaction ended (after `update`) and wakes those waiting for it.
    private func endCompaction<T>(_ update: (inout CompactionState) -> T) -> T {
        let (result, waiters) = compaction.withLock { state in
            let result = update(&state)
            state.status.isRunning = false
            defer { state.waiters = [] }
            return (result, state.waiters)
        }
        for waiter in waiters { waiter.resume() }
        return result
    }

    private func notifyCompaction(_ event: CompactionEvent) {
        for observer in compactionObservers.withLock({ Array($0.values) }) { observer(event) }
    }

    /// Counts a save's record toward the automatic thresholds and, when they are met, starts a
    /// compaction on a task of its own (the save does not wait for it).
    func noteSaved(bytes: Int) {
        let settings = options.automaticCompaction
        guard let log, settings.isEnabled, !options.readOnly else { return }
        let look = compaction.withLock { state -> (base: UInt64, logged: UInt64)? in
            state.logBytes += UInt64(bytes)
            state.unchecked += UInt64(bytes)
            guard state.unchecked >= settings.checkInterval, !state.status.isRunning, !state.stopRequested else { return nil }
            if let hold = state.holdUntil, hold > .now { return nil }
            state.unchecked = 0
            return (state.baseBytes, state.logBytes)
        }
        guard let look else { return }
        let onDisk = (base: log.baseBytes, segments: log.segmentBytes)
        let outgrown = onDisk.segments >= settings.minimumLogSize && onDisk.segments > onDisk.base
        let total = look.base + look.logged
        let dead =
            onDisk.base + onDisk.segments >= settings.minimumStoreSize && total > 0
            && Double(total - min(total, Self.liveBytes(snapshot))) >= settings.deadFraction * Double(total)
        guard outgrown || dead else { return }
        Task.detached { [self] in _ = try? await runCompaction(level: settings.level, automatic: true) }
    }

    /// Waits until no compaction runs. `stopping` (``close()``): asks the running one to stop
    /// first, and no compaction starts after it.
    func waitForCompaction(stopping: Bool) async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let running = compaction.withLock { state in
                if stopping { state.stopRequested = true }
                if state.status.isRunning { state.waiters.append(waiter) }
                return state.status.isRunning
            }
            if !running { waiter.resume() }
        }
    }

    /// The live state's size as a base holds it, uncompressed: rows and their headers.
    static func liveBytes(_ snapshot: StoreSnapshot) -> UInt64 {
        let objects = snapshot.objects.counts.reduce(0, +)
        return UInt64(snapshot.objects.rowBytes + objects * BaseContents.objectHeaderSize)
    }

    /// Runs `work` on a thread of its own (compaction reads and writes for seconds: not on a
    /// thread Swift's tasks share).
    static func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
        }
    }

    /// The bytes of the store's own files (segments, bases, dictionaries, manifests).
    static func bytesOnDisk(_ directory: String) -> UInt64 {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.reduce(0) { total, name in
            let size = (try? FileManager.default.attributesOfItem(atPath: directory + "/" + name)[.size] as? NSNumber)?.uint64Value ?? 0
            return total + size
        }
    }
}
