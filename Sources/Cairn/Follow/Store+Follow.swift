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
    ///   - model: the model the app expects (nil: the store's own); a store written with
    ///     another is refused.
    ///   - options: as for a read-only open (`readOnly` is set; `asOf` must be nil).
    /// - Throws: as ``init(at:options:)``; ``LogError/Code/busy`` for a folder caught between
    ///   two copies (its manifest names a file that is not there); ``StoreError/Code/modelMismatch`` when `model`
    ///   differs from the store's; ``StoreError/Code/invalidArgument`` with `asOf`; a
    ///   ``LogError`` when the directory cannot be watched.
    public convenience init(followingAt directory: String, model: Model? = nil, options: StoreOptions = StoreOptions()) throws {
        var options = options
        options.readOnly = true
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
        let follower = try StoreFollower(directory: directory)
        self.follower.withLock { $0 = follower }
        follower.start(self)
    }

    /// For a following store (``init(followingAt:model:options:)``): what stopped it from moving
    /// forward at its last try (a damaged frame, a migration by the writer, an I/O error);
    /// nil while it follows, and for other stores.
    public var followingError: (any Error)? { follower.withLock { $0 }?.failure.withLock { $0 } }

    /// One step of following: the saves the writer acknowledged since the last one applied, a
    /// batch at a time, until there are none.
    func followWriter() throws {
        while let log, let directory {
            switch try log.followWriter() {
            case .records(let records):
                guard !records.isEmpty else { return }
                try applyFollowed(records)
            case .replaced:
                try reopenFollowed(directory: directory, replacing: log)
                return
            }
        }
    }

    /// Applies and publishes the records another process's writer acknowledged.
    private func applyFollowed(_ records: [LogRecord]) throws {
        try commits.withLock { state in
            if state.closed { throw StoreError(.closed, "the store is closed") }
            var next = state.accepted
            var done: [(lsn: LSN, snapshot: StoreSnapshot, save: EncodedSave)] = []
            defer {
                // What applied is published, even when a later record fails.
                state.accepted = next
                _ = publish(done, own: nil)
            }
            for record in records {
                let lsn = record.lsn
                guard lsn == next.lsn.next else {
                    throw StoreError(.corruptRecord, "the writer's next record is LSN \(lsn), after LSN \(next.lsn)", lsn: lsn, file: record.file)
                }
                guard case .changes(let rows) = try StoreRecord.decode(record.payload, lsn: lsn, model: model) else {
                    throw StoreError(
                        .modelMismatch, "the writer migrated the store to another model at LSN \(lsn): open the following store again",
                        lsn: lsn)
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
        }
    }

    /// Opens the log again (a compaction replaced the saves after the last applied) and
    /// publishes the state it holds; observers are told the saves between as missed.
    private func reopenFollowed(directory: String, replacing old: Log) throws {
        var logOptions = options.logOptions
        logOptions.readOnly = true
        let reopened = try Self.replay(directory: directory, model: nil, logOptions: logOptions, through: nil)
        guard reopened.history.last == model else {
            try? reopened.log.closeNow()
            throw StoreError(.modelMismatch, "the writer migrated the store to another model: open the following store again")
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
                throw LogError(
                    .busy, "the store read back at LSN \(reopened.snapshot.lsn), before the LSN \(since) shown (a copy under way?); trying again",
                    path: directory)
            }
            state.accepted = reopened.snapshot
            currentLog.withLock { $0 = reopened.log }
            published.withLock { current in
                current = reopened.snapshot
                viewVersion.bump()
            }
            let through = reopened.snapshot.lsn
            let count = Int(clamping: through.rawValue - min(through.rawValue, since.rawValue))
            for feed in saveFeeds.withLock({ Array($0.values) }) { feed.putMissed(through: through, count: count) }
        }
        try? old.closeNow()
    }
}
