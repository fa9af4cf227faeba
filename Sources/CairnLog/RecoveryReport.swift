/// What opening a log found and did: a cut torn tail, removed left-over files, a fallback
/// manifest, and in salvage mode the LSN ranges that were lost.
public struct RecoveryReport: Sendable, CustomStringConvertible {
    /// A torn tail found at the end of the active segment.
    public struct TornTail: Sendable, Equatable {
        /// The active segment's path.
        public var path: String
        /// Where the first incomplete or invalid frame starts (the segment's new length).
        public var offset: UInt64
        /// How many bytes followed it.
        public var bytes: UInt64
        /// Why the frame at `offset` was refused.
        public var reason: String
        /// Whether the bytes were cut from the file (false when opened read-only).
        public var wasCut: Bool
    }

    /// The torn tail, if the active segment had one.
    public var tornTail: TornTail?
    /// Left-over files of Cairn's own patterns that the manifest did not reference, removed.
    public var removedFiles: [String] = []
    /// Set when the manifest came from `MANIFEST.tmp` or `MANIFEST.prev`, saying why.
    public var manifestNote: String?
    /// In salvage mode: frames that could not be read, as LSN ranges.
    public var lostRanges: [ClosedRange<LSN>] = []
    /// In salvage mode: each damage found, with its file and offset.
    public var damage: [LogError] = []

    /// Whether opening found nothing to report.
    public var isClean: Bool {
        tornTail == nil && removedFiles.isEmpty && manifestNote == nil && lostRanges.isEmpty && damage.isEmpty
    }

    public var description: String {
        var lines: [String] = []
        if let tornTail {
            lines.append("torn tail of \(tornTail.bytes) bytes at offset \(tornTail.offset) of \(tornTail.path) (\(tornTail.reason))"
                         + (tornTail.wasCut ? ", cut" : ", left in place"))
        }
        if !removedFiles.isEmpty { lines.append("removed left-over files: " + removedFiles.joined(separator: ", ")) }
        if let manifestNote { lines.append(manifestNote) }
        for range in lostRanges { lines.append("lost LSNs \(range.lowerBound)...\(range.upperBound)") }
        for error in damage { lines.append("damage: \(error)") }
        return lines.isEmpty ? "clean" : lines.joined(separator: "\n")
    }
}
