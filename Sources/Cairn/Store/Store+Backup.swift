import CairnLog

extension Store {
    /// Copies the store into `destination` as of its last acknowledged save, while saves go on:
    /// the base and sealed segments are hard-linked (copied across file systems), the active
    /// segment copied up to that save, and the copy given a manifest of its own. Opening the
    /// copy is the restore; `cairn verify` checks it.
    ///
    /// Backing up into the same directory again copies only what is new (a segment that grew
    /// is extended, files already there are kept, files no longer needed removed), so the
    /// directory can be shipped to object storage with `rclone sync` or `aws s3 sync` as an
    /// incremental backup (docs/COMPACTION.md). `destination` must be empty (or missing) or an
    /// earlier backup of this store: a backup never replaces or removes a file it did not write.
    ///
    /// ```swift
    /// let report = try await store.backup(to: "/var/backups/library.store")
    /// print("backed up as of LSN \(report.lsn)")
    /// ```
    ///
    /// - Throws: ``StoreError/Code/invalidArgument`` for an in-memory store; a `LogError`
    ///   (`LogError.Code.invalidArgument` when `destination` holds another store's backup,
    ///   was opened as a store, or holds a file in the way, naming the directory and the file;
    ///   I/O errors, after which the backup keeps its previous state).
    @discardableResult
    public func backup(to destination: String) async throws -> BackupReport {
        guard let log else { throw StoreError(.invalidArgument, "an in-memory store has no files to back up") }
        guard commits.withLock({ !$0.closed }) else { throw StoreError(.closed, "the store is closed") }
        return try await Self.onOwnThread(named: "cairn-backup") { try log.backup(to: destination) }
    }
}
