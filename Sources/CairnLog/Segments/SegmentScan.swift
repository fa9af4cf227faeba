import struct Foundation.UUID

/// The result of walking one segment file from its header to its end.
package struct SegmentScan: Sendable {
    /// The manifest's record of the segment.
    package var segment: Manifest.Segment
    /// The segment file's path.
    package var path: String
    /// The file's length on disk.
    package var fileLength: UInt64 = 0
    /// The segment header's format version (``SegmentHeader/singleFrameVersion`` until the header is read).
    package var version = SegmentHeader.singleFrameVersion
    /// The end of the last valid record's last frame (the header's end when there is none).
    package var validEnd = UInt64(SegmentHeader.size)
    /// Valid records read: the LSNs the segment holds (what the manifest counts).
    package var records: UInt64 = 0
    /// The frames of the valid records (as many as records in a version 1 segment).
    package var frames: UInt64 = 0
    /// The LSN after the last valid record (the segment's first LSN when there is none).
    package var nextLSN: LSN
    /// Payload bytes as stored (after compression) and as appended (before), of the valid records.
    package var storedBytes: UInt64 = 0
    package var rawBytes: UInt64 = 0
    /// The first frame refused, if any.
    package var problem: FrameScanner.Problem?
    /// Whether a valid frame follows the refused one (then it is corruption, not a torn tail).
    package var validFrameFollows = false
    /// In salvage mode: LSN ranges skipped over damage.
    package var lostRanges: [ClosedRange<LSN>] = []

    /// A damaged sealed segment, or damage followed by valid frames, as an error.
    package var corruption: LogError? {
        if let problem, segment.isSealed || validFrameFollows || problem.isDefinitelyDamage {
            let detail = segment.isSealed ? "sealed segment" : validFrameFollows ? "active segment, valid frames follow" : "active segment"
            return LogError.corruption("\(problem.reason) (\(detail))", path: path, offset: problem.offset, lsn: nextLSN)
        }
        guard segment.isSealed else { return nil }
        if fileLength != segment.length {
            return LogError.corruption(
                "sealed segment is \(fileLength) bytes; the manifest recorded \(segment.length)",
                path: path, offset: min(fileLength, segment.length))
        }
        if records != segment.frameCount {
            return LogError.corruption(
                "sealed segment holds \(records) records; the manifest recorded \(segment.frameCount)",
                path: path, offset: validEnd)
        }
        return nil
    }

    /// Walks a segment. Throws for I/O failures and a bad segment header; frame problems are
    /// recorded in ``problem`` (and skipped in salvage mode). With `through`, the walk ends
    /// before the first frame after that LSN, as at the file's end. `visit` sees every valid
    /// frame, those of a record the walk then finds unfinished too (``RecordAssembler`` holds
    /// a record's frames until its last).
    package static func scan(
        _ segment: Manifest.Segment, layout: StoreLayout, io: any FileIO, storeID: UUID,
        maximumFrameSize: Int, salvage: Bool, buffer: ReadBuffer, through: LSN? = nil,
        visit: ((FrameScanner.Frame) throws -> Void)? = nil
    ) throws -> SegmentScan {
        let path = layout.path(.segment, segment.number)
        var result = SegmentScan(segment: segment, path: path, nextLSN: segment.firstLSN)
        let file = try io.open(path, mode: .readOnly)
        defer { io.close(file) }
        result.fileLength = try io.size(of: file)
        // The buffer may still hold the previous file's first bytes (when its header failed).
        buffer.reset()
        let headerBytes = try buffer.bytes(
            io, file, at: 0, length: min(SegmentHeader.size, Int(result.fileLength)),
            fileEnd: result.fileLength)
        result.version = try SegmentHeader(decoding: headerBytes, expected: segment, storeID: storeID, path: path).version

        var scanner = FrameScanner(
            io: io, file: file, epoch: segment.epoch, firstLSN: segment.firstLSN,
            end: result.fileLength, maximumFrameSize: maximumFrameSize, version: result.version, buffer: buffer)
        // The frames and bytes of the record under way, counted when its last frame comes.
        var open = (frames: UInt64(0), stored: UInt64(0), raw: UInt64(0))
        walk: while true {
            switch try scanner.next() {
            case .end:
                break walk
            case .frame(let frame):
                if let through, frame.header.lsn > through { break walk }
                try visit?(frame)
                open.frames += 1
                open.stored += UInt64(frame.header.storedLength)
                open.raw += UInt64(frame.header.rawLength)
                if frame.header.flags.endsRecord {
                    result.frames += open.frames
                    result.storedBytes += open.stored
                    result.rawBytes += open.raw
                    open = (0, 0, 0)
                    result.records += 1
                    result.validEnd = scanner.offset
                    result.nextLSN = scanner.expectedLSN
                }
            case .invalid(let problem):
                if result.problem == nil { result.problem = problem }
                // In a sealed segment any bad frame is corruption; only the active segment
                // needs the search that tells a torn tail from damage followed by valid frames.
                guard !segment.isSealed || salvage else { break walk }
                let lastGood = scanner.expectedLSN.previous
                guard let found = try scanner.findValidFrame(after: problem.offset, laterThan: lastGood) else { break walk }
                result.validFrameFollows = true
                guard salvage else { break walk }
                if found.lsn > scanner.expectedLSN {
                    result.lostRanges.append(scanner.expectedLSN...found.lsn.previous)
                }
                scanner.resume(at: found.offset, lsn: found.lsn)
                open = (0, 0, 0)
            }
        }
        return result
    }
}
