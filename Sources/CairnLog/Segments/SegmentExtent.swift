/// Where a segment's valid frames are, as published to readers.
struct SegmentExtent: Sendable {
    var segment: Manifest.Segment
    var path: String
    /// The end of the last acknowledged frame.
    var end: UInt64
    /// The LSN after the last acknowledged frame.
    var nextLSN: LSN
    /// The segment header's format version: which frame flags its frames may carry.
    var version: UInt16
}
