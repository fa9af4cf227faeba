import Glibc
import struct Foundation.UUID

/// Opening: the writer lock, the manifest, dictionaries, recovery of every segment.
extension Log {
    /// Opens the log in `directory`, creating an empty store there when there is none (unless
    /// ``LogOptions/createIfMissing`` is false or the log is read-only).
    ///
    /// Every frame is checked (see ``RecoveryMode``). Pass `replay` to receive each record in
    /// LSN order during that same pass; if opening then fails, discard what was received.
    ///
    /// - Throws: ``LogError``: ``LogError/Code/locked`` (naming the holder's pid) when another
    ///   writer has the store; ``LogError/Code/corruption`` naming file and offset;
    ///   ``LogError/Code/tornTail`` in ``RecoveryMode/absoluteConsistency``; I/O errors.
    public static func open(at directory: String, options: LogOptions = LogOptions(),
                            replay: ((LogRecord) throws -> Void)? = nil) throws -> Log {
        try options.validate()
        let io = options.fileIO
        let layout = StoreLayout(directory: directory)
        let writable = options.isWritable
        if writable && options.createIfMissing { try io.createDirectory(layout.directory) }
        guard io.exists(layout.directory) else { throw LogError(.notFound, "no such directory", path: layout.directory) }
        let lock = writable ? try acquireLock(layout, io) : nil
        do {
            return try recover(layout: layout, options: options, lock: lock, replay: replay)
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
            while !locked && attempts < 40 {
                usleep(5_000)
                attempts += 1
                locked = try io.tryLock(file)
            }
            guard locked else {
                let holder = (try? io.readWholeFile(layout.lock, limit: 64)).map {
                    String(decoding: $0, as: UTF8.self).filter(\.isNumber)
                } ?? ""
                throw LogError(.locked, "the store is open for writing by process \(holder.isEmpty ? "unknown" : holder)",
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

    private static func recover(layout: StoreLayout, options: LogOptions, lock: OpenFile?,
                                replay: ((LogRecord) throws -> Void)?) throws -> Log {
        let io = options.fileIO
        let writable = options.isWritable
        let salvage = options.recovery == .salvage
        var report = RecoveryReport()

        let names = try io.contentsOfDirectory(layout.directory)
        let numbered = names.compactMap(StoreLayout.parse)
        let segmentNumbers = Set(numbered.filter { $0.kind == .segment }.map(\.number))
        var manifest: Manifest
        switch try ManifestFile(layout: layout, io: io).read(existingSegments: segmentNumbers, repair: writable) {
        case .found(let found, let note):
            manifest = found
            report.manifestNote = note
        case .missing:
            // A creation interrupted before its first manifest leaves only a frameless segment.
            let interruptedCreation = try segmentNumbers.allSatisfy { number in
                let file = try io.open(layout.path(.segment, number), mode: .readOnly)
                defer { io.close(file) }
                return try io.size(of: file) <= UInt64(SegmentHeader.size)
            }
            guard interruptedCreation else {
                throw LogError.corruption("segment files are present but no manifest is", path: layout.manifest)
            }
            guard writable && options.createIfMissing else {
                throw LogError(.notFound, "no Cairn store here (no MANIFEST)", path: layout.manifest)
            }
            manifest = try createStore(layout: layout, io: io, maximumFrameSize: options.maximumFrameSize)
        }

        try manifest.checkSupported(path: layout.manifest)
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
        let codec = PayloadCodec(policy: options.compression, dictionaries: dictionaries,
                                 trainingThreshold: options.dictionaryTraining.threshold)

        let buffer = ReadBuffer()
        var extents: [SegmentExtent] = []
        var last: SegmentScan?
        for segment in manifest.segments {
            let path = layout.path(.segment, segment.number)
            let scan: SegmentScan
            do {
                scan = try SegmentScan.scan(segment, layout: layout, io: io, storeID: manifest.storeID,
                                            maximumFrameSize: frameLimit, salvage: salvage, buffer: buffer) { frame in
                    let record = try codec.record(from: frame, path: path, decode: replay != nil)
                    try replay?(record)
                }
            } catch let error as LogError where salvage && error.code == .corruption {
                report.damage.append(error)
                let lost = segment.isSealed ? segment.firstLSN...LSN(segment.firstLSN.rawValue + max(segment.frameCount, 1) - 1) : nil   // no overflow: Manifest.checkInvariants
                if let lost { report.lostRanges.append(lost) }
                continue
            }
            if let corruption = scan.corruption {
                guard salvage else { throw corruption }
                report.damage.append(corruption)
            }
            report.lostRanges += scan.lostRanges
            if let previous = last, previous.segment.isSealed, previous.nextLSN < segment.firstLSN, salvage {
                report.lostRanges.append(previous.nextLSN...segment.firstLSN.previous)
            }
            extents.append(SegmentExtent(segment: segment, path: path, end: scan.validEnd, nextLSN: scan.nextLSN))
            last = scan
        }

        guard let active = last, let activeRecord = manifest.activeSegment, active.segment == activeRecord else {
            throw LogError.corruption("the active segment could not be read", path: layout.path(.segment, manifest.activeSegment?.number ?? 0))
        }
        if let problem = active.problem, !active.validFrameFollows, !problem.isDefinitelyDamage {
            var torn = RecoveryReport.TornTail(path: active.path, offset: problem.offset,
                                               bytes: active.fileLength - problem.offset, reason: problem.reason, wasCut: false)
            if options.recovery == .absoluteConsistency {
                throw LogError(.tornTail, "the active segment ends in an incomplete frame: \(problem.reason)",
                               path: active.path, offset: problem.offset)
            }
            if writable {
                let file = try io.open(active.path, mode: .readWrite)
                defer { io.close(file) }
                try io.truncate(file, to: problem.offset)
                try io.fullSync(file)
                torn.wasCut = true
            }
            report.tornTail = torn
        }

        if writable {
            report.removedFiles = try removeLeftovers(names: names, manifest: manifest, layout: layout, io: io)
        }

        var writer: WriterState?
        if writable {
            let file = try io.open(active.path, mode: .readWrite)
            writer = WriterState(manifest: manifest, segment: SegmentHandle(file: file, number: activeRecord.number, io: io),
                                 length: active.validEnd, frameCount: active.frames)
        }
        let log = Log(layout: layout, options: options, report: report, codec: codec, storeID: manifest.storeID,
                      frameLimit: frameLimit, lockFile: lock, writer: writer, extents: extents, nextLSN: active.nextLSN)
        log.startSyncThread()
        return log
    }

    private static func createStore(layout: StoreLayout, io: any FileIO, maximumFrameSize: Int) throws -> Manifest {
        let segment = Manifest.Segment(number: 1, epoch: newEpoch(), firstLSN: .first, isSealed: false, length: 0, frameCount: 0)
        let manifest = Manifest(generation: 1, storeID: UUID(), segments: [segment], dictionaries: [], base: nil,
                                maximumFrameSize: UInt32(maximumFrameSize))
        let path = layout.path(.segment, 1)
        if io.exists(path) { try io.remove(path) }
        let file = try io.open(path, mode: .createNew)
        defer { io.close(file) }
        let header = SegmentHeader(epoch: segment.epoch, number: 1, firstLSN: .first, storeID: manifest.storeID)
        try header.encoded().withUnsafeBytes { try io.writeAll(file, $0, at: 0) }
        try io.fullSync(file)
        try ManifestFile(layout: layout, io: io).write(manifest)
        return manifest
    }

    /// Removes files of Cairn's own patterns that the manifest does not reference.
    private static func removeLeftovers(names: [String], manifest: Manifest, layout: StoreLayout, io: any FileIO) throws -> [String] {
        var referenced = Set(manifest.segments.map { StoreLayout.name(.segment, $0.number) })
        referenced.formUnion(manifest.dictionaries.map { StoreLayout.name(.dictionary, UInt64($0.id)) })
        if let base = manifest.base { referenced.insert(StoreLayout.name(.base, base.number)) }
        var removed: [String] = []
        for name in names.sorted() where !referenced.contains(name) {
            guard StoreLayout.parse(name) != nil || StoreLayout.isTemporary(name) else { continue }
            guard io.exists(layout.path(name)) else { continue }
            try io.remove(layout.path(name))
            removed.append(name)
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
        let thread = SyncThread(interval: interval, hasWork: { [weak self] in
            self?.unsyncedWrites.load(ordering: .acquiring) ?? false
        }) { [weak self] in
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
                throw LogError.corruption("frame uses dictionary \(header.dictionaryID), which the manifest does not list",
                                          path: path, offset: frame.offset, lsn: header.lsn)
            }
            return LogRecord(lsn: header.lsn, payload: [])
        }
        do {
            return LogRecord(lsn: header.lsn, payload: try self.decode(frame.payload, codec: header.codec,
                                                                       dictionaryID: header.dictionaryID,
                                                                       rawLength: Int(header.rawLength)))
        } catch .unknownDictionary(let id) {
            throw LogError.corruption("frame uses dictionary \(id), which the manifest does not list",
                                      path: path, offset: frame.offset, lsn: header.lsn)
        } catch .malformed {
            throw LogError.corruption("compressed payload does not decode to its recorded \(header.rawLength) bytes",
                                      path: path, offset: frame.offset, lsn: header.lsn)
        }
    }
}
