import CairnLog
import CairnSupport
import Foundation

extension Store {
    /// Rewrites the store down to its live state: writes a base holding every object as of
    /// the last save readers see, then replaces the log's frames up to it (one manifest
    /// replacement; a crash before it leaves the store as it was, after it the store opens
    /// from the base). Saves go on meanwhile; they land in the log after the base.
    ///
    /// The store also compacts by itself (``StoreOptions/automaticCompaction``). One compaction
    /// runs at a time: this one waits for a running one to end, then writes its own base.
    ///
    /// - Parameters:
    ///   - level: `.fast` (LZ4) or `.high` (LZ4-HC: smaller, slower to write).
    ///   - retainHistory: the history to keep (nil: none): the base then holds the state as of
    ///     that point, and the saves after it stay in the log.
    ///   - onlyIfSmaller: install the base only when it is smaller than the files it replaces
    ///     (the base and segments before it); else it is removed and the store keeps its files
    ///     (``CompactionReport/skipped``:
    ///     ``CompactionSkip/wouldNotShrink(baseBytes:replacedBytes:)``), but for the active
    ///     segment sealed before the base was written: one more empty segment and manifest
    ///     entry, and a compression dictionary the seal may train for a long segment (as any
    ///     roll does: docs/COMPACTION.md). A store with few dead
    ///     bytes can grow by a compaction: its change records are smaller than a base's rows with
    ///     their fixed-size headers. Off by default: a store opens from a base faster than it
    ///     replays frames. Automatic compactions always install their base.
    ///   - progress: called on the thread writing the base, about every 256 objects; that
    ///     thread runs at a lower priority than the app's (and so would a thread it started).
    /// - Throws: ``StoreError/Code/invalidArgument`` for an in-memory or read-only store;
    ///   ``StoreError/Code/closed`` after ``close()``; a `LogError` when writing fails
    ///   (`LogError.Code.diskFull` when the disk has no room for the base and one more
    ///   segment): the store is then as it was.
    @discardableResult
    public func compact(
        level: CompactionLevel = .fast, retainHistory: HistoryRetention? = nil, onlyIfSmaller: Bool = false,
        progress: (@Sendable (CompactionProgress) -> Void)? = nil
    ) async throws -> CompactionReport {
        try await runCompaction(level: level, automatic: false, retainHistory: retainHistory, installsLarger: !onlyIfSmaller, progress: progress)
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
        level: CompactionLevel, automatic: Bool, retainHistory: HistoryRetention?, installsLarger: Bool = true,
        progress: (@Sendable (CompactionProgress) -> Void)? = nil
    ) async throws -> CompactionReport {
        guard let log, let directory else { throw StoreError(.invalidArgument, "an in-memory store has no log to compact") }
        guard !options.readOnly else { throw StoreError(.invalidArgument, "a store opened read-only is not compacted") }
        // One compaction at a time: an automatic one gives way, one asked for waits its turn.
        // (An automatic one was given the slot when it was started: see noteSaved.)
        while try !automatic && !compaction.withLock({ try $0.claimAskedFor() }) {
            await waitForCompaction(stopping: false)
        }
        notifyCompaction(.started(automatic: automatic))
        let retainHistory = retainHistory ?? (automatic ? options.automaticCompaction.retainHistory : nil)
        let started = ContinuousClock.now
        do {
            // An automatic compaction claimed before close() began must not start after it.
            try throwIfStopRequested()
            let before = Self.bytesOnDisk(directory)
            let expected = Self.liveBytes(snapshot)
            // Nothing to replace (a consumer at the base, or before the first record): no room
            // asked for, no segment sealed, no base written.
            let consumers = try historyConsumerFile.withLock { _ in try HistoryConsumerFile.read(log) }
            let unchanged = snapshot
            let retainedNow = retainedLSN(
                retainHistory, oldestConsumer: consumers.consumers.values.min().map { LSN($0) }, latest: unchanged.lsn, log: log)
            if Self.replacesNothing(retained: retainedNow, latest: unchanged.lsn, log: log) {
                return finishWithoutBase(
                    .historyKept, lsn: retainedNow, objects: unchanged.objects.counts.reduce(0, +), live: expected, before: before,
                    directory: directory, log: log, started: started, automatic: automatic)
            }
            try log.ensureRoomForBase(expectedBytes: expected)
            // A new segment first, so that the base replaces every sealed one before it.
            try log.sealActiveSegment()
            // The published snapshot: every save it holds is acknowledged.
            let latest = self.snapshot
            let horizonBefore = Self.horizon(of: log)
            // The oldest of what the options keep and what a registered history consumer needs.
            let retained = try beginInstallingHorizon(log) { oldestConsumer in
                retainedLSN(retainHistory, oldestConsumer: oldestConsumer, latest: latest.lsn, log: log)
            }
            defer { endInstallingHorizon() }
            // (Looked at again: a consumer may have registered since.)
            guard !Self.replacesNothing(retained: retained, latest: latest.lsn, log: log) else {
                return finishWithoutBase(
                    .historyKept, lsn: retained, objects: latest.objects.counts.reduce(0, +), live: expected, before: before,
                    directory: directory, log: log, started: started, automatic: automatic)
            }
            // On a thread of its own: writing the base, and installing it (removing the replaced
            // files cuts them down a step at a time, each step synced:
            // ``Log/installBase(_:stopCutting:)``).
            let (written, objects, live, removed, skipped) = try await Self.onOwnThread(named: "cairn-compact") {
                try self.writeAndInstallBase(
                    log: log, directory: directory, level: level, retained: retained, latest: latest, installsLarger: installsLarger || automatic,
                    expectedBytes: expected, started: started, progress: progress)
            }
            if let skipped {
                return finishWithoutBase(
                    skipped, lsn: log.baseLSN ?? .zero, objects: objects, live: live, before: before, directory: directory, log: log,
                    started: started, automatic: automatic)
            }
            let keptSegments = log.segmentBytes
            let report = CompactionReport(
                lsn: written.lastLSN, objects: objects, baseBytes: written.length, liveBytes: live, bytesBefore: before,
                bytesAfter: Self.bytesOnDisk(directory), duration: ContinuousClock.now - started, removedFiles: removed,
                automatic: automatic, historyDropped: written.lastLSN > horizonBefore ? horizonBefore.next...written.lastLSN : nil,
                skipped: nil)
            endCompaction { $0.finished(report, keptHistory: written.lastLSN < latest.lsn, keptSegments: keptSegments) }
            notifyCompaction(.finished(report))
            return report
        } catch {
            let failure = endCompaction { $0.failed(with: error, automatic: automatic, settings: options.automaticCompaction) }
            notifyCompaction(.failed(failure))
            throw error
        }
    }

    /// Whether a compaction whose base would hold the state as of `retained` replaces nothing:
    /// the history to keep reaches back before the first record (zero), or to the installed
    /// base while there are saves after it. (With none after it, a base of the latest state is
    /// written again, at the level asked for.)
    private static func replacesNothing(retained: LSN, latest: LSN, log: Log) -> Bool {
        retained == .zero || (retained != latest && retained <= (log.baseLSN ?? .zero))
    }

    /// Ends a compaction that installs no base (`skipped` says why): reports it (no base, no
    /// file removed, no history dropped; `lsn` is the state the store's files hold) and books
    /// it, leaving the base and every segment as they are.
    private func finishWithoutBase(
        _ skipped: CompactionSkip, lsn: LSN, objects: Int, live: UInt64, before: UInt64, directory: String, log: Log,
        started: ContinuousClock.Instant, automatic: Bool
    ) -> CompactionReport {
        let report = CompactionReport(
            lsn: lsn, objects: objects, baseBytes: 0, liveBytes: live, bytesBefore: before,
            bytesAfter: Self.bytesOnDisk(directory), duration: ContinuousClock.now - started, removedFiles: [], automatic: automatic,
            historyDropped: nil, skipped: skipped)
        endCompaction { $0.finishedWithoutBase(report, keptSegments: log.segmentBytes) }
        notifyCompaction(.finished(report))
        return report
    }

    /// Writes the base of the state as of `retained` (`latest`, or with history kept the state
    /// replayed from the files) at a lower priority than the app's threads, then installs it:
    /// unless `installsLarger`, only when it is smaller than the files it replaces (else it is
    /// removed, and the reason returned). Returns the base, the objects and live bytes it holds,
    /// the files it replaced, and why it was not installed.
    private func writeAndInstallBase(
        log: Log, directory: String, level: CompactionLevel, retained: LSN, latest: StoreSnapshot, installsLarger: Bool,
        expectedBytes expected: UInt64, started: ContinuousClock.Instant, progress: (@Sendable (CompactionProgress) -> Void)?
    ) throws -> (written: WrittenBase, objects: Int, live: UInt64, removed: [String], skipped: CompactionSkip?) {
        // Keeping history: the state as of the first save kept, replayed from the files.
        let (snapshot, models) =
            retained == latest.lsn ? (latest, modelHistory) : try Self.stateAsOf(retained, directory: directory, model: model, options: options)
        let count = snapshot.objects.counts.reduce(0, +)
        let writer = try log.makeBaseWriter(lastLSN: snapshot.lsn, level: level)
        let written: WrittenBase, objects: Int
        do {
            // After the replay above, whose worker threads are the app's too.
            (written, objects) = try Self.givingWayToTheApp {
                let objects = try BaseContents.write(snapshot, models: models, to: writer) { done in
                    try self.throwIfStopRequested()
                    progress?(
                        CompactionProgress(
                            objectsWritten: done, objectCount: count, bytesWritten: writer.rawBytes, bytesExpected: expected,
                            elapsed: ContinuousClock.now - started))
                }
                return (try writer.finish(), objects)
            }
        } catch {
            writer.abandon()
            throw error
        }
        let replaced: UInt64
        do {
            try throwIfStopRequested()
            replaced = try log.bytesReplaced(byBaseAt: written.lastLSN)
        } catch {
            log.abandonBase(written)
            throw error
        }
        // A base no smaller than what it replaces (few dead bytes: a change record's inserts
        // are smaller than a base's rows with their fixed-size headers) would grow the store.
        if !installsLarger && written.length >= replaced {
            log.abandonBase(written)
            return (written, objects, writer.rawBytes, [], .wouldNotShrink(baseBytes: written.length, replacedBytes: replaced))
        }
        let removed = try log.installBase(written) { self.compaction.withLock { $0.stopRequested } }
        return (written, objects, writer.rawBytes, removed, nil)
    }

    /// Marks the running compaction ended (after `update`) and wakes those waiting for it.
    private func endCompaction<T>(_ update: (inout CompactionState) -> T) -> T {
        let (result, waiters) = compaction.withLock { state in (update(&state), state.end()) }
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
        guard let look = compaction.withLock({ $0.countSaved(bytes: bytes, lookingEvery: settings.checkInterval) }) else { return }
        let segments = log.segmentBytes
        let onDisk = (base: log.baseBytes, segments: segments - min(segments, look.keptSegments))
        let outgrown = onDisk.segments >= settings.minimumLogSize && onDisk.segments > onDisk.base
        let total = look.base + look.logged
        // The live bytes (a pass over the chunks) only when the log has not outgrown the base.
        guard
            outgrown
                || (onDisk.base + onDisk.segments >= settings.minimumStoreSize && total > 0
                    && Double(total - min(total, Self.liveBytes(snapshot) + modelEntryBytes)) >= settings.deadFraction * Double(total))
        else { return }
        // The slot is taken here, so that no second save starts another before this one runs.
        guard compaction.withLock({ $0.claimAutomatic() }) else { return }
        Task.detached { [self] in _ = try? await runCompaction(level: settings.level, automatic: true, retainHistory: nil) }
    }

    /// The bytes of the models a base holds (live, not dead, for the automatic thresholds):
    /// encoded once, when the thresholds are first looked at.
    private var modelEntryBytes: UInt64 {
        if let known = compaction.withLock({ $0.modelBytes }) { return known }
        let bytes = modelHistory.reduce(0) { $0 + UInt64($1.jsonData(pretty: false).count + 2) }
        compaction.withLock { $0.modelBytes = bytes }
        return bytes
    }

    /// Throws once ``close()`` asked compaction to stop.
    private func throwIfStopRequested() throws {
        if compaction.withLock({ $0.stopRequested }) {
            throw StoreError(.closed, "the store was closed during compaction; it stays as it was")
        }
    }

    /// Waits until no compaction runs. `stopping` (``close()``): asks the running one to stop
    /// first, and no compaction starts after it.
    func waitForCompaction(stopping: Bool) async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            if !compaction.withLock({ $0.wait(waiter, stopping: stopping) }) { waiter.resume() }
        }
    }

    /// The LSN a compaction's base holds the state as of: the oldest of what `retainHistory`
    /// keeps and what the oldest registered consumer (at `oldestConsumer`) needs; `latest`
    /// when neither keeps any history.
    private func retainedLSN(_ retainHistory: HistoryRetention?, oldestConsumer: LSN?, latest: LSN, log: Log) -> LSN {
        [retainHistory, oldestConsumer.map { .since($0) }].compactMap { $0 }.map { retainedLSN($0, latest: latest, log: log) }.min() ?? latest
    }

    /// The LSN a compaction keeping `retention` writes its base at: never past the latest
    /// save, never before the installed base; zero (no base) when it keeps every record from
    /// the first, the model record, on.
    private func retainedLSN(_ retention: HistoryRetention, latest: LSN, log: Log) -> LSN {
        let wanted: LSN
        switch retention {
        case .since(let lsn): wanted = lsn
        case .transactions(let count): wanted = LSN(latest.rawValue - min(count, latest.rawValue))
        case .duration(let duration):
            wanted = log.lastLSN(writtenBefore: Date(timeIntervalSinceNow: -duration.inSeconds)) ?? .zero
        }
        return max(min(wanted, latest), log.baseLSN ?? .zero)
    }

    /// The state as of `lsn` and the models written up to it, replayed from the store's files
    /// by a read-only log of its own (the writer goes on meanwhile).
    private static func stateAsOf(_ lsn: LSN, directory: String, model: Model, options: StoreOptions) throws -> (StoreSnapshot, [Model]) {
        var logOptions = options.logOptions
        logOptions.readOnly = true
        let replayed = try replay(directory: directory, model: model, logOptions: logOptions, through: lsn)
        try? replayed.log.closeNow()
        guard !replayed.history.isEmpty else {
            throw StoreError(.invalidArgument, "nothing to compact: the history to keep reaches back before the store's first record")
        }
        return (replayed.snapshot, replayed.history)
    }

    /// The live state's size as a base holds it, uncompressed: rows and their headers.
    static func liveBytes(_ snapshot: StoreSnapshot) -> UInt64 {
        let objects = snapshot.objects.counts.reduce(0, +)
        return UInt64(snapshot.objects.rowBytes + objects * BaseContents.objectHeaderSize)
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
