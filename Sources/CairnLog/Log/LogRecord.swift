/// One frame's payload as it was appended, with its LSN.
public struct LogRecord: Sendable, Equatable {
    /// The frame's position in the log.
    public var lsn: LSN
    /// The bytes given to ``Log/append(_:)``.
    public var payload: [UInt8]
    /// The segment file the frame was read from, when it was read from one: for error messages.
    public var file: String?
    /// The byte offset of the frame in ``file``.
    public var offset: UInt64?

    /// Creates a record, read from `file` at `offset` when given.
    public init(lsn: LSN, payload: [UInt8], file: String? = nil, offset: UInt64? = nil) {
        self.lsn = lsn
        self.payload = payload
        self.file = file
        self.offset = offset
    }

    /// Records are equal when they hold the same payload at the same LSN, wherever they were
    /// read from (a backup's copy of a record is the same record).
    public static func == (lhs: LogRecord, rhs: LogRecord) -> Bool {
        lhs.lsn == rhs.lsn && lhs.payload == rhs.payload
    }
}
