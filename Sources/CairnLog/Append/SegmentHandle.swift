/// An open segment file, shared by the writer and the sync thread, and closed when the last of
/// them lets go (so a roll never closes a descriptor that a sync is still using).
final class SegmentHandle: Sendable {
    let file: OpenFile
    let number: UInt64
    private let io: any FileIO

    init(file: OpenFile, number: UInt64, io: any FileIO) {
        self.file = file
        self.number = number
        self.io = io
    }

    deinit { io.close(file) }
}

/// The newest written frame that may not be on disk yet, and where it ends.
struct SyncTarget: Sendable {
    var segment: SegmentHandle
    var lsn: LSN
    var end: UInt64
}
