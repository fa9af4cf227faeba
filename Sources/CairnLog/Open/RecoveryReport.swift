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
        /// Where the cut bytes were saved (`NNNNNNNNNNNN.seg.torn-O`), when they were cut.
        public var savedTo: String?
        /// Opened read-only while another open held the store for writing: the incomplete frame
        /// is most likely a write in progress, not damage.
        public var writerActive = false
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
    /// In salvage mode: segments the manifest does not list (it is stale) whose frames were read.
    public var unlistedSegmentsRead: [String] = []

    /// Whether opening found nothing to report.
    public var isClean: Bool {
        tornTail == nil && removedFiles.isEmpty && manifestNote == nil && lostRanges.isEmpty && damage.isEmpty
            && unlistedSegmentsRead.isEmpty
    }

    public var description: String {
        var lines: [String] = []
        if let tornTail { lines.append(tornTail.description) }
        if !removedFiles.isEmpty { lines.append("removed left-over files: " + removedFiles.joined(separator: ", ")) }
        if let manifestNote { lines.append(manifestNote) }
        for range in lostRanges { lines.append("lost LSNs \(range.lowerBound)...\(range.upperBound)") }
        for error in damage { lines.append("damage: \(error)") }
        for name in unlistedSegmentsRead { lines.append("read \(name), which the manifest does not list") }
        return lines.isEmpty ? "clean" : lines.joined(separator: "\n")
    }
}

extension RecoveryReport.TornTail: CustomStringConvertible {
    /// One line: where, how much, why, and what was done with the bytes.
    public var description: String {
        let what = "\(bytes) bytes at offset \(offset) of \(path) that are not a complete frame (\(reason))"
        if wasCut { return "cut a torn tail of " + what + (savedTo.map { "; saved them to \($0)" } ?? "") }
        if writerActive { return "a write in progress: another process holds the store for writing; ignored " + what }
        return "ignored a torn tail of " + what + "; a writable open saves and cuts it"
    }
}
