/// A torn tail: an incomplete last frame of the active segment (docs/FORMAT.md §7). Cut, but
/// never lost: its bytes go to a side file first.
extension Recovery {
    /// Deals with the active segment's torn tail, if it has one (damage that no valid frame
    /// follows): refused in ``RecoveryMode/absoluteConsistency``; cut by a writable open after
    /// its bytes are saved (``Log/saveCutBytes(of:from:to:segment:layout:io:)``); only reported
    /// by a read-only one, with whether a writer is active.
    mutating func cutTornTail(of active: SegmentScan) throws {
        guard let problem = active.problem, !active.validFrameFollows, !problem.isDefinitelyDamage else { return }
        var torn = RecoveryReport.TornTail(
            path: active.path, offset: problem.offset,
            bytes: active.fileLength - problem.offset, reason: problem.reason, wasCut: false)
        if options.recovery == .absoluteConsistency {
            throw LogError(
                .tornTail, "the active segment ends in an incomplete frame: \(problem.reason)",
                path: active.path, offset: problem.offset)
        }
        if writable {
            let file = try io.open(active.path, mode: .readWrite)
            defer { io.close(file) }
            torn.savedTo = try Log.saveCutBytes(
                of: file, from: problem.offset, to: active.fileLength,
                segment: active.segment.number, layout: layout, io: io)
            try io.truncate(file, to: problem.offset)
            try io.fullSync(file)
            torn.wasCut = true
        } else {
            torn.writerActive = Log.writerKeepsLock(layout, io)
        }
        report.tornTail = torn
    }
}

extension Log {
    /// Copies bytes `offset..<end` of a segment to a new side file beside it
    /// (`NNNNNNNNNNNN.seg.torn-O`, or `.torn-O.2`… when taken) before they are cut; returns its
    /// path. Cairn never removes side files.
    static func saveCutBytes(
        of file: OpenFile, from offset: UInt64, to end: UInt64, segment: UInt64,
        layout: StoreLayout, io: any FileIO
    ) throws -> String {
        var attempt = 1
        var path = layout.path(StoreLayout.sideFileName(segment: segment, offset: offset, attempt: attempt))
        while io.exists(path) {
            attempt += 1
            path = layout.path(StoreLayout.sideFileName(segment: segment, offset: offset, attempt: attempt))
        }
        // Synced first: the copy skips holes, and some file systems report unsynced data as a
        // hole to SEEK_DATA.
        try io.fullSync(file)
        do {
            try io.copyAtomically(file, offset..<end, to: path, directory: layout.directory)
        } catch let error as LogError where error.code == .busy {
            // This open holds the writer lock: nothing of Cairn's cut the segment.
            throw LogError(.io, "segment \(segment) was cut short by something else while its torn tail was saved", path: file.path)
        }
        return path
    }
}
