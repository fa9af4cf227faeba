import CairnLog
import Foundation

/// Reads a store's history: the transactions after a token, one at a time, from the store's
/// log (``Store/historyReader(since:entities:)``; ``Store/history(since:entities:)`` is the
/// same as an async sequence).
///
/// A reader reads up to the last save acknowledged when it was made; it holds one log frame at
/// a time, never the whole history. Use one reader from one task at a time.
public final class HistoryReader {
    private let records: LogReader
    /// The LSN of the next record to read: history has no gaps.
    private var expected: LSN
    /// The last save when the reader was made: it reads no further.
    private let end: LSN
    /// A record read whose transaction could not be made: the next call tries it again (it
    /// is not skipped).
    private var pending: LogRecord?
    private let storeID: UUID
    /// The model the next record is written in (nil before the model record, LSN 1).
    private var model: Model?
    /// The entities asked for, by name (nil: all).
    private let entityNames: [String]?
    /// Their indexes and their sub-entities' in ``model`` (nil: all).
    private var wanted: Set<Int>?
    /// The oldest LSN history keeps, for the error when a compaction replaces what is read.
    private let horizon: @Sendable () -> LSN

    init(
        records: LogReader, after start: LSN, through end: LSN, storeID: UUID, model: Model?, entities: [String]?,
        horizon: @escaping @Sendable () -> LSN
    ) {
        self.records = records
        self.expected = start.next
        self.end = end
        self.storeID = storeID
        self.model = model
        self.entityNames = entities
        self.horizon = horizon
        self.wanted = model.map { Self.family(of: entities, in: $0) } ?? nil
    }

    /// The indexes of the entities named (with their sub-entities) in `model`; nil: all. A name
    /// the model does not have matches nothing.
    private static func family(of names: [String]?, in model: Model) -> Set<Int>? {
        names.map { names in names.reduce(into: Set<Int>()) { $0.formUnion(model.entity(named: $1)?.family ?? []) } }
    }

    /// The token after the last record read, whether or not its transaction touched the
    /// entities asked for: a reader made since it goes on where this one stopped.
    public var position: HistoryToken { HistoryToken(storeID: storeID, lsn: expected.previous) }

    /// The next transaction (of those touching the entities asked for), or nil after the last.
    ///
    /// - Throws: ``StoreError/Code/historyUnavailable`` when a compaction replaced the history
    ///   this reader had still to read (its message names the new horizon);
    ///   ``StoreError/Code/corruptRecord`` naming the LSN, segment file and offset of a damaged
    ///   record; a `LogError` for a damaged frame or a failed read.
    public func next() throws -> HistoryTransaction? {
        while expected <= end {
            let record: LogRecord
            if let pending {
                record = pending
            } else {
                do {
                    guard let next = try records.next() else { return nil }
                    record = next
                } catch let error as LogError where error.code == .busy {
                    throw replaced(error.message)
                }
                // (A compaction between the reader's start and its first read: records gone.)
                guard record.lsn == expected else { throw replaced("the next record is LSN \(record.lsn), not LSN \(expected)") }
                pending = record
            }
            do {
                let transaction = try transaction(of: record)
                pending = nil
                expected = record.lsn.next
                if let transaction { return transaction }
            } catch var error as StoreError {
                if error.file == nil {
                    error.file = record.file
                    error.offset = record.offset
                }
                throw error
            }
        }
        return nil
    }

    /// The error when a compaction replaced the history this reader had still to read.
    private func replaced(_ detail: String) -> StoreError {
        let horizon = horizon()
        return StoreError(
            .historyUnavailable,
            "a compaction replaced the history this reader had still to read (\(detail)); history now starts after LSN \(horizon)",
            lsn: horizon)
    }

    /// The transaction of `record`, or nil when it changes none of the entities asked for.
    private func transaction(of record: LogRecord) throws -> HistoryTransaction? {
        let bytes = record.payload
        let lsn = record.lsn
        let token = HistoryToken(storeID: storeID, lsn: lsn)
        guard let model, bytes.count >= 2, bytes[0] == StoreRecord.changesKind, (1...StoreRecord.version).contains(bytes[1]) else {
            switch try StoreRecord.decode(bytes, lsn: lsn, model: model) {
            case .model(let recorded), .migration(let recorded, _):
                model = recorded
                wanted = Self.family(of: entityNames, in: recorded)
                return HistoryTransaction(lsn: lsn, token: token, newModel: recorded)
            case .changes, .parts:
                // (A change record is read above once a model is known; before one, decode threw.)
                throw StoreError(.corruptRecord, "record at LSN \(lsn): a change record comes before any model record", lsn: lsn)
            }
        }
        // The header now (its tombstones skipped); the changes when asked for, unless only some
        // entities' are wanted: then now, to leave out a transaction without any.
        let info = try StoreRecord.changeRecordBody(bytes, lsn: lsn).transaction
        let body = HistoryChanges(record: record, model: model, wanted: wanted)
        if wanted != nil, try body.decoded().isEmpty { return nil }
        return HistoryTransaction(
            lsn: lsn, token: token, timestamp: info?.date, author: info?.author, contextName: info?.contextName, body: body)
    }
}
