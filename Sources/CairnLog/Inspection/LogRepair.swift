/// What `cairn verify --repair` did.
public struct LogRepairResult: Sendable, Equatable {
    /// The segment that was cut, if any.
    public var segment: String?
    /// The offset the segment was cut at.
    public var offset: UInt64?
    /// The file the removed bytes were saved to.
    public var savedTo: String?
    /// How many bytes were removed.
    public var bytes: UInt64 = 0
}

extension Log {
    /// Cuts a torn tail off the active segment, first saving the removed bytes to a side file
    /// (`<segment>.torn-<offset>`) next to it. Takes the writer lock.
    ///
    /// - Returns: what was cut; an empty result when the tail was intact.
    /// - Throws: ``LogError/Code/corruption`` when the damage is not a torn tail (valid frames
    ///   follow it, or it is in a sealed segment): that cannot be repaired by cutting.
    public static func repairTornTail(directory: String) throws -> LogRepairResult {
        try repairTornTail(directory: directory, io: PosixFileIO())
    }

    package static func repairTornTail(directory: String, io: any FileIO) throws -> LogRepairResult {
        let layout = StoreLayout(directory: directory)
        let lock = try acquireLock(layout, io)
        defer { io.close(lock) }
        let inspection = try LogInspection.inspect(directory: directory, io: io, holdingLock: true)
        for segment in inspection.segments {
            if case .damaged(let error) = segment.status { throw error }
        }
        guard let active = inspection.segments.last, case .tornTail(let offset, _) = active.status else {
            return LogRepairResult()
        }
        let path = layout.path(active.file)
        let file = try io.open(path, mode: .readWrite)
        defer { io.close(file) }
        let length = try io.size(of: file)
        guard let number = StoreLayout.parse(active.file)?.number else { return LogRepairResult() }
        let sidePath = try saveCutBytes(of: file, from: offset, to: length, segment: number, layout: layout, io: io)
        try io.truncate(file, to: offset)
        try io.fullSync(file)
        return LogRepairResult(segment: active.file, offset: offset, savedTo: sidePath, bytes: length - offset)
    }
}
