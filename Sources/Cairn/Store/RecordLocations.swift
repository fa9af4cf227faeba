import CairnLog

/// Where the last records a replay handed on lie: their segment file and frame offset, by LSN.
///
/// A record's errors name its LSN; the snapshot builder applies records on a thread of its own
/// and its error surfaces a few records later, when the replay no longer holds that record.
/// Kept for the last ``capacity`` records (more than the builder queues and applies at once),
/// these let every such error name the file and offset too.
struct RecordLocations {
    /// How many records' locations are kept.
    static let capacity = 64

    private var kept: [(lsn: LSN, file: String, offset: UInt64)] = []
    private var next = 0

    /// Notes where `record` lies (nothing when it was not read from a file).
    mutating func note(_ record: LogRecord) {
        guard let file = record.file, let offset = record.offset else { return }
        if kept.count < Self.capacity {
            kept.append((record.lsn, file, offset))
        } else {
            kept[next] = (record.lsn, file, offset)
            next = (next + 1) % Self.capacity
        }
    }

    /// `error` with the file and offset of its record, when it is a ``StoreError`` naming an
    /// LSN kept here and no file yet; otherwise `error` as it is.
    func locate(_ error: any Error) -> any Error {
        guard let lsn = (error as? StoreError)?.lsn, let place = kept.first(where: { $0.lsn == lsn }) else { return error }
        return Self.locate(error, in: LogRecord(lsn: place.lsn, payload: [], file: place.file, offset: place.offset))
    }

    /// `error` with the file and offset of `record`, when it is a ``StoreError`` about that
    /// record (its LSN) naming no file yet; otherwise `error` as it is.
    static func locate(_ error: any Error, in record: LogRecord) -> any Error {
        guard var located = error as? StoreError, located.file == nil, located.lsn == record.lsn else { return error }
        located.file = record.file
        located.offset = record.offset
        return located
    }
}
