import struct Foundation.UUID

/// What one backup did.
public struct BackupReport: Sendable {
    /// The LSN the backup holds the store as of: its last frame (or its base's LSN).
    public let lsn: LSN
    /// The backup's directory.
    public let destination: String
    /// Files given a second name (a hard link: no bytes copied).
    public let linked: [String]
    /// Files copied whole, or (the active segment) extended by the bytes added since.
    public let copied: [String]
    /// Files the backup already held as they are.
    public let unchanged: [String]
    /// The bytes written into the backup.
    public let bytesCopied: UInt64
    /// Files of an earlier backup that this one no longer needs, removed.
    public let removed: [String]
}

/// A consistent copy of a store, as of one LSN, while appends go on.
///
/// The base, the dictionaries and the sealed segments never change once written: they are
/// hard-linked into the backup (copied when the backup is on another file system). The active
/// segment is copied up to the end of the last acknowledged frame. The backup gets a manifest
/// of its own, written last (its commit point); opening the backup is the restore.
///
/// Backing up into the same directory again copies only what is new: files it already holds
/// are kept, a segment that only grew is extended, files the store no longer lists are removed
/// after the new manifest is in place. So the directory can be shipped to object storage with
/// tools that copy only changed files (`rclone sync`, `aws s3 sync`).
extension Log {
    /// Copies the store into `destination` (created if missing) as of the last acknowledged
    /// frame.
    ///
    /// `destination` must be empty (or missing) or an earlier backup of this store; a backup
    /// never replaces or removes a file it did not write (``BackupDestination``). `progress` is
    /// called before the first file and after each one (``BackupProgress``).
    ///
    /// - Throws: ``LogError/Code/invalidArgument`` when `destination` holds another store's
    ///   backup, was opened as a store (a backup is never written into once restored), or holds
    ///   a file in the way (naming the directory and the file);
    ///   ``LogError/Code/busy`` when, in a read-only log, the store's files changed under it (a
    ///   compaction in another process: try again); I/O errors (the backup then keeps its
    ///   previous manifest and state).
    public func backup(to destination: String, progress: ((BackupProgress) -> Void)? = nil) throws -> BackupReport {
        // Held while the files are copied: a compaction meanwhile then only unlinks the files
        // it replaced, never cuts them down (``removeReplacedFiles(_:stopCutting:afterFirst:)``).
        let reading = try ReaderLock.holdShared(layout, io)
        defer { if let reading { io.close(reading) } }
        let plan = try captureBackup()
        defer { for file in plan.files { io.close(file.source) } }
        let target = StoreLayout(directory: destination)
        let found = try BackupDestination.check(target, storeID: storeID, source: layout, io: io)
        let previous = found.manifest
        // Files the backup's manifest already names as immutable; anything else is copied again
        // (a segment that was active at the last backup, a file an interrupted run left).
        var held: Set<String> = []
        if let previous {
            if let base = previous.base { held.insert(StoreLayout.name(.base, base.number)) }
            for dictionary in previous.dictionaries { held.insert(StoreLayout.name(.dictionary, UInt64(dictionary.id))) }
            for segment in previous.segments where segment.isSealed { held.insert(StoreLayout.name(.segment, segment.number)) }
        }
        var linked: [String] = [], copied: [String] = [], unchanged: [String] = []
        var bytes: UInt64 = 0
        let byteCount = plan.files.reduce(0) { $0 + $1.length }
        var bytesDone: UInt64 = 0
        progress?(BackupProgress(filesDone: 0, fileCount: plan.files.count, bytesDone: 0, byteCount: byteCount))
        for (index, file) in plan.files.enumerated() {
            let path = target.path(file.name)
            let existing = io.exists(path) ? try? sizeOfFile(path) : nil
            if existing == file.length, try file.immutable ? held.contains(file.name) : samePrefix(file, path, length: file.length) {
                unchanged.append(file.name)
            } else if file.immutable, (try? linkAtomically(layout.path(file.name), to: path)) != nil, try sizeOfFile(path) == file.length {
                linked.append(file.name)
            } else if !file.immutable, let existing, existing < file.length, try samePrefix(file, path, length: existing) {
                try extend(path, from: file, at: existing)
                copied.append(file.name)
                bytes += file.length - existing
            } else {
                try io.copyAtomically(file.source, 0..<file.length, to: path, directory: target.directory)
                copied.append(file.name)
                bytes += file.length
            }
            // (A file counts as done once it is there: one that failed threw above.)
            bytesDone += file.length
            progress?(BackupProgress(filesDone: index + 1, fileCount: plan.files.count, bytesDone: bytesDone, byteCount: byteCount))
        }
        try io.syncDirectory(target.directory)
        // Every file still whole: a compaction may have cut a source down while it was copied
        // or linked, when this backup could not hold the reader lock (``ReaderLock``).
        for file in plan.files {
            let copy = target.path(file.name)
            guard try io.size(of: file.source) >= file.length, try sizeOfFile(copy) == file.length else {
                throw LogError(.busy, "the store's file was cut down while it was backed up (compacted meanwhile): try again", path: copy)
            }
        }
        // The commit point: the backup's own manifest, naming exactly the files above.
        try ManifestFile(layout: target, io: io).write(plan.manifest)
        // The previous manifest names files removed below: not a fallback for a backup.
        if io.exists(target.previousManifest) { try? io.remove(target.previousManifest) }
        // Only the backup's own files that it no longer names (an earlier backup's, or an
        // interrupted run's): nothing else in the directory is touched.
        let listed = Set(plan.files.map(\.name))
        var removed: [String] = []
        for name in found.owned.sorted() where !listed.contains(name) && !name.hasPrefix("MANIFEST") {
            guard io.exists(target.path(name)) else { continue }
            if (try? io.remove(target.path(name))) != nil { removed.append(name) }
        }
        if !removed.isEmpty { try? io.syncDirectory(target.directory) }
        return BackupReport(
            lsn: plan.lsn, destination: target.directory, linked: linked, copied: copied, unchanged: unchanged, bytesCopied: bytes,
            removed: removed)
    }

    /// One file of a backup: its name, the store's file open for reading, and the bytes to take.
    private struct BackupFile {
        var name: String
        var source: OpenFile
        var length: UInt64
        /// A base, dictionary or sealed segment (never changes); else the active segment's prefix.
        var immutable: Bool
    }

    private struct BackupPlan {
        var manifest: Manifest
        var files: [BackupFile]
        var lsn: LSN
    }

    /// The manifest and files of a backup, each file opened while they are known to be current
    /// (under the writer's lock; a compaction removing one afterwards leaves it readable).
    private func captureBackup() throws -> BackupPlan {
        if options.isWritable {
            return try withWriter { state in
                try plan(state.manifest, extents: appendState.withLock { $0.extents })
            }
        }
        // Read-only: the manifest as it is now must still be the one this log opened with.
        let changed = LogError(.busy, "the store was compacted while the backup started; try again", path: directory)
        guard let manifest = try manifestIfFilesUnchanged() else { throw changed }
        let extents = appendState.withLock { $0.extents }
        do {
            return try plan(manifest, extents: extents)
        } catch {
            // A file removed between reading the manifest and opening it: compacted meanwhile.
            if manifestFile.changedUnderReader(since: manifest) { throw changed }
            throw error
        }
    }

    /// For a read-only log: the store's manifest now, when it still names every file this log
    /// opened (a writer's roll since adds a segment and changes nothing of them); nil when a
    /// compaction replaced some, or the manifest is gone (``ManifestFile/manifest(keepingFilesOf:)``).
    ///
    /// - Throws: the manifest's own errors.
    func manifestIfFilesUnchanged() throws -> Manifest? {
        try manifestFile.manifest(keepingFilesOf: followedManifest.withLock { $0 })
    }

    private func plan(_ source: Manifest, extents: [SegmentExtent]) throws -> BackupPlan {
        var manifest = source
        var files: [BackupFile] = []
        var lastTaken: SegmentExtent?
        /// Opens a file; `length` nil: the whole file.
        func add(_ name: String, _ length: UInt64?, immutable: Bool) throws {
            let file = try io.open(layout.path(name), mode: .readOnly)
            do {
                files.append(BackupFile(name: name, source: file, length: try length ?? io.size(of: file), immutable: immutable))
            } catch {
                io.close(file)
                throw error
            }
        }
        do {
            if let base = manifest.base { try add(StoreLayout.name(.base, base.number), base.length, immutable: true) }
            for dictionary in manifest.dictionaries {
                try add(StoreLayout.name(.dictionary, UInt64(dictionary.id)), nil, immutable: true)
            }
            // The segments up to the last acknowledged frame (a sealed segment only partly
            // acknowledged ends the list).
            var segments: [Manifest.Segment] = []
            for extent in extents {
                guard let segment = source.segments.first(where: { $0.number == extent.segment.number }) else { continue }
                let whole = segment.isSealed && extent.end == segment.length
                segments.append(segment)
                lastTaken = extent
                try add(StoreLayout.name(.segment, segment.number), extent.end, immutable: whole)
                if !whole { break }
            }
            // The last one taken is the backup's active segment: a prefix of the store's file.
            if !segments.isEmpty {
                segments[segments.count - 1].isSealed = false
                segments[segments.count - 1].length = 0
                segments[segments.count - 1].frameCount = 0
                files[files.count - 1].immutable = false
            }
            manifest.segments = segments
        } catch {
            for file in files { io.close(file.source) }
            throw error
        }
        let lsn = lastTaken.map { $0.nextLSN.previous } ?? .zero
        return BackupPlan(manifest: manifest, files: files, lsn: max(lsn, manifest.base?.lastLSN ?? .zero))
    }

    private func sizeOfFile(_ path: String) throws -> UInt64 {
        let file = try io.open(path, mode: .readOnly)
        defer { io.close(file) }
        return try io.size(of: file)
    }

    /// Links `source` to `path` through a temporary name, replacing any file at `path`.
    private func linkAtomically(_ source: String, to path: String) throws {
        let temporary = path + ".tmp"
        if io.exists(temporary) { try io.remove(temporary) }
        try io.link(source, to: temporary)
        try io.rename(temporary, to: path)
    }

    /// Whether the backup's copy of the active segment (`length` bytes) is a prefix of the
    /// store's file, compared byte for byte (a segment is at most the segment size): a frame
    /// the copy took and the store later cut and rewrote, or an extension a crash left half
    /// written, makes it differ, and the copy is made again.
    private func samePrefix(_ file: BackupFile, _ path: String, length: UInt64) throws -> Bool {
        let copy = try io.open(path, mode: .readOnly)
        defer { io.close(copy) }
        let chunk = LogTuning.copyChunkSize
        let mine = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        let theirs = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        defer {
            mine.deallocate()
            theirs.deallocate()
        }
        var offset: UInt64 = 0
        while offset < length {
            let count = Int(min(UInt64(chunk), length - offset))
            try readSource(file, into: UnsafeMutableRawBufferPointer(rebasing: mine[0..<count]), at: offset)
            try io.readExactly(copy, into: UnsafeMutableRawBufferPointer(rebasing: theirs[0..<count]), at: offset)
            guard UnsafeRawBufferPointer(rebasing: mine[0..<count]).elementsEqual(UnsafeRawBufferPointer(rebasing: theirs[0..<count])) else {
                return false
            }
            offset += UInt64(count)
        }
        return true
    }

    /// Reads bytes of the store's file; a file cut short meanwhile (a compaction, when this
    /// backup could not hold the reader lock) is `busy`, not damage.
    private func readSource(_ file: BackupFile, into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws {
        do {
            try io.readExactly(file.source, into: buffer, at: offset)
        } catch {
            if let size = try? io.size(of: file.source), size < file.length {
                throw LogError(.busy, "the store's file was cut down while it was backed up (compacted meanwhile): try again", path: file.source.path)
            }
            throw error
        }
    }

    /// Appends bytes `start..<file.length` of the store's file to the backup's copy, and syncs it.
    private func extend(_ path: String, from file: BackupFile, at start: UInt64) throws {
        let copy = try io.open(path, mode: .readWrite)
        defer { io.close(copy) }
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: LogTuning.copyChunkSize, alignment: 16)
        defer { chunk.deallocate() }
        var offset = start
        while offset < file.length {
            let count = Int(min(UInt64(chunk.count), file.length - offset))
            let part = UnsafeMutableRawBufferPointer(rebasing: chunk[0..<count])
            try readSource(file, into: part, at: offset)
            try io.writeAll(copy, UnsafeRawBufferPointer(part), at: offset)
            offset += UInt64(count)
        }
        try io.fullSync(copy)
    }
}
