/// Reads a log's records in LSN order, from a starting LSN up to the last frame acknowledged
/// when the reader was made.
///
/// Every frame is checked again as it is read. A reader has its own file handles and buffer:
/// use one reader from one task at a time, and make as many as needed. Until it has read the
/// last record (or is released) it holds the store's reader lock (``ReaderLock``): a compaction
/// meanwhile then never cuts down the segment it reads, only unlinks the segments it replaces.
/// A segment the reader has not reached yet may so be gone when it gets there: the reader then
/// throws ``LogError/Code/busy`` (a compaction replaced the records it would read, as it may
/// replace any log's: read again from a new reader, or open the log again).
/// A reader of a read-only log (not a salvage one) whose files a compaction replaced since the
/// log was opened throws ``LogError/Code/busy`` at once: open the log again.
///
/// ```swift
/// let reader = try log.records(from: LSN(100))
/// while let record = try reader.next() { apply(record.payload) }
/// ```
public final class LogReader {
    private let io: any FileIO
    private let codec: PayloadCodec
    private let extents: [SegmentExtent]
    private let maximumFrameSize: Int
    private let salvage: Bool
    private let start: LSN
    private let buffer = ReadBuffer()
    private var index: Int
    private var file: OpenFile?
    private var scanner: FrameScanner?
    private var assembler = RecordAssembler()
    /// The reader lock, held until the last record is read.
    private var reading: OpenFile?
    /// Thrown by every ``next()``: the files changed since the log was opened.
    private let failure: LogError?
    /// Whether a compaction replaced the segment with this number since the log was opened.
    private let replaced: (UInt64) -> Bool

    init(
        io: any FileIO, codec: PayloadCodec, extents: [SegmentExtent], maximumFrameSize: Int, salvage: Bool, from start: LSN,
        reading: OpenFile?, failure: LogError? = nil, replaced: @escaping (UInt64) -> Bool = { _ in false }
    ) {
        self.replaced = replaced
        self.reading = reading
        self.failure = failure
        self.io = io
        self.codec = codec
        self.extents = extents
        self.maximumFrameSize = maximumFrameSize
        self.salvage = salvage
        self.start = start
        self.index = extents.lastIndex { $0.segment.firstLSN <= start } ?? 0
    }

    deinit {
        if let file { io.close(file) }
        if let reading { io.close(reading) }
    }

    /// The next record, or nil after the last one.
    ///
    /// - Throws: ``LogError/Code/corruption`` naming file and offset when a frame fails its
    ///   checks (in salvage mode damaged frames are skipped instead), or an I/O error.
    public func next() throws -> LogRecord? {
        if let failure { throw failure }
        while true {
            if scanner == nil {
                guard index < extents.count else {
                    if let reading { io.close(reading) }
                    reading = nil
                    return nil
                }
                let extent = extents[index]
                let opened: OpenFile
                do {
                    opened = try io.open(extent.path, mode: .readOnly)
                } catch let error as LogError where replaced(extent.segment.number) {
                    throw LogError(
                        .busy, "the segment was replaced by a compaction before this reader reached it (\(error.message)): read again",
                        path: extent.path, lsn: extent.segment.firstLSN)
                }
                file = opened
                scanner = FrameScanner(
                    io: io, file: opened, epoch: extent.segment.epoch, firstLSN: extent.segment.firstLSN,
                    end: extent.end, maximumFrameSize: maximumFrameSize, version: extent.version, buffer: buffer)
            }
            guard var current = scanner, let opened = file else { return nil }
            let step = try current.next()
            scanner = current
            switch step {
            case .frame(let frame):
                guard frame.header.lsn >= start else { continue }
                if let record = try assembler.add(frame, codec, path: opened.path) { return record }
            case .end:
                finishSegment()
            case .invalid(let problem):
                let lastGood = current.expectedLSN.previous
                if salvage, let found = try current.findValidFrame(after: problem.offset, laterThan: lastGood) {
                    current.resume(at: found.offset, lsn: found.lsn)
                    scanner = current
                } else if salvage {
                    finishSegment()
                } else {
                    throw LogError.corruption(problem.reason, path: opened.path, offset: problem.offset, lsn: current.expectedLSN)
                }
            }
        }
    }

    /// Calls `body` with every remaining record.
    public func forEach(_ body: (LogRecord) throws -> Void) throws {
        while let record = try next() { try body(record) }
    }

    private func finishSegment() {
        if let file { io.close(file) }
        file = nil
        scanner = nil
        index += 1
    }
}

extension Log {
    /// A reader of the records from `start` (default: the first) up to the last frame
    /// acknowledged now.
    public func records(from start: LSN = .first) -> LogReader {
        // Taken before the extents are read: a compaction after that only unlinks them (a
        // hostile READERS was refused when the log opened; a reader goes on without the lock).
        let reading = try? ReaderLock.holdShared(layout, io)
        let extents = appendState.withLock { $0.extents }
        // A read-only log's extents are those of its open, when it let the lock go: a
        // compaction since may have cut them down. (A salvage open also reads segments the
        // manifest does not list: it is checked by no one, as it is meant for a store no
        // writer has open.)
        var failure: LogError?
        if options.readOnly && options.recovery != .salvage {
            do {
                if try manifestIfFilesUnchanged() == nil {
                    failure = LogError(.busy, "the store was compacted since this log was opened: open it again", path: directory)
                }
            } catch let error as LogError {
                failure = error
            } catch {
                failure = LogError(.io, "\(error)", path: directory)
            }
        }
        return LogReader(
            io: io, codec: codec, extents: extents, maximumFrameSize: frameLimit,
            salvage: options.recovery == .salvage, from: start, reading: reading, failure: failure
        ) { [weak self] number in self?.segmentReplaced(number) ?? false }
    }

    /// Whether a compaction replaced segment `number` since it was read: this log's own (its
    /// extents no longer hold it) or, for a read-only log, another process's (the store's
    /// manifest no longer names every file this log opened: ``ManifestFile/changedUnderReader(since:)``).
    func segmentReplaced(_ number: UInt64) -> Bool {
        if !appendState.withLock({ $0.extents.contains { $0.segment.number == number } }) { return true }
        return !options.isWritable && manifestFile.changedUnderReader(since: followedManifest.withLock { $0 })
    }
}
