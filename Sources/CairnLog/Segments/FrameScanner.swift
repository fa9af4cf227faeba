import Glibc

/// Walks the frames of one segment file in order, checking each one.
///
/// A frame is accepted only when its header checksum matches, its epoch is the segment's, its
/// LSN is the next expected one, its lengths are within the maximum frame size and the file,
/// and its frame checksum matches the payload. The first frame that fails stops the walk with
/// a ``Problem`` naming the offset; the caller decides whether that is a torn tail or corruption
/// (``hasValidFrame(after:)``).
///
/// In a version 2 segment a record may span several frames of one LSN (``FrameFlags``): the
/// walk checks that each record's frames follow one another, and a problem met inside a record
/// (a bad frame, or the end of the bytes before the record's last frame) is reported at the
/// offset where that record starts: the record is whole or it is not there.
package struct FrameScanner {
    /// A frame that passed every check. `frame` (header and payload) is valid until the next call.
    package struct Frame {
        package var header: FrameHeader
        package var offset: UInt64
        package var payload: UnsafeRawBufferPointer
        /// The CRC32C of the stored bytes of the record's frames up to this one.
        package var recordChecksum: UInt32
        package var size: Int { FrameHeader.size + payload.count }
    }

    /// Why the walk stopped before the end of the file.
    package struct Problem: Error, Sendable, Equatable {
        /// Where the refused frame starts.
        package var offset: UInt64
        /// What is wrong with it.
        package var reason: String
        /// Whether the bytes cannot be a torn write: the next frame, its header checksum
        /// holding, which no writer could have written (an LSN above ``LSN/maximum``, lengths
        /// over the manifest's maximum frame size). Always corruption, never cut.
        package var isDefinitelyDamage = false
        /// Whether the file ends before the frame does (its header, or its payload): what a
        /// copy or a write still under way leaves, not bytes that are wrong.
        package var isShort = false
    }

    /// One step of the walk.
    package enum Step {
        case frame(Frame)
        case end
        case invalid(Problem)
    }

    package let io: any FileIO
    package let file: OpenFile
    package let epoch: UInt32
    package let maximumFrameSize: Int
    /// The flags the segment's version admits.
    package let allowedFlags: FrameFlags
    /// The end of the bytes to read (the file's length, or the published end for a reader).
    package let end: UInt64
    /// The offset of the next frame.
    package private(set) var offset: UInt64
    /// The LSN the next frame must carry (inside a record: the record's).
    package private(set) var expectedLSN: LSN
    /// Where the record whose last frame has not been read yet starts; nil between records.
    package private(set) var openRecordStart: UInt64?
    /// The CRC32C of the stored bytes of that record's frames read so far, which the next
    /// frame's checksum continues.
    private var openRecordChecksum: UInt32 = 0
    private let buffer: ReadBuffer

    /// A walk of the frames of a segment of format `version` (``SegmentHeader``).
    package init(
        io: any FileIO, file: OpenFile, epoch: UInt32, firstLSN: LSN, end: UInt64,
        maximumFrameSize: Int, version: UInt16, buffer: ReadBuffer
    ) {
        self.allowedFlags = SegmentHeader.allowedFlags(version)
        self.io = io
        self.file = file
        self.epoch = epoch
        self.maximumFrameSize = maximumFrameSize
        self.end = end
        self.offset = UInt64(SegmentHeader.size)
        self.expectedLSN = firstLSN
        self.buffer = buffer
        buffer.reset()
    }

    /// Reads and checks the next frame. A frame whose flags say more of its record follows
    /// (``FrameFlags/continues``) is returned as the others are; the caller keeps its payload
    /// until the record's last frame.
    package mutating func next() throws -> Step {
        guard offset < end else {
            guard let start = openRecordStart else { return .end }
            return .invalid(
                Problem(
                    offset: start, reason: "the record at LSN \(expectedLSN) ends at offset \(offset) without its last frame",
                    isShort: true))
        }
        switch try check(at: offset, expecting: expectedLSN, extending: openRecordStart == nil ? 0 : openRecordChecksum) {
        case .success(let frame):
            let flags = frame.header.flags
            if flags.contains(.continuation) != (openRecordStart != nil) {
                return .invalid(
                    insideRecord(
                        Problem(
                            offset: offset,
                            reason: flags.contains(.continuation)
                                ? "frame continues a record, but the frame before it ended its record"
                                : "frame starts a record while the record at LSN \(expectedLSN) has not ended")))
            }
            if flags.contains(.continues) {
                if openRecordStart == nil { openRecordStart = offset }
                openRecordChecksum = frame.recordChecksum
            } else {
                openRecordStart = nil
                expectedLSN = frame.header.lsn.next
            }
            offset += UInt64(frame.size)
            return .frame(frame)
        case .failure(let problem):
            return .invalid(insideRecord(problem))
        }
    }

    /// A problem with a frame of an unfinished record, as a problem of that record: at its
    /// start, the frame's own offset in the reason.
    private func insideRecord(_ problem: Problem) -> Problem {
        guard let start = openRecordStart else { return problem }
        var moved = problem
        moved.offset = start
        moved.reason = "\(problem.reason) (the frame at offset \(problem.offset), inside the record at LSN \(expectedLSN) that starts here)"
        return moved
    }

    /// Whether any frame that passes every check (with an LSN after `lsn`) starts after
    /// `offset`. A damaged frame followed by a valid one is corruption, not a torn tail.
    package func hasValidFrame(after offset: UInt64, laterThan lsn: LSN) throws -> Bool {
        try findValidFrame(after: offset, laterThan: lsn) != nil
    }

    /// The first offset after `offset` where a valid record's first frame with an LSN after
    /// `lsn` starts.
    ///
    /// Every byte offset is a candidate, but only one whose epoch field (bytes 16..<20 of a
    /// header) holds this segment's epoch is checked: the file is read a megabyte at a time and
    /// searched with `memchr` for a non-zero byte of the epoch, and holes (`SEEK_DATA`) are
    /// skipped, so gigabytes of zeros after a torn write cost one read, or nothing, rather than
    /// a check per byte.
    package func findValidFrame(after offset: UInt64, laterThan lsn: LSN) throws -> (offset: UInt64, lsn: LSN)? {
        let headerSize = UInt64(FrameHeader.size)
        let window = UnsafeMutableRawBufferPointer.allocate(byteCount: LogTuning.searchWindow, alignment: 16)
        defer { window.deallocate() }
        guard let base = window.baseAddress else { return nil }
        // The epoch is never 0, so one of its bytes is not: search for that one.
        let epochBytes = withUnsafeBytes(of: epoch.littleEndian) { Array($0) }
        let keyIndex = epochBytes.firstIndex { $0 != 0 } ?? 0
        let key = Int32(epochBytes[keyIndex])
        var position = offset + 1
        while position + headerSize <= end {
            // A frame whose epoch field lay in a hole would read zeros there: start at most a
            // header before the next data.
            guard let data = io.nextData(in: file, from: position) else { return nil }
            if data > position + headerSize { position = data - headerSize }
            guard position + headerSize <= end else { return nil }
            let count = Int(min(UInt64(window.count), end - position))
            try io.readExactly(file, into: UnsafeMutableRawBufferPointer(rebasing: window[0..<count]), at: position)
            // Candidates whose header lies wholly in the window start at 0 ... last.
            let last = count - FrameHeader.size
            var candidate = 0
            while candidate <= last {
                let from = candidate + 16 + keyIndex
                guard let hit = memchr(base + from, key, last + 16 + keyIndex + 1 - from) else { break }
                let found = hit - UnsafeMutableRawPointer(base) - 16 - keyIndex
                let header = UnsafeRawBufferPointer(rebasing: window[found..<(found + FrameHeader.size)])
                let start = position + UInt64(found)
                // Only a record's first frame: a walk resumes between records.
                if UInt32(littleEndian: header.loadUnaligned(fromByteOffset: 16, as: UInt32.self)) == epoch,
                    case .success(let parsed) = FrameHeader.parse(header, allowing: allowedFlags), parsed.lsn > lsn,
                    !parsed.flags.contains(.continuation),
                    case .success(let frame) = try check(at: start, expecting: parsed.lsn)
                {
                    return (start, frame.header.lsn)
                }
                candidate = found + 1
            }
            position += UInt64(last + 1)
        }
        return nil
    }

    /// Moves the walk to a frame found by ``findValidFrame(after:laterThan:)`` (salvage).
    /// The offset is a record's first frame, or the end of the bytes.
    package mutating func resume(at offset: UInt64, lsn: LSN) {
        self.offset = offset
        self.expectedLSN = lsn
        self.openRecordStart = nil
    }

    /// Checks the frame at `offset`; `seed` is the checksum its record's frames before it reach
    /// (0 for a record's first frame).
    private func check(at offset: UInt64, expecting lsn: LSN, extending seed: UInt32 = 0) throws -> Result<Frame, Problem> {
        func refuse(_ reason: String) -> Result<Frame, Problem> { .failure(Problem(offset: offset, reason: reason)) }
        let available = end - offset
        guard available >= UInt64(FrameHeader.size) else {
            return .failure(
                Problem(offset: offset, reason: "incomplete frame header: \(available) of \(FrameHeader.size) bytes before the end", isShort: true))
        }
        let rawHeader = try buffer.bytes(io, file, at: offset, length: FrameHeader.size, fileEnd: end)
        let header: FrameHeader
        switch FrameHeader.parse(rawHeader, allowing: allowedFlags) {
        case .success(let parsed): header = parsed
        case .failure(.headerChecksum):
            return refuse(rawHeader.allSatisfy { $0 == 0 } ? "zero-filled bytes where a frame header should be" : "frame header checksum mismatch")
        case .failure(.unknownCodec(let codec)): return refuse("unknown codec \(codec)")
        case .failure(.flags(let flags)): return refuse("unknown flags \(flags)")
        case .failure(.inconsistentLengths): return refuse("codec, lengths and dictionary id disagree")
        }
        guard header.epoch == epoch else { return refuse("frame epoch \(header.epoch) is not the segment's \(epoch)") }
        guard header.lsn <= .maximum else {
            return .failure(
                Problem(
                    offset: offset, reason: "frame LSN \(header.lsn) is above the largest LSN \(LSN.maximum)",
                    isDefinitelyDamage: true))
        }
        guard header.lsn == lsn else { return refuse("frame LSN \(header.lsn), expected \(lsn)") }
        guard Int(header.storedLength) <= maximumFrameSize, Int(header.rawLength) <= maximumFrameSize else {
            // The header checksum holds and the frame is the next one: its lengths are what a
            // writer wrote, and no writer writes a frame over the store's recorded limit. A
            // torn write cannot make this; the manifest's limit is wrong (forged or damaged), so
            // it is damage, never a tail to cut.
            return .failure(
                Problem(
                    offset: offset,
                    reason: "frame claims \(max(header.storedLength, header.rawLength)) bytes, more than the manifest's maximum frame size "
                        + "\(maximumFrameSize), although its header checksum holds: the manifest's limit is wrong (a writable open "
                        + "whose maximum frame size is larger records the larger limit)",
                    isDefinitelyDamage: true))
        }
        let size = FrameHeader.size + Int(header.storedLength)
        guard UInt64(size) <= available else {
            return .failure(Problem(offset: offset, reason: "frame of \(size) bytes runs past the end (\(available) bytes left)", isShort: true))
        }
        let whole = try buffer.bytes(io, file, at: offset, length: size, fileEnd: end)
        let payload = UnsafeRawBufferPointer(rebasing: whole[FrameHeader.size...])
        guard let recordChecksum = FrameHeader.checkedPayloadChecksum(header: whole, payload: payload, extending: seed) else {
            return refuse("frame checksum mismatch")
        }
        return .success(Frame(header: header, offset: offset, payload: payload, recordChecksum: recordChecksum))
    }
}
