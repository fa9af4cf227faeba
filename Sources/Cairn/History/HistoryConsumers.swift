import CairnLog
import Foundation

/// The store's registered history consumers, kept in the file `HISTORY-CONSUMERS` of the store
/// directory (JSON: the store's ID and each consumer's LSN by name; written atomically and
/// synced). Compaction keeps every save after the oldest consumer's token.
struct HistoryConsumerFile: Codable, Equatable {
    /// The file's name in the store directory.
    static let name = "HISTORY-CONSUMERS"
    /// The largest file read, and so the most consumers and the longest names kept.
    static let byteLimit = 1 << 20
    static let nameLimit = 256

    /// The store the file belongs to (a file of another store, say one wiped since, is ignored).
    var store: UUID
    /// Each consumer's LSN, by name.
    var consumers: [String: UInt64]

    /// The file of the store `log` belongs to; an empty one when there is none, or when it
    /// belongs to another store.
    ///
    /// - Throws: ``StoreError/Code/corruptRecord`` naming the file when it does not read.
    static func read(_ log: Log) throws -> HistoryConsumerFile {
        let path = log.directory + "/" + name
        let empty = HistoryConsumerFile(store: log.storeID, consumers: [:])
        guard log.io.exists(path) else { return empty }
        let file: HistoryConsumerFile
        do {
            // (Not a regular file, or larger than any written: refused as one that does not read.)
            let bytes = try log.io.readWholeFile(path, limit: byteLimit)
            file = try JSONDecoder().decode(HistoryConsumerFile.self, from: Data(bytes))
        } catch let error as LogError where error.code != .corruption {
            throw error
        } catch {
            throw StoreError(
                .corruptRecord, "the history consumers' file does not read (\(error)); remove it to drop every registration",
                file: path)
        }
        return file.store == log.storeID ? file : empty
    }

    /// Writes the file (atomically: a crash leaves the old one or the new one).
    func write(to log: Log) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        let bytes = Array(try encoder.encode(self))
        // (A file the reader would refuse is never written: compaction reads it.)
        guard bytes.count <= Self.byteLimit else {
            throw StoreError(.invalidArgument, "the history consumers would take more than \(Self.byteLimit) bytes: remove some first")
        }
        try log.io.replaceAtomically(log.directory + "/" + Self.name, directory: log.directory, with: bytes)
    }
}

extension Store {
    /// Registers the history consumer `name` at `token`, or moves it there (Core Data apps keep
    /// such a token per sync job). Compaction then keeps every save after the oldest registered
    /// token, so that each consumer can read the history since its own; move a consumer forward
    /// as it reads, and remove it when it stops, or the log keeps growing behind it.
    ///
    /// Registrations are kept in the store directory and survive reopen; copies and backups of
    /// the store do not carry them.
    ///
    /// - Throws: ``StoreError/Code/invalidArgument`` for an in-memory or read-only store, an
    ///   empty name or one longer than 256 bytes, a token of another store or later than the
    ///   last save; ``StoreError/Code/historyUnavailable`` naming the horizon when `token` is
    ///   older than the history kept; `LogError.Code.busy` when a running compaction is
    ///   replacing the saves after `token` (register again once it ends: if it failed, they are
    ///   still kept); an I/O error writing the file.
    public func registerHistoryConsumer(_ name: String, at token: HistoryToken) throws {
        let log = try consumerLog()
        guard !name.isEmpty, name.utf8.count <= HistoryConsumerFile.nameLimit else {
            throw StoreError(.invalidArgument, "a history consumer's name is 1 to \(HistoryConsumerFile.nameLimit) bytes long")
        }
        try checkToken(token, of: log)
        try historyConsumerFile.withLock { installing in
            // Checked under the lock a compaction reads the file under, against the horizon it
            // installs: no compaction drops the token's history after this check.
            let horizon = Self.horizon(of: log)
            guard token.lsn >= horizon else { throw Self.historyGone(since: token.lsn, horizon: horizon) }
            guard token.lsn >= installing else {
                // (It may yet fail and keep that history: the caller tries again.)
                throw LogError(
                    .busy,
                    "a compaction is replacing the saves up to LSN \(installing), after token \(token): register again once it ends",
                    path: log.directory)
            }
            var file = try HistoryConsumerFile.read(log)
            guard file.consumers[name] != token.lsn.rawValue else { return }
            file.consumers[name] = token.lsn.rawValue
            try file.write(to: log)
        }
    }

    /// Removes the history consumer `name` (nothing when it is not registered): compaction no
    /// longer keeps history for it.
    ///
    /// - Throws: as ``registerHistoryConsumer(_:at:)``.
    public func removeHistoryConsumer(_ name: String) throws {
        let log = try consumerLog()
        try historyConsumerFile.withLock { _ in
            var file = try HistoryConsumerFile.read(log)
            guard file.consumers.removeValue(forKey: name) != nil else { return }
            try file.write(to: log)
        }
    }

    /// The registered history consumers and their tokens, by name (empty for an in-memory store).
    ///
    /// - Throws: ``StoreError/Code/corruptRecord`` when the consumers' file does not read.
    public func historyConsumers() throws -> [String: HistoryToken] {
        guard let log else { return [:] }
        let file = try historyConsumerFile.withLock { _ in try HistoryConsumerFile.read(log) }
        return file.consumers.mapValues { HistoryToken(storeID: log.storeID, lsn: LSN($0)) }
    }

    /// The horizon a compaction installs: `horizon(oldest)` given the oldest registered
    /// consumer's LSN (nil: none). Until ``endInstallingHorizon()`` no consumer registers
    /// before it.
    func beginInstallingHorizon(_ log: Log, _ horizon: (LSN?) throws -> LSN) throws -> LSN {
        try historyConsumerFile.withLock { installing in
            let planned = try horizon(try HistoryConsumerFile.read(log).consumers.values.min().map { LSN($0) })
            installing = planned
            return planned
        }
    }

    /// Ends what ``beginInstallingHorizon(_:_:)`` began (the base is installed, or not).
    func endInstallingHorizon() {
        historyConsumerFile.withLock { $0 = .zero }
    }

    private func consumerLog() throws -> Log {
        guard let log else { throw StoreError(.invalidArgument, "an in-memory store keeps no history") }
        guard !options.readOnly else { throw StoreError(.invalidArgument, "a store opened read-only registers no history consumers") }
        return log
    }
}
