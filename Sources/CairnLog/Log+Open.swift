import Glibc
import struct Foundation.UUID

/// Opening: the writer lock, the manifest, dictionaries, recovery of every segment.
extension Log {
    /// Opens the log in `directory`, creating an empty store there when there is none (unless
    /// ``LogOptions/createIfMissing`` is false or the log is read-only).
    ///
    /// Every frame is checked (see ``RecoveryMode``). Pass `replay` to receive each record in
    /// LSN order during that same pass; if opening then fails, discard what was received. When
    /// the store has a base (written by compaction), `base` first reads it, and `replay` then
    /// receives only the records after the base's LSN; a caller that replays must read the
    /// base (an open with `replay` and without `base` refuses such a store).
    ///
    /// - Throws: ``LogError``: ``LogError/Code/locked`` (naming the holder's pid) when another
    ///   writer has the store; ``LogError/Code/corruption`` naming file and offset;
    ///   ``LogError/Code/tornTail`` in ``RecoveryMode/absoluteConsistency``; I/O errors.
    public static func open(
        at directory: String, options: LogOptions = LogOptions(),
        replay: ((LogRecord) throws -> Void)? = nil,
        base: ((BaseReader) throws -> Void)? = nil
    ) throws -> Log {
        try options.validate()
        let io = options.fileIO
        let layout = StoreLayout(directory: directory)
        let writable = options.isWritable
        if writable && options.createIfMissing { try io.createDirectory(layout.directory) }
        guard io.exists(layout.directory) else { throw LogError(.notFound, "no such directory", path: layout.directory) }
        let lock = writable ? try acquireLock(layout, io) : nil
        var reading: OpenFile?
        defer { if let reading { io.close(reading) } }
        do {
            // A reader holds the reader lock while it reads the files (a writer may cut down
            // those a compaction replaced when no one does: ``Log/removeReplacedFiles``).
            if !writable { reading = try ReaderLock.holdShared(layout, io) }
            return try recover(layout: layout, options: options, lock: lock, base: base, replay: replay)
        } catch {
            if let lock { io.close(lock) }
            throw error
        }
    }

    static func acquireLock(_ layout: StoreLayout, _ io: any FileIO) throws -> OpenFile {
        let file = try io.open(layout.lock, mode: .createOrOpen)
        do {
            // A process that forks copies our descriptors until its child execs, and the copy
            // holds the lock for that moment; so a refusal is retried briefly before it counts.
            var locked = try io.tryLock(file)
            var attempts = 0
            while !locked && attempts < LogTuning.lockAttempts {
                usleep(LogTuning.lockRetryMicroseconds)
                attempts += 1
                locked = try io.tryLock(file)
            }
            guard locked else {
                let holder =
                    (try? io.readWholeFile(layout.lock, limit: 64)).map {
                        String(decoding: $0, as: UTF8.self).filter(\.isNumber)
                    } ?? ""
                throw LogError(
                    .locked, "the store is open for writing by process \(holder.isEmpty ? "unknown" : holder)",
                    path: layout.lock)
            }
            let pid = Array("\(getpid())\n".utf8)
            try io.truncate(file, to: 0)
            try pid.withUnsafeBytes { try io.writeAll(file, $0, at: 0) }
            return file
        } catch {
            io.close(file)
            throw error
        }
    }

    private static func recover(
        layout: StoreLayout, options: LogOptions, lock: OpenFile?,
        base readBase: ((BaseReader) throws -> Void)?,
        replay: ((LogRecord) throws -> Void)?
    ) throws -> Log {
        let io = options.fileIO
        let writable = options.isWritable
        var report = RecoveryReport()

        // A read-only open of a store another process writes can list the directory just before
        // a roll and read the manifest just after, or the reverse: a segment then looks
        // unaccounted for. Read again, a few times, before calling the manifest stale. It opens
        // every file the manifest names at once (``PinnedFiles``): when one is gone because a
        // compaction replaced the manifest meanwhile, it reads the manifest again.
        var attempts = 0
        var names: [String]
        var outcome: ManifestFile.Outcome
        var pinned: PinnedFiles?
        defer { pinned?.release() }
        let manifestFile = ManifestFile(layout: layout, io: io)
        while true {
            pinned?.release()
            pinned = nil
            names = try io.contentsOfDirectory(layout.directory)
            let segmentsWithFrames = ManifestFile.segmentsHoldingFrames(names, layout: layout, io: io)
            outcome = try manifestFile.read(segmentsWithFrames: segmentsWithFrames, repair: writable)
            guard lock == nil, case .found(let found, _) = outcome else { break }
            let files = try PinnedFiles(found, layout: layout, io: io, limit: options.pinnedFilesLimit)
            pinned = files
            if !files.missing.isEmpty && manifestFile.changedUnderReader(since: found) {
                guard attempts < LogTuning.rereadAttempts else { throw manifestFile.busy() }
                attempts += 1
                continue
            }
            guard attempts < LogTuning.rereadAttempts,
                UnlistedFile.classify(names: names, manifest: found, layout: layout, io: io).contains(where: { $0.kind == .unaccountedSegment }),
                writerHoldsLock(layout, io)
            else { break }
            attempts += 1
            usleep(LogTuning.rereadMicroseconds)
        }
        var manifest: Manifest
        switch outcome {
        case .found(let found, let note):
            manifest = found
            report.manifestNote = note
        case .missing:
            // A creation interrupted before its first manifest leaves only a frameless segment.
            // Any file of the store's that holds bytes (a base, a dictionary, a segment with
            // frames…) means a store lost its manifest: never a new store over its files.
            let orphaned = UnlistedFile.storeFilesWithoutManifest(names: names, layout: layout, io: io)
            guard orphaned.isEmpty else { throw UnlistedFile.refusalWithoutManifest(orphaned, layout: layout) }
            guard writable && options.createIfMissing else {
                throw LogError(.notFound, "no Cairn store here (no MANIFEST)", path: layout.manifest)
            }
            manifest = try createStore(layout: layout, io: io, maximumFrameSize: options.maximumFrameSize)
        }
        // Readers find the reader lock's file from now on (``Log/removeReplacedFiles``).
        if writable { try ReaderLock.create(layout, io) }
        guard let pinned else {
            return try recoverFiles(
                layout: layout, options: options, io: io, lock: lock, manifest: manifest, names: names, report: report,
                base: readBase, replay: replay)
        }
        do {
            return try recoverFiles(
                layout: layout, options: options, io: pinned, lock: lock, manifest: manifest, names: names, report: report,
                base: readBase, replay: replay)
        } catch let error as LogError where error.code != .busy && manifestFile.changedUnderReader(since: manifest) {
            // A file opened only when reached (past the limit), cut by a writer that could not
            // see this reader, or a frame above the limit this reader read while a writer raised
            // it: the store changed under the read, it is not damaged.
            throw manifestFile.busy(error)
        }
    }

    /// The rest of ``recover``, once the manifest is read: dictionaries, the base, every
    /// segment, the torn tail; `io` hands out the files a read-only open holds.
    private static func recoverFiles(
        layout: StoreLayout, options: LogOptions, io: any FileIO, lock: OpenFile?, manifest found: Manifest, names: [String],
        report initial: RecoveryReport, base readBase: ((BaseReader) throws -> Void)?,
        replay: ((LogRecord) throws -> Void)?
    ) throws -> Log {
        var manifest = found
        var report = initial
        let writable = options.isWritable
        let salvage = options.recovery == .salvage

        // Files the manifest does not list: frames it does not account for mean it is stale.
        let unlisted = UnlistedFile.classify(names: names, manifest: manifest, layout: layout, io: io)
        let unaccounted = unlisted.filter { $0.kind == .unaccountedSegment }
        if let first = unaccounted.first, !salvage { throw first.refusal(layout) }

        if writable && UInt32(options.maximumFrameSize) > manifest.maximumFrameSize {
            manifest.maximumFrameSize = UInt32(options.maximumFrameSize)
            manifest.generation += 1
            try ManifestFile(layout: layout, io: io).write(manifest)
        }
        let frameLimit = Int(manifest.maximumFrameSize)

        var dictionaries: [CompressionDictionary] = []
        for record in manifest.dictionaries {
            let path = layout.path(.dictionary, UInt64(record.id))
            let bytes = try io.readWholeFile(path, limit: CompressionDictionary.maximumSize + 64)
            dictionaries.append(try CompressionDictionary(file: bytes, expected: record, path: path))
        }
        if salvage && !unaccounted.isEmpty {
            // Frames of segments a stale manifest does not list may use dictionaries it does
            // not list either.
            for file in unlisted {
                guard let (kind, number) = StoreLayout.parse(file.name), kind == .dictionary else { continue }
                let path = layout.path(file.name)
                do {
                    let bytes = try io.readWholeFile(path, limit: CompressionDictionary.maximumSize + 64)
                    dictionaries.append(try CompressionDictionary(unlistedFile: bytes, id: number, path: path))
                } catch let error as LogError {
                    report.damage.append(error)
                }
            }
        }
        let codec = PayloadCodec(
            policy: options.compression, dictionaries: dictionaries,
            trainingThreshold: options.dictionaryTraining.threshold)

        // The base first: the records after it change what it holds.
        let baseLSN = manifest.base?.lastLSN ?? .zero
        if let record = manifest.base {
            let reader = BaseReader(base: record, layout: layout, storeID: manifest.storeID, io: io)
            if let readBase {
                try readBase(reader)
            } else if replay != nil {
                throw LogError(.unsupportedFormat, "the store has a base, and this open replays records without reading it", path: reader.path)
            } else {
                try reader.checkLength()
            }
        }

        let buffer = ReadBuffer()
        var extents: [SegmentExtent] = []
        var last: SegmentScan?
        func scan(_ segment: Manifest.Segment) throws -> SegmentScan {
            let path = layout.path(.segment, segment.number)
            return try SegmentScan.scan(
                segment, layout: layout, io: io, storeID: manifest.storeID,
                maximumFrameSize: frameLimit, salvage: salvage, buffer: buffer
            ) { frame in
                // Frames the base holds are checked, not replayed.
                let replayed = replay != nil && frame.header.lsn > baseLSN
                let record = try codec.record(from: frame, path: path, decode: replayed)
                if replayed { try replay?(record) }
            }
        }
        for segment in manifest.segments {
            let result: SegmentScan
            do {
                result = try scan(segment)
            } catch let error as LogError where salvage && error.code == .corruption {
                report.damage.append(error)
                // No overflow: Manifest.checkInvariants bounds first LSN + frame count.
                let lost = segment.isSealed ? segment.firstLSN...LSN(segment.firstLSN.rawValue + max(segment.frameCount, 1) - 1) : nil
                if let lost { report.lostRanges.append(lost) }
                continue
            }
            if let corruption = result.corruption {
                guard salvage else { throw corruption }
                report.damage.append(corruption)
            }
            report.lostRanges += result.lostRanges
            if let previous = last, previous.segment.isSealed, previous.nextLSN < segment.firstLSN, salvage {
                report.lostRanges.append(previous.nextLSN...segment.firstLSN.previous)
            }
            extents.append(SegmentExtent(segment: segment, path: result.path, end: result.validEnd, nextLSN: result.nextLSN))
            last = result
        }

        guard let active = last, let activeRecord = manifest.activeSegment, active.segment == activeRecord else {
            throw LogError.corruption("the active segment could not be read", path: layout.path(.segment, manifest.activeSegment?.number ?? 0))
        }
        if let problem = active.problem, !active.validFrameFollows, !problem.isDefinitelyDamage {
            var torn = RecoveryReport.TornTail(
                path: active.path, offset: problem.offset,
                bytes: active.fileLength - problem.offset, reason: problem.reason, wasCut: false)
            if options.recovery == .absoluteConsistency {
                throw LogError(
                    .tornTail, "the active segment ends in an incomplete frame: \(problem.reason)",
                    path: active.path, offset: problem.offset)
            }
            if writable {
                // Cut, but never lost: the bytes go to a side file first.
                let file = try io.open(active.path, mode: .readWrite)
                defer { io.close(file) }
                torn.savedTo = try saveCutBytes(
                    of: file, from: problem.offset, to: active.fileLength,
                    segment: activeRecord.number, layout: layout, io: io)
                try io.truncate(file, to: problem.offset)
                try io.fullSync(file)
                torn.wasCut = true
            } else {
                torn.writerActive = writerKeepsLock(layout, io)
            }
            report.tornTail = torn
        }

        var nextLSN = active.nextLSN
        // Compaction syncs every frame up to the base's LSN before it installs the base.
        if nextLSN <= baseLSN && !salvage {
            throw LogError.corruption(
                "the log ends at LSN \(nextLSN.previous), before the base's LSN \(baseLSN)", path: active.path, offset: active.validEnd)
        }
        if salvage {
            // Segments after the active one that the (stale) manifest does not list.
            for file in unaccounted {
                guard let header = file.header, header.storeID == manifest.storeID, header.number > activeRecord.number,
                    header.firstLSN <= .maximum,
                    header.number == StoreLayout.parse(file.name)?.number, header.firstLSN >= nextLSN
                else {
                    report.damage.append(file.refusal(layout))
                    continue
                }
                let record = Manifest.Segment(
                    number: header.number, epoch: header.epoch, firstLSN: header.firstLSN,
                    isSealed: false, length: 0, frameCount: 0)
                let result: SegmentScan
                do { result = try scan(record) } catch let error as LogError {
                    report.damage.append(error)
                    continue
                }
                if let corruption = result.corruption { report.damage.append(corruption) }
                if nextLSN < header.firstLSN { report.lostRanges.append(nextLSN...header.firstLSN.previous) }
                report.lostRanges += result.lostRanges
                report.unlistedSegmentsRead.append(file.name)
                extents.append(SegmentExtent(segment: record, path: result.path, end: result.validEnd, nextLSN: result.nextLSN))
                nextLSN = result.nextLSN
            }
        }

        if writable {
            report.removedFiles = try removeLeftovers(unlisted, layout: layout, io: io)
        }

        var writer: WriterState?
        if writable {
            let file = try io.open(active.path, mode: .readWrite)
            writer = WriterState(
                manifest: manifest, segment: SegmentHandle(file: file, number: activeRecord.number, io: io),
                length: active.validEnd, frameCount: active.frames)
        }
        let log = Log(
            layout: layout, options: options, report: report, codec: codec, storeID: manifest.storeID,
            frameLimit: frameLimit, lockFile: lock, writer: writer, extents: extents, nextLSN: nextLSN, manifest: manifest)
        log.startSyncThread()
        return log
    }

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

    /// Whether another open holds the store's writer lock (then an incomplete last frame is a
    /// write in progress). Takes and at once releases the lock when it is free.
    static func writerHoldsLock(_ layout: StoreLayout, _ io: any FileIO) -> Bool {
        guard let file = try? io.open(layout.lock, mode: .readOnly) else { return false }
        defer { io.close(file) }
        return (try? io.tryLock(file)) == false
    }

    /// ``writerHoldsLock(_:_:)``, asked again for a moment before the answer is yes: a child
    /// forked by any thread of this process while a log was open holds a copy of its lock until
    /// it execs, and a closed log's last frame would be called a write in progress.
    static func writerKeepsLock(_ layout: StoreLayout, _ io: any FileIO) -> Bool {
        for _ in 0..<LogTuning.forkedLockChecks {
            guard writerHoldsLock(layout, io) else { return false }
            usleep(LogTuning.lockRetryMicroseconds)
        }
        return writerHoldsLock(layout, io)
    }

    private static func createStore(layout: StoreLayout, io: any FileIO, maximumFrameSize: Int) throws -> Manifest {
        let segment = Manifest.Segment(number: 1, epoch: newEpoch(), firstLSN: .first, isSealed: false, length: 0, frameCount: 0)
        let manifest = Manifest(
            generation: 1, storeID: UUID(), segments: [segment], dictionaries: [], base: nil,
            maximumFrameSize: UInt32(maximumFrameSize))
        let path = layout.path(.segment, 1)
        if io.exists(path) { try io.remove(path) }
        let file = try io.open(path, mode: .createNew)
        defer { io.close(file) }
        let header = SegmentHeader(epoch: segment.epoch, number: 1, firstLSN: .first, storeID: manifest.storeID)
        try header.encoded().withUnsafeBytes { try io.writeAll(file, $0, at: 0) }
        try io.fullSync(file)
        // The segment's directory entry is durable before the manifest that names it.
        try io.syncDirectory(layout.directory)
        try ManifestFile(layout: layout, io: io).write(manifest)
        return manifest
    }

    /// Removes the unlisted files that provably hold nothing acknowledged (``UnlistedFile``):
    /// never a side file, never a segment holding frames.
    private static func removeLeftovers(_ unlisted: [UnlistedFile], layout: StoreLayout, io: any FileIO) throws -> [String] {
        var removed: [String] = []
        for file in unlisted where file.kind == .leftover {
            guard io.exists(layout.path(file.name)) else { continue }
            try io.remove(layout.path(file.name))
            removed.append(file.name)
        }
        if !removed.isEmpty { try io.syncDirectory(layout.directory) }
        return removed
    }

    /// Starts the sync thread of the `.always` and `.interval` modes.
    private func startSyncThread() {
        guard options.isWritable else { return }
        let interval: Duration?
        switch options.durability {
        case .none: return
        case .always: interval = nil
        case .interval(let every): interval = every
        }
        let thread = SyncThread(
            interval: interval,
            hasWork: { [weak self] in
                self?.unsyncedWrites.load(ordering: .acquiring) ?? false
            }
        ) { [weak self] in
            guard let self else { return false }
            try? self.syncWrittenFrames()
            return true
        }
        syncThread.withLock { $0 = thread }
    }
}

extension PayloadCodec {
    /// The record a checked frame holds. With `decode` false, only checks that the frame's
    /// dictionary is known and returns an empty payload.
    func record(from frame: FrameScanner.Frame, path: String, decode: Bool = true) throws -> LogRecord {
        let header = frame.header
        if !decode {
            if header.codec == .lz4Dictionary && dictionary(header.dictionaryID) == nil {
                throw LogError.corruption(
                    "frame uses dictionary \(header.dictionaryID), which the manifest does not list",
                    path: path, offset: frame.offset, lsn: header.lsn)
            }
            return LogRecord(lsn: header.lsn, payload: [], file: path, offset: frame.offset)
        }
        do {
            return LogRecord(
                lsn: header.lsn,
                payload: try self.decode(
                    frame.payload, codec: header.codec,
                    dictionaryID: header.dictionaryID,
                    rawLength: Int(header.rawLength)),
                file: path, offset: frame.offset)
        } catch .unknownDictionary(let id) {
            throw LogError.corruption(
                "frame uses dictionary \(id), which the manifest does not list",
                path: path, offset: frame.offset, lsn: header.lsn)
        } catch .malformed {
            throw LogError.corruption(
                "compressed payload does not decode to its recorded \(header.rawLength) bytes",
                path: path, offset: frame.offset, lsn: header.lsn)
        }
    }
}
