import Glibc
import struct Foundation.UUID

/// What an open finds before it recovers any file: the directory's names, the manifest (or its
/// absence) and, for a read-only open, every file that manifest names, opened together.
struct ManifestRead {
    /// The store directory's entries, listed just before the manifest was read.
    var names: [String]
    /// The manifest read, or its absence.
    var outcome: ManifestFile.Outcome
    /// A read-only open's files (``PinnedFiles``); nil for a writable open or without a manifest.
    var pinned: PinnedFiles?
}

/// The first phases of an open: reading the manifest, and creating the store when there is none.
extension Log {
    /// Lists the directory and reads the manifest (a writable open repairs it: ``ManifestFile``).
    ///
    /// A read-only open of a store another process writes can list the directory just before a
    /// roll and read the manifest just after, or the reverse: a segment then looks unaccounted
    /// for. It reads again, a few times, before calling the manifest stale. It opens every file
    /// the manifest names at once (``PinnedFiles``): when one is gone because a compaction
    /// replaced the manifest meanwhile, it reads the manifest again.
    ///
    /// - Throws: ``LogError/Code/busy`` when the files kept changing; the manifest's errors.
    static func readManifest(layout: StoreLayout, options: LogOptions, lock: OpenFile?) throws -> ManifestRead {
        let io = options.fileIO
        let manifestFile = ManifestFile(layout: layout, io: io)
        var attempts = 0
        while true {
            let names = try io.contentsOfDirectory(layout.directory)
            let segmentsWithFrames = ManifestFile.segmentsHoldingFrames(names, layout: layout, io: io)
            let outcome = try manifestFile.read(segmentsWithFrames: segmentsWithFrames, repair: options.isWritable)
            guard lock == nil, case .found(let found, _) = outcome else { return ManifestRead(names: names, outcome: outcome) }
            let files = try PinnedFiles(found, layout: layout, io: io, limit: options.pinnedFilesLimit)
            if !files.missing.isEmpty && manifestFile.changedUnderReader(since: found) {
                files.release()
                guard attempts < LogTuning.rereadAttempts else { throw manifestFile.busy() }
                attempts += 1
                continue
            }
            guard attempts < LogTuning.rereadAttempts,
                UnlistedFile.classify(names: names, manifest: found, layout: layout, io: io).contains(where: { $0.kind == .unaccountedSegment }),
                writerHoldsLock(layout, io)
            else { return ManifestRead(names: names, outcome: outcome, pinned: files) }
            attempts += 1
            usleep(LogTuning.rereadMicroseconds)
            files.release()
        }
    }

    /// The manifest read, with its note (read from `MANIFEST.tmp` or `.prev`); without one, a
    /// new store's, created here.
    ///
    /// A creation interrupted before its first manifest leaves only a frameless segment. Any
    /// file of the store's that holds bytes (a base, a dictionary, a segment with frames…)
    /// means a store lost its manifest: never a new store over its files.
    ///
    /// - Throws: the refusal of a store without its manifest; ``LogError/Code/notFound`` when
    ///   the open may not create a store; I/O errors.
    static func manifestOrNewStore(
        _ read: ManifestRead, layout: StoreLayout, options: LogOptions
    ) throws -> (manifest: Manifest, note: String?) {
        switch read.outcome {
        case .found(let found, let note):
            return (found, note)
        case .missing:
            let io = options.fileIO
            let orphaned = UnlistedFile.storeFilesWithoutManifest(names: read.names, layout: layout, io: io)
            guard orphaned.isEmpty else { throw UnlistedFile.refusalWithoutManifest(orphaned, layout: layout) }
            guard options.isWritable && options.createIfMissing else {
                throw LogError.noStore(layout)
            }
            return (try createStore(layout: layout, io: io, maximumFrameSize: options.maximumFrameSize), nil)
        }
    }

    /// Writes a new store's first, empty segment, then its first manifest.
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
}

extension LogError {
    /// The error for a directory that holds no store (no manifest).
    static func noStore(_ layout: StoreLayout) -> LogError {
        LogError(.notFound, "no Cairn store here (no MANIFEST)", path: layout.manifest)
    }
}
