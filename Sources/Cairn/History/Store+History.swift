import CairnLog
import Foundation

extension Store {
    /// The token of the store's state now: history since it starts with the next save.
    public var currentHistoryToken: HistoryToken {
        HistoryToken(storeID: log?.storeID ?? memoryIdentifier, lsn: log.map(historyEnd) ?? lastSaveLSN)
    }

    /// The last save history tells of: the last one published that `log` holds (a read-only
    /// open that migrated in memory publishes LSNs its log does not hold).
    func historyEnd(of log: Log) -> LSN {
        min(lastSaveLSN, log.lastLSN)
    }

    /// The oldest token history can be read from: compaction replaced the saves up to it (the
    /// LSN of the store's base), or, before any compaction, the token before the first record.
    /// What compaction keeps is set by ``registerHistoryConsumer(_:at:)`` and
    /// ``compact(level:retainHistory:onlyIfSmaller:progress:)``'s `retainHistory`.
    public var historyHorizon: HistoryToken {
        HistoryToken(storeID: log?.storeID ?? memoryIdentifier, lsn: log.map(Self.horizon) ?? lastSaveLSN)
    }

    /// The oldest LSN history since which `log` can tell.
    static func horizon(of log: Log) -> LSN {
        log.baseLSN ?? log.firstLSN.previous
    }

    /// The transactions after `token` (nil: every one the store keeps), streamed from the log:
    /// each save with its LSN, time, author, context name and changes (Core Data's persistent
    /// history). The sequence ends with the last save acknowledged when it starts to be read.
    ///
    /// ```swift
    /// for try await transaction in try store.history(since: savedToken, entities: ["Book"]) {
    ///     for change in try transaction.changes { print(change.kind, change.objectID, change.valuesByName) }
    ///     savedToken = transaction.token
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - token: The place to start after: a transaction's ``HistoryTransaction/token``
    ///     kept from an earlier read (nil: every save the store keeps).
    ///   - entities: the entities whose changes to list (their sub-entities' too; nil:
    ///     all). A transaction that changes none of them is left out; one that records a model
    ///     or a migration is kept.
    /// - Throws: as ``historyReader(since:entities:)`` (here for the token; while reading, for
    ///   the records).
    public func history(since token: HistoryToken?, entities: [String]? = nil) throws -> StoreHistory {
        _ = try historyStart(since: token, entities: entities)
        return StoreHistory(store: self, token: token, entities: entities)
    }

    /// A reader of the transactions after `token` (nil: every one the store keeps), one at a
    /// time: ``history(since:entities:)`` without the async sequence.
    ///
    /// - Throws: ``StoreError/Code/historyUnavailable`` naming the horizon when `token` is older
    ///   than what compaction kept (``historyHorizon``); ``StoreError/Code/invalidArgument`` for a
    ///   token of another store, one later than the last save the log holds, an entity that no
    ///   model the records after `token` are written in has (one a later migration removed is
    ///   taken: its history is there), or an in-memory store (it keeps no history).
    public func historyReader(since token: HistoryToken?, entities: [String]? = nil) throws -> HistoryReader {
        let (log, start) = try historyStart(since: token, entities: entities)
        let model = recordedModels.last { $0.lsn <= start }?.model
        return HistoryReader(
            records: log.records(from: start.next), after: start, through: historyEnd(of: log), storeID: log.storeID, model: model, entities: entities
        ) { [weak self, weak log] in
            // (The store's log now: a follower opens its log again after a compaction.)
            max(log.map(Self.horizon) ?? .zero, self?.log.map(Self.horizon) ?? .zero)
        }
    }

    /// The log and the LSN history after `token` starts after, checked.
    private func historyStart(since token: HistoryToken?, entities: [String]?) throws -> (Log, LSN) {
        guard let log else { throw StoreError(.invalidArgument, "an in-memory store keeps no history") }
        let horizon = Self.horizon(of: log)
        let start: LSN
        if let token {
            try checkToken(token, of: log)
            // (The error names the horizon as it is after the check: a compaction may have
            // moved it since it was read above.)
            guard token.lsn >= horizon else { throw Self.historyGone(since: token.lsn, horizon: max(horizon, Self.horizon(of: log))) }
            start = token.lsn
        } else {
            start = horizon
        }
        try checkEntityNames(entities, after: start)
        return (log, start)
    }

    /// Checks that each name in `entities` is an entity of a model history after `start` is
    /// read in: the one the record after `start` is written in and each recorded since (an
    /// entity a migration renamed or removed still has its history; one only a read-only
    /// open's migration in memory has, none).
    private func checkEntityNames(_ entities: [String]?, after start: LSN) throws {
        guard let entities, !entities.isEmpty else { return }
        let models = historyModels(after: start)
        for name in entities where !models.contains(where: { $0.entity(named: name) != nil }) {
            throw StoreError(
                .invalidArgument, "history of entity \(name), which no model of the store's history after LSN \(start) has", entity: name)
        }
    }

    /// The models the records after `start` are written in, oldest first.
    func historyModels(after start: LSN) -> [Model] {
        let current = recordedModels.last { $0.lsn <= start }.map { [$0.model] } ?? []
        return current + recordedModels.filter { $0.lsn > start }.map(\.model)
    }

    /// Checks that `token` is one of this store's, not later than its last save.
    func checkToken(_ token: HistoryToken, of log: Log) throws {
        guard token.storeID == log.storeID else {
            throw StoreError(.invalidArgument, "history token \(token) belongs to another store (this one is \(log.storeID.uuidString.lowercased()))")
        }
        let last = historyEnd(of: log)
        guard token.lsn <= last else {
            throw StoreError(.invalidArgument, "history token \(token) is later than the store's last save, LSN \(last)", lsn: last)
        }
    }

    /// The error for history since `lsn`, which compaction replaced up to `horizon`.
    static func historyGone(since lsn: LSN, horizon: LSN) -> StoreError {
        StoreError(
            .historyUnavailable,
            "history since LSN \(lsn) is gone: compaction replaced the saves up to LSN \(horizon), the horizon (register a history consumer, or compact with retainHistory, to keep it)",
            lsn: horizon)
    }
}

/// The transactions of a store's history after a token, as an async sequence
/// (``Store/history(since:entities:)``). Each iteration reads the log anew.
public struct StoreHistory: AsyncSequence, Sendable {
    /// One save.
    public typealias Element = HistoryTransaction

    let store: Store
    let token: HistoryToken?
    let entities: [String]?

    /// An iterator that opens its reader at its first step.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(history: self) }

    /// Reads the transactions one at a time.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let history: StoreHistory
        var reader: HistoryReader?

        /// The next transaction, or nil after the last.
        public mutating func next() async throws -> HistoryTransaction? {
            if reader == nil { reader = try history.store.historyReader(since: history.token, entities: history.entities) }
            return try reader?.next()
        }
    }
}
