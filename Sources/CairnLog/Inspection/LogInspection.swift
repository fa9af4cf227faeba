import Glibc
/// What `cairn verify` and `cairn stats` report: every segment checked frame by frame, without
/// changing anything.
public struct LogInspection: Sendable {
    /// The state of one segment.
    public enum Status: Sendable, Equatable {
        /// Every frame is valid and the length is as recorded.
        case ok
        /// The active segment ends in an incomplete frame at `offset` (a crash during a write,
        /// or damage to the last frame): a writable open, or `cairn verify --repair`, saves the
        /// bytes to a side file and cuts them.
        case tornTail(offset: UInt64, reason: String)
        /// The active segment ends in an incomplete frame at `offset` while another process
        /// holds the store for writing: a write in progress, not damage.
        case writeInProgress(offset: UInt64, reason: String)
        /// Damage that is not a torn tail; opening fails.
        case damaged(LogError)
    }

    /// One segment's summary.
    public struct Segment: Sendable {
        /// The segment's file name.
        public var file: String
        /// Whether it is sealed (else it is the active segment).
        public var isSealed: Bool
        /// Valid frames.
        public var frames: UInt64
        /// The LSNs of its valid frames; nil when it has none.
        public var lsnRange: ClosedRange<LSN>?
        /// The file's size.
        public var bytesOnDisk: UInt64
        /// Payload bytes as stored and as appended.
        public var storedBytes: UInt64
        public var rawBytes: UInt64
        /// What the check found.
        public var status: Status
    }

    /// The store's directory.
    public var directory: String
    /// The manifest's generation.
    public var manifestGeneration: UInt64
    /// Set when the manifest came from a fallback file, saying why.
    public var manifestNote: String?
    /// Compression dictionaries and their total size.
    public var dictionaries: Int
    public var dictionaryBytes: UInt64
    /// The segments, in order.
    public var segments: [Segment]
    /// Problems outside segments (a damaged dictionary).
    public var otherProblems: [LogError]

    /// A file of Cairn's name patterns that the manifest does not list.
    public struct UnlistedFile: Sendable, Equatable {
        /// The file's name.
        public var name: String
        /// What it is, and why it is there.
        public var reason: String
        /// Whether it holds frames the manifest does not account for (the manifest is stale):
        /// opening refuses the store. Otherwise it is a left-over that a writable open removes,
        /// or a side file of cut bytes, which is kept.
        public var holdsUnaccountedFrames: Bool
        /// Whether it is a side file of bytes cut from a torn tail (kept for the operator).
        public var isSideFile: Bool
    }

    /// Files of Cairn's name patterns that the manifest does not list.
    public var unlistedFiles: [UnlistedFile] = []

    /// The base compaction wrote, as checked block by block.
    public struct Base: Sendable {
        /// The base's file name.
        public var file: String
        /// The LSN whose state it holds.
        public var lastLSN: LSN
        /// The file's size.
        public var bytesOnDisk: UInt64
        /// Nil when every block and entry checked out; else the damage (also in ``otherProblems``).
        public var damage: LogError?
    }

    /// The store's base, when compaction wrote one.
    public var base: Base?

    /// Whether nothing is damaged (a torn tail counts as damage for `verify`; a write in
    /// progress does not; neither does a left-over or a side file).
    public var isHealthy: Bool {
        otherProblems.isEmpty && !unlistedFiles.contains(where: \.holdsUnaccountedFrames)
            && segments.allSatisfy { segment in
                switch segment.status {
                case .ok, .writeInProgress: true
                case .tornTail, .damaged: false
                }
            }
    }
    /// Valid frames in all segments.
    public var frames: UInt64 { segments.reduce(0) { $0 + $1.frames } }
    /// The LSNs of all valid frames.
    public var lsnRange: ClosedRange<LSN>? {
        guard let first = segments.first(where: { $0.lsnRange != nil })?.lsnRange,
            let last = segments.last(where: { $0.lsnRange != nil })?.lsnRange
        else { return nil }
        return first.lowerBound...last.upperBound
    }
    /// Bytes of the base, segments and dictionaries on disk.
    public var bytesOnDisk: UInt64 { segments.reduce(dictionaryBytes + (base?.bytesOnDisk ?? 0)) { $0 + $1.bytesOnDisk } }
    /// Payload bytes as appended.
    public var rawBytes: UInt64 { segments.reduce(0) { $0 + $1.rawBytes } }
    /// Payload bytes as stored.
    public var storedBytes: UInt64 { segments.reduce(0) { $0 + $1.storedBytes } }
    /// Appended payload bytes per stored payload byte (1 when nothing is stored).
    public var compressionRatio: Double { storedBytes == 0 ? 1 : Double(rawBytes) / Double(storedBytes) }
}

extension LogInspection {
    /// Checks every frame of the store in `directory` (decompressing each payload) without
    /// taking the writer lock or changing anything.
    ///
    /// - Throws: ``LogError`` when there is no store or its manifest cannot be read; damage in
    ///   segments and dictionaries is reported in the result instead.
    ///
    /// `progress` is called with the segments checked so far and the segments to check, before
    /// the first and after each one (again from zero when the inspection starts over).
    public static func inspect(directory: String, progress: ((_ done: Int, _ total: Int) -> Void)? = nil) throws -> LogInspection {
        try inspect(directory: directory, io: PosixFileIO(), progress: progress)
    }

    /// `holdingLock`: the caller holds the writer lock itself (`verify --repair`), so a torn
    /// tail is not another writer's write in progress. `pinnedFilesLimit`: how many files are
    /// held open together (``PinnedFiles``).
    ///
    /// A compaction in another process while the files are read (or a writable open raising
    /// the maximum frame size) makes the inspection start again, a few times, and then throw
    /// ``LogError/Code/busy``: a store is never called damaged because its files changed under
    /// the reader. A file the reader cannot open or read for a reason other than its absence
    /// (``LogError/isReaderIOError``) is thrown as that I/O error, never reported as damage.
    package static func inspect(
        directory: String, io: any FileIO, holdingLock: Bool = false, pinnedFilesLimit: Int = LogTuning.pinnedFilesLimit,
        progress: ((_ done: Int, _ total: Int) -> Void)? = nil
    ) throws -> LogInspection {
        try Log.retryingWhileBusy {
            // While another process writes, a roll between listing the directory and reading the
            // manifest can make a segment look unaccounted for: look again before saying so.
            var attempts = 0
            while true {
                let inspection = try inspectOnce(
                    directory: directory, io: io, holdingLock: holdingLock, pinnedFilesLimit: pinnedFilesLimit, progress: progress)
                guard !holdingLock, attempts < LogTuning.rereadAttempts, inspection.unlistedFiles.contains(where: \.holdsUnaccountedFrames),
                    Log.writerHoldsLock(StoreLayout(directory: directory), io)
                else { return inspection }
                attempts += 1
                usleep(LogTuning.rereadMicroseconds)
            }
        }
    }

    private static func inspectOnce(
        directory: String, io fileIO: any FileIO, holdingLock: Bool, pinnedFilesLimit: Int, progress: ((Int, Int) -> Void)?
    ) throws -> LogInspection {
        let layout = StoreLayout(directory: directory)
        // A reader of the files: a compaction meanwhile unlinks those it replaces, never cuts them down.
        let reading = try ReaderLock.holdShared(layout, fileIO)
        defer { if let reading { fileIO.close(reading) } }
        let names = try fileIO.contentsOfDirectory(layout.directory)
        let segmentsWithFrames = ManifestFile.segmentsHoldingFrames(names, layout: layout, io: fileIO)
        let manifestFile = ManifestFile(layout: layout, io: fileIO)
        guard case .found(let manifest, let note) = try manifestFile.read(segmentsWithFrames: segmentsWithFrames, repair: false) else {
            let orphaned = CairnLog.UnlistedFile.storeFilesWithoutManifest(names: names, layout: layout, io: fileIO)
            guard orphaned.isEmpty else { throw CairnLog.UnlistedFile.refusalWithoutManifest(orphaned, layout: layout) }
            throw LogError.noStore(layout)
        }
        // Every file it names, opened now (a compaction meanwhile only unlinks them); one gone
        // already because the manifest was replaced meanwhile: read again.
        let pinned = try PinnedFiles(manifest, layout: layout, io: fileIO, limit: pinnedFilesLimit)
        defer { pinned.release() }
        if !pinned.missing.isEmpty && manifestFile.changedUnderReader(since: manifest) { throw manifestFile.busy() }
        let io: any FileIO = pinned
        let inspection: LogInspection
        do {
            inspection = try inspectFiles(
                manifest, note: note, names: names, layout: layout, io: io, holdingLock: holdingLock, progress: progress)
        } catch let error as LogError where manifestFile.changedUnderReader(since: manifest) {
            throw manifestFile.busy(error)
        }
        // Damage seen while a compaction replaced the files (one past the pinned ones, or cut by
        // a writer that could not see this reader), or a frame above the limit this reader read
        // while a writer raised it, is not the store's.
        if !inspection.isHealthy && manifestFile.changedUnderReader(since: manifest) { throw manifestFile.busy() }
        return inspection
    }

    private static func inspectFiles(
        _ manifest: Manifest, note: String?, names: [String], layout: StoreLayout, io: any FileIO, holdingLock: Bool,
        progress: ((Int, Int) -> Void)?
    ) throws -> LogInspection {
        let unlisted = CairnLog.UnlistedFile.classify(names: names, manifest: manifest, layout: layout, io: io).map { file in
            UnlistedFile(
                name: file.name, reason: file.reason, holdsUnaccountedFrames: file.kind == .unaccountedSegment,
                isSideFile: file.kind == .sideFile)
        }
        let maximumFrameSize = Int(manifest.maximumFrameSize)
        var problems: [LogError] = []
        var dictionaries: [CompressionDictionary] = []
        var dictionaryBytes: UInt64 = 0
        for record in manifest.dictionaries {
            let path = layout.path(.dictionary, UInt64(record.id))
            do {
                let bytes = try io.readWholeFile(path, limit: CompressionDictionary.maximumSize + 64)
                dictionaryBytes += UInt64(bytes.count)
                dictionaries.append(try CompressionDictionary(file: bytes, expected: record, path: path))
            } catch let error as LogError where !error.isReaderIOError {
                problems.append(error)
            }
        }
        var base: Base?
        if let record = manifest.base {
            let reader = BaseReader(base: record, layout: layout, storeID: manifest.storeID, io: io)
            var damage: LogError?
            do { try reader.verify() } catch let error as LogError where !error.isReaderIOError { damage = error }
            if let damage { problems.append(damage) }
            base = Base(file: StoreLayout.name(.base, record.number), lastLSN: record.lastLSN, bytesOnDisk: record.length, damage: damage)
        }
        let codec = PayloadCodec(policy: .none, dictionaries: dictionaries)
        let buffer = ReadBuffer()
        var segments: [Segment] = []
        defer { progress?(segments.count, manifest.segments.count) }
        for record in manifest.segments {
            progress?(segments.count, manifest.segments.count)
            let name = StoreLayout.name(.segment, record.number)
            let path = layout.path(name)
            var decodeError: LogError?
            do {
                let scan = try SegmentScan.scan(
                    record, layout: layout, io: io, storeID: manifest.storeID,
                    maximumFrameSize: maximumFrameSize, salvage: false, buffer: buffer
                ) { frame in
                    guard decodeError == nil else { return }
                    do { _ = try codec.record(from: frame, path: path) } catch let error as LogError { decodeError = error }
                }
                var status = Status.ok
                if let error = decodeError ?? scan.corruption {
                    status = .damaged(error)
                } else if let problem = scan.problem {
                    status =
                        !holdingLock && Log.writerKeepsLock(layout, io)
                        ? .writeInProgress(offset: problem.offset, reason: problem.reason)
                        : .tornTail(offset: problem.offset, reason: problem.reason)
                }
                segments.append(
                    Segment(
                        file: name, isSealed: record.isSealed, frames: scan.frames,
                        lsnRange: scan.records == 0 ? nil : record.firstLSN...scan.nextLSN.previous,
                        bytesOnDisk: scan.fileLength, storedBytes: scan.storedBytes, rawBytes: scan.rawBytes,
                        status: status))
            } catch let error as LogError where !error.isReaderIOError {
                let size =
                    (try? io.open(path, mode: .readOnly)).map { file -> UInt64 in
                        defer { io.close(file) }
                        return (try? io.size(of: file)) ?? 0
                    } ?? 0
                segments.append(
                    Segment(
                        file: name, isSealed: record.isSealed, frames: 0, lsnRange: nil, bytesOnDisk: size,
                        storedBytes: 0, rawBytes: 0, status: .damaged(error)))
            }
        }
        return LogInspection(
            directory: layout.directory, manifestGeneration: manifest.generation, manifestNote: note,
            dictionaries: manifest.dictionaries.count, dictionaryBytes: dictionaryBytes,
            segments: segments, otherProblems: problems, unlistedFiles: unlisted, base: base)
    }
}

extension LogError {
    /// Whether this is an I/O error of the reader: a file it could not open or read for a
    /// reason other than the file's absence (too many open files, no permission, a failing
    /// read). The store could not be checked; that is not damage of the store.
    package var isReaderIOError: Bool { code == .io && errno != ENOENT }
}
