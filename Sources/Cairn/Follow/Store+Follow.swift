import CairnLog
import Foundation

extension Store {
    /// Opens the store at `directory` read-only and follows the process that writes it: the
    /// view context, fetched results and save observers move forward as that writer commits,
    /// across its segment rolls and compactions. The writer's lock is not taken; any number of
    /// followers may follow one writer.
    ///
    /// A follower is woken by the directory's changes (inotify): it applies a save within about
    /// a millisecond of the writer's acknowledgement (Benchmarks/README.md), and never one the
    /// writer has not acknowledged. When a compaction replaced saves it had still to apply, it
    /// opens the log again and tells observers the saves since its last as missed (fetched
    /// results refetch). When the writer migrates the store to another model, following stops
    /// (``followingError``): open the store again.
    ///
    /// ```swift
    /// let replica = try Store(followingAt: "/var/lib/app/library.store")
    /// for await event in try replica.saves() { refresh(event) }
    /// ```
    ///
    /// - Parameters:
    ///   - directory: The store's folder, written to by a writer in another process (or
    ///     brought up to date by backups and rsync).
    ///   - model: the model the app expects (nil: the store's own); a store written with
    ///     another is refused.
    ///   - options: as for a read-only open (`readOnly` is set; `asOf` must be nil).
    /// - Throws: as ``init(at:options:)``; `LogError.Code.busy` for a folder caught between
    ///   two copies (its manifest names a file that is not there); ``StoreError/Code/modelMismatch`` when `model`
    ///   differs from the store's; ``StoreError/Code/invalidArgument`` with `asOf`; a
    ///   `LogError` when the directory cannot be watched.
    public convenience init(followingAt directory: String, model: Model? = nil, options: StoreOptions = StoreOptions()) throws {
        var options = options
        options.readOnly = true
        options.readsAcknowledgedOnly = true
        guard options.asOf == nil else { throw StoreError(.invalidArgument, "a following store follows the latest saves: asOf must be nil") }
        do {
            try self.init(at: directory, options: options)
        } catch let error as LogError where error.code == .io || error.code == .notFound {
            // A file the manifest names is missing: a copy (rsync of a backup folder) under way.
            guard let missing = error.path, missing != directory, !FileManager.default.fileExists(atPath: missing) else { throw error }
            throw LogError(
                .busy,
                "the folder is caught between two copies: its manifest names \((missing as NSString).lastPathComponent), which is not there (yet); open it again once the copy is complete",
                path: missing)
        }
        if let model, model != self.model {
            let differences = model.differences(from: self.model)
            try? log?.closeNow()
            throw StoreError(.modelMismatch, "the store was written with another model:\n" + differences.joined(separator: "\n"))
        }
        let follower: StoreFollower
        do {
            follower = try StoreFollower(directory: directory)
        } catch {
            try? log?.closeNow()
            throw error
        }
        self.follower.withLock { $0 = follower }
        follower.start(self)
    }

    /// For a following store (``init(followingAt:model:options:)``): what keeps it from moving
    /// forward. A ``StoreError/Code/followingStopped`` error is for good (the writer migrated
    /// the store, the store was replaced or went back, a save could not be applied: open the
    /// store again); any other (a copy under way, a damaged frame, an I/O error) is retried
    /// after a pause that doubles from 10 ms to a second, and cleared when a step succeeds. Nil while it follows, and for
    /// other stores.
    public var followingError: (any Error)? { follower.withLock { $0 }?.error }

    /// One step of following: the saves the writer acknowledged since the last one applied, a
    /// batch at a time, until there are none.
    ///
    /// - Throws: ``StoreError/Code/followingStopped`` when following cannot go on;
    ///   ``StoreError/Code/closed``; any other error for a step to try again.
    func followWriter() throws {
        try followingStep.withLock { _ in try followWriterOnce() }
    }

    private func followWriterOnce() throws {
        while let log, let directory {
            switch try log.followWriter() {
            case .records(let records):
                guard !records.isEmpty else { return }
                do {
                    try applyFollowed(records)
                } catch let gap as FollowedGap {
                    // (The log holds saves the store did not apply: both start again from the files.)
                    try reopenFollowed(directory: directory, replacing: log, because: gap.description)
                    return
                } catch let error as StoreError where error.code == .closed || error.code == .followingStopped {
                    throw error
                } catch {
                    throw Self.followingStopped("a save could not be applied", error)
                }
            case .replaced(let why):
                try reopenFollowed(directory: directory, replacing: log, because: why)
                return
            case .ended(let why):
                throw Self.followingStopped(why, nil)
            }
        }
    }

    /// The error that ends following, with what caused it.
    static func followingStopped(_ why: String, _ cause: (any Error)?) -> StoreError {
        var error = StoreError(.followingStopped, why + (cause.map { ": \($0)" } ?? "") + "; open the following store again")
        if let cause = cause as? StoreError { (error.lsn, error.file, error.offset) = (cause.lsn, cause.file, cause.offset) }
        return error
    }

    /// Records another process's writer acknowledged that do not follow the last one applied.
    private struct FollowedGap: Error, CustomStringConvertible {
        var description: String
    }

    /// Applies and publishes the records another process's writer acknowledged, a few at a time
    /// (the states of the saves waiting to be published are bounded), and calls the save
    /// observers on this thread after each.
    private func applyFollowed(_ records: [LogRecord]) throws {
        var start = records.startIndex
        while start < records.endIndex {
            let end = records.index(start, offsetBy: Tuning.followedSavesPublishedTogether, limitedBy: records.endIndex) ?? records.endIndex
            try applyFollowed(records[start..<end])
            start = end
        }
    }

    private func applyFollowed(_ records: ArraySlice<LogRecord>) throws {
        var failure: (any Error)?
        let applied = try commits.withLock { state -> [(lsn: LSN, save: EncodedSave)] in
            if state.closed { throw StoreError(.closed, "the store is closed") }
            var next = state.accepted
            var done: [(lsn: LSN, snapshot: StoreSnapshot, save: EncodedSave)] = []
            do {
                for record in records {
                    let lsn = record.lsn
                    guard lsn == next.lsn.next else { throw FollowedGap(description: "the writer's next record is LSN \(lsn), after LSN \(next.lsn)") }
                    guard case .changes(let rows) = try StoreRecord.decode(record.payload, lsn: lsn, model: model) else {
                        throw Self.followingStopped("the writer migrated the store to another model at LSN \(lsn)", nil)
                    }
                    var applied = next
                    _ = try applied.apply(rows, at: lsn)
                    next = applied
                    let transaction =
                        try StoreRecord.changeRecordBody(record.payload, lsn: lsn).transaction
                        ?? TransactionInfo(microseconds: 0, author: nil, contextName: nil)
                    let save = EncodedSave(
                        bytes: [], inserted: rows.inserts.map(\.id), updated: rows.updates.map { ($0.id, Array(rows.updatedPositions[$0.positions])) },
                        deleted: rows.deletes, transaction: transaction)
                    done.append((lsn, next, save))
                }
            } catch var error as StoreError {
                if error.file == nil, let record = records.first(where: { $0.lsn == next.lsn.next }) {
                    (error.file, error.offset) = (record.file, record.offset)
                }
                failure = error
            } catch {
                failure = error
            }
            // What applied is published, even when a later record failed.
            state.accepted = next
            _ = publish(done, own: nil)
            return done.map { ($0.lsn, $0.save) }
        }
        let listening = observers.withLock { Array($0.values) }
        for (lsn, save) in applied where !listening.isEmpty {
            let summary = SaveSummary(lsn: lsn, save: save, entities: model.descriptions, snapshot: nil)
            for observer in listening { observer(summary) }
        }
        if let failure { throw failure }
    }

    /// Opens the log again (a compaction replaced the saves after the last applied) and
    /// publishes the state it holds; observers are told the saves between as missed.
    ///
    /// - Throws: ``StoreError/Code/followingStopped`` when the store was replaced by another
    ///   or the writer migrated it; `LogError.Code.busy` when it reads back an older state
    ///   (a copy under way); the open's errors.
    private func reopenFollowed(directory: String, replacing old: Log, because why: String) throws {
        let reopened = try Self.replay(directory: directory, model: nil, logOptions: options.logOptions, through: nil)
        guard reopened.log.storeID == old.storeID else {
            try? reopened.log.closeNow()
            throw Self.followingStopped("the store was replaced by another (wiped or created anew: store \(reopened.log.storeID))", nil)
        }
        guard reopened.history.last == model else {
            try? reopened.log.closeNow()
            throw Self.followingStopped("the writer migrated the store to another model", nil)
        }
        try commits.withLock { state in
            if state.closed {
                try? reopened.log.closeNow()
                throw StoreError(.closed, "the store is closed")
            }
            let since = state.accepted.lsn
            // Never back: a folder read while a copy replaced its manifest may show an older one.
            guard reopened.snapshot.lsn >= since else {
                try? reopened.log.closeNow()
                // A live store (its writer's acknowledgements seen) went back: restored. A
                // replica's folder read mid-copy may show an older manifest for a while.
                if old.followsAcknowledgements || reopened.log.followsAcknowledgements {
                    throw Self.followingStopped(
                        "the store went back to LSN \(reopened.snapshot.lsn), before LSN \(since) shown (restored from a backup?)", nil)
                }
                throw LogError(
                    .busy,
                    "the store read back at LSN \(reopened.snapshot.lsn), before the LSN \(since) shown (a copy under way?), after \(why); trying again",
                    path: directory)
            }
            state.accepted = reopened.snapshot
            currentLog.withLock { $0 = reopened.log }
            published.withLock { current in
                current = reopened.snapshot
                viewVersion.bump()
            }
            let through = reopened.snapshot.lsn
            let count = Int(clamping: through.rawValue - since.rawValue)
            for feed in saveFeeds.withLock({ Array($0.values) }) { feed.putMissed(through: through, count: count) }
        }
        try? old.closeNow()
    }
}
