/// One open's recovery of the files its manifest names, once the manifest is read: the state
/// its phases share, and ``run(base:)``, which runs them in the order of docs/ARCHITECTURE.md's
/// "path of an open".
struct Recovery {
    let layout: StoreLayout
    let options: LogOptions
    /// Where the files are read: a read-only open's ``PinnedFiles``, else the options' ``FileIO``.
    let io: any FileIO
    /// The writer lock, held by a writable open.
    let lock: OpenFile?
    /// The manifest read (with the frame limit ``recordFrameLimit()`` raised).
    var manifest: Manifest
    /// What the open found and did so far.
    var report: RecoveryReport
    /// The files of Cairn's names that the manifest does not list.
    let unlisted: [UnlistedFile]
    /// Receives each record after the base, in LSN order.
    let replay: ((LogRecord) throws -> Void)?
    /// The segments read so far, in order: what the log publishes to readers.
    var extents: [SegmentExtent] = []
    /// The LSN after the last frame read.
    var nextLSN = LSN.first
    /// The writer's last acknowledged LSN, for an open that reads no frame of the active
    /// segment after it (``LogOptions/readsAcknowledgedOnly``); nil: every complete frame.
    var acknowledged: LSN?
    /// Reused by every segment's scan.
    let buffer = ReadBuffer()

    init(
        layout: StoreLayout, options: LogOptions, io: any FileIO, lock: OpenFile?, names: [String], manifest: Manifest,
        note: String?, replay: ((LogRecord) throws -> Void)?
    ) {
        self.layout = layout
        self.options = options
        self.io = io
        self.lock = lock
        self.manifest = manifest
        self.report = RecoveryReport(manifestNote: note)
        self.unlisted = UnlistedFile.classify(names: names, manifest: manifest, layout: layout, io: io)
        self.replay = replay
    }

    var writable: Bool { options.isWritable }
    var salvage: Bool { options.recovery == .salvage }
    /// The unlisted segments holding frames the manifest does not account for: it is stale.
    var unaccounted: [UnlistedFile] { unlisted.filter { $0.kind == .unaccountedSegment } }
    /// The LSN whose state the base holds (zero without a base): frames up to it are not replayed.
    var baseLSN: LSN { manifest.base?.lastLSN ?? .zero }
    /// The largest frame a scan accepts: the manifest's.
    var frameLimit: Int { Int(manifest.maximumFrameSize) }

    /// Recovers every file, phase by phase, and returns the log (its sync thread not started).
    /// `read` reads the base when the store has one.
    mutating func run(base read: ((BaseReader) throws -> Void)?) throws -> Log {
        try refuseStaleManifest()
        try recordFrameLimit()
        let codec = try loadDictionaries()
        try readBase(read)
        let active = try scanListedSegments(codec)
        try cutTornTail(of: active)
        try checkEndAfterBase(active)
        try salvageUnlistedSegments(after: active, codec)
        try removeLeftovers()
        return try openLog(codec, active: active)
    }

    /// Refuses a stale manifest (unlisted frames it does not account for), except in salvage.
    func refuseStaleManifest() throws {
        if let first = unaccounted.first, !salvage { throw first.refusal(layout) }
    }

    /// A writable open with a larger frame limit than the manifest's records it before it
    /// writes a frame: readers then accept such frames (``ManifestFile/changedUnderReader(since:)``).
    mutating func recordFrameLimit() throws {
        guard writable && UInt32(options.maximumFrameSize) > manifest.maximumFrameSize else { return }
        manifest.maximumFrameSize = UInt32(options.maximumFrameSize)
        manifest.generation += 1
        try ManifestFile(layout: layout, io: io).write(manifest)
    }

    /// Loads the dictionaries the manifest lists into the codec. Salvaging a stale manifest, it
    /// also loads the unlisted ones (frames of segments it does not list may use them),
    /// reporting those that do not load as damage.
    mutating func loadDictionaries() throws -> PayloadCodec {
        var dictionaries: [CompressionDictionary] = []
        for record in manifest.dictionaries {
            let path = layout.path(.dictionary, UInt64(record.id))
            let bytes = try io.readWholeFile(path, limit: CompressionDictionary.maximumSize + 64)
            dictionaries.append(try CompressionDictionary(file: bytes, expected: record, path: path))
        }
        if salvage && !unaccounted.isEmpty {
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
        return PayloadCodec(
            policy: options.compression, dictionaries: dictionaries,
            trainingThreshold: options.dictionaryTraining.threshold)
    }

    /// The base first, when there is one: the records after it change what it holds. Read by
    /// `read`; an open that replays records without reading it refuses the store; an open that
    /// does neither checks its length.
    func readBase(_ read: ((BaseReader) throws -> Void)?) throws {
        guard let record = manifest.base else { return }
        let reader = BaseReader(base: record, layout: layout, storeID: manifest.storeID, io: io)
        if let read {
            try read(reader)
        } else if replay != nil {
            throw LogError(.unsupportedFormat, "the store has a base, and this open replays records without reading it", path: reader.path)
        } else {
            try reader.checkLength()
        }
    }

    /// A writable open removes the unlisted files that provably hold nothing acknowledged
    /// (``UnlistedFile``): never a side file, never a segment holding frames.
    mutating func removeLeftovers() throws {
        guard writable else { return }
        var removed: [String] = []
        for file in unlisted where file.kind == .leftover {
            guard io.exists(layout.path(file.name)) else { continue }
            try io.remove(layout.path(file.name))
            removed.append(file.name)
        }
        if !removed.isEmpty { try io.syncDirectory(layout.directory) }
        report.removedFiles = removed
    }

    /// The recovered log; a writable one appends to the active segment after its last valid frame.
    func openLog(_ codec: PayloadCodec, active: SegmentScan) throws -> Log {
        var writer: WriterState?
        if writable {
            let file = try io.open(active.path, mode: .readWrite)
            writer = WriterState(
                manifest: manifest, segment: SegmentHandle(file: file, number: active.segment.number, io: io),
                length: active.validEnd, frameCount: active.records, segmentVersion: active.version)
        }
        return Log(
            layout: layout, options: options, report: report, codec: codec, storeID: manifest.storeID,
            frameLimit: frameLimit, lockFile: lock, writer: writer, extents: extents, nextLSN: nextLSN, manifest: manifest)
    }
}
