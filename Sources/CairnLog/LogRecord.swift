/// One frame's payload as it was appended, with its LSN.
public struct LogRecord: Sendable, Equatable {
    /// The frame's position in the log.
    public var lsn: LSN
    /// The bytes given to ``Log/append(_:)``.
    public var payload: [UInt8]

    /// Creates a record.
    public init(lsn: LSN, payload: [UInt8]) {
        self.lsn = lsn
        self.payload = payload
    }
}

/// Where a segment's valid frames are, as published to readers.
struct SegmentExtent: Sendable {
    var segment: Manifest.Segment
    var path: String
    /// The end of the last acknowledged frame.
    var end: UInt64
    /// The LSN after the last acknowledged frame.
    var nextLSN: LSN
}
