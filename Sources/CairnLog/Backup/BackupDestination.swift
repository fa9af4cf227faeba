import struct Foundation.UUID

/// The directory a backup is written into, as found before anything is written: an empty
/// directory, or an earlier backup of the same store (complete, or interrupted before its
/// manifest), and which of its files that store's backups wrote.
///
/// A file is the backup's own when the earlier backup's manifest names it, or when its contents
/// say so: a segment or base whose header names this store, a dictionary identical to the
/// store's of that number, an empty file of Cairn's names (it holds nothing), and the manifest's
/// own files beside a manifest or files of this store. Beside a manifest of this store, a
/// `.tmp` file of Cairn's names is the backup's too (only its atomic copy writes them, and a
/// power cut may leave one's header zeroed or short); and in a backup of this store (its
/// manifest, or a segment or base whose header names the store), a dictionary of Cairn's
/// format numbered as its name says (one the store has since dropped). An empty `lost+found`
/// directory (a new file system's mount point) is not in the way. Anything else is refused,
/// naming it: a backup never replaces or removes a file it did not write.
struct BackupDestination {
    /// The earlier backup's manifest, when the directory holds one.
    var manifest: Manifest?
    /// The files (of Cairn's names) that this store's backups wrote.
    var owned: Set<String>

    /// Checks `target` (made when missing) for a backup of the store `storeID` whose files are
    /// in `source`.
    ///
    /// - Throws: ``LogError/Code/invalidArgument`` naming the directory and the first file in
    ///   the way: a `LOCK` (it was opened as a store), another store's backup, a directory
    ///   that is neither empty nor a backup of this store, another store's file; I/O errors.
    static func check(_ target: StoreLayout, storeID: UUID, source: StoreLayout, io: any FileIO) throws -> BackupDestination {
        try io.createDirectory(target.directory)
        if io.exists(target.lock) {
            throw LogError(
                .invalidArgument, "holds a LOCK file: it was opened as a store, and a backup is never written into a restored store",
                path: target.directory)
        }
        var found = BackupDestination(manifest: nil, owned: [])
        if case .found(let manifest, _) = try ManifestFile(layout: target, io: io).read(segmentsWithFrames: [], repair: false) {
            if manifest.storeID != storeID {
                throw LogError(
                    .invalidArgument, "holds a backup of another store (\(manifest.storeID)), not of \(storeID)", path: target.directory)
            }
            found.manifest = manifest
        }
        let named = Set(found.manifest.map(Self.names) ?? [])
        let manifestFiles: Set<String> = ["MANIFEST", "MANIFEST.prev", "MANIFEST.tmp"]
        var inTheWay: [(name: String, reason: String?)] = []
        var others: [String] = []
        // Dictionaries of Cairn's format that are not the store's now: the backup's own only in
        // a backup of this store (one a compaction has since dropped).
        var formerDictionaries: [String] = []
        // Whether a file's header or the manifest says the directory is a backup of this store.
        var ofThisStore = found.manifest != nil
        for name in try io.contentsOfDirectory(target.directory).sorted() {
            let path = target.path(name)
            if manifestFiles.contains(name) {
                others.append(name)
            } else if let file = Self.storeFileName(name) {
                let temporary = StoreLayout.parse(name) == nil
                if named.contains(name) {
                    found.owned.insert(name)
                } else if Self.isOwn(path, file: file, temporary: temporary, storeID: storeID, source: source, io: io) {
                    found.owned.insert(name)
                    if file.kind != .dictionary && !Self.isEmpty(path, io: io) { ofThisStore = true }
                } else if temporary && found.manifest != nil && !Self.namesAnotherStore(path, file: file, storeID: storeID, io: io) {
                    // Only the backup's atomic copy writes a `.tmp` of Cairn's names: a power
                    // cut may leave its header zeroed or short.
                    found.owned.insert(name)
                } else if temporary {
                    inTheWay.append((name, "an interrupted temporary file of a backup: remove it"))
                } else if file.kind == .dictionary && Self.isDictionary(path, number: file.number, io: io) {
                    formerDictionaries.append(name)
                } else {
                    inTheWay.append((name, nil))
                }
            } else if name == "lost+found" && (try? io.contentsOfDirectory(path))?.isEmpty == true {
                // A freshly made file system's mount point: an empty directory is not in the way.
                continue
            } else if found.manifest == nil {
                // Not an earlier backup: only an empty directory is written into.
                inTheWay.append((name, nil))
            }
        }
        for name in formerDictionaries {
            if ofThisStore { found.owned.insert(name) } else { inTheWay.append((name, nil)) }
        }
        // The manifest's own files are the backup's beside its manifest or its other files.
        for name in others {
            if found.manifest != nil || !found.owned.isEmpty || Self.isEmpty(target.path(name), io: io) {
                found.owned.insert(name)
            } else {
                inTheWay.append((name, nil))
            }
        }
        if let first = inTheWay.sorted(by: { $0.name < $1.name }).first {
            throw LogError(
                .invalidArgument,
                "\(target.directory) is not empty and is not a backup of this store (\(storeID)): \(first.name) is in the way"
                    + (first.reason.map { " (\($0))" } ?? "")
                    + ". A backup writes only into an empty directory or an earlier backup of the same store, and never replaces "
                    + "or removes a file it did not write",
                path: target.path(first.name))
        }
        return found
    }

    /// The names of the files a backup's manifest names.
    private static func names(_ manifest: Manifest) -> [String] {
        var names = manifest.segments.map { StoreLayout.name(.segment, $0.number) }
        names += manifest.dictionaries.map { StoreLayout.name(.dictionary, UInt64($0.id)) }
        if let base = manifest.base { names.append(StoreLayout.name(.base, base.number)) }
        return names
    }

    /// The numbered file `name` is, or is the temporary file of (`NNN.seg.tmp`); nil for other names.
    private static func storeFileName(_ name: String) -> (kind: StoreLayout.Kind, number: UInt64)? {
        if let file = StoreLayout.parse(name) { return file }
        guard name.hasSuffix(".tmp") else { return nil }
        return StoreLayout.parse(String(name.dropLast(4)))
    }

    /// Whether the file at `path` (`temporary`: a `.tmp` file) says it was written by a backup
    /// of the store `storeID`.
    private static func isOwn(
        _ path: String, file: (kind: StoreLayout.Kind, number: UInt64), temporary: Bool, storeID: UUID, source: StoreLayout,
        io: any FileIO
    ) -> Bool {
        if isEmpty(path, io: io) { return true }
        switch file.kind {
        case .segment, .base:
            return headerStoreID(path, kind: file.kind, io: io) == storeID
        case .dictionary:
            let limit = CompressionDictionary.maximumSize + 64
            guard let mine = try? io.readWholeFile(source.path(.dictionary, file.number), limit: limit),
                let theirs = try? io.readWholeFile(path, limit: limit)
            else { return false }
            // A temporary file may hold the start of a copy an interrupted backup was making.
            return temporary ? mine.starts(with: theirs) : mine == theirs
        }
    }

    /// Whether the file at `path` is a segment or base whose header reads and names another
    /// store than `storeID`.
    private static func namesAnotherStore(_ path: String, file: (kind: StoreLayout.Kind, number: UInt64), storeID: UUID, io: any FileIO) -> Bool {
        headerStoreID(path, kind: file.kind, io: io).map { $0 != storeID } ?? false
    }

    /// The store a segment's or base's header names; nil when it does not read (or for a dictionary).
    private static func headerStoreID(_ path: String, kind: StoreLayout.Kind, io: any FileIO) -> UUID? {
        switch kind {
        case .segment:
            guard let header = try? readHeader(path, count: SegmentHeader.size, io: io) else { return nil }
            return (try? header.withUnsafeBytes { try SegmentHeader(decoding: $0, path: path) })?.storeID
        case .base:
            guard let header = try? readHeader(path, count: BaseFile.headerSize, io: io) else { return nil }
            return (try? header.withUnsafeBytes { try BaseHeader(decoding: $0, path: path) })?.storeID
        case .dictionary:
            return nil
        }
    }

    /// Whether the file at `path` is a dictionary of Cairn's format (magic, version, checksum)
    /// whose number is `number`, as its name says.
    private static func isDictionary(_ path: String, number: UInt64, io: any FileIO) -> Bool {
        guard let bytes = try? io.readWholeFile(path, limit: CompressionDictionary.maximumSize + 64) else { return false }
        return (try? CompressionDictionary(unlistedFile: bytes, id: number, path: path)) != nil
    }

    private static func isEmpty(_ path: String, io: any FileIO) -> Bool {
        guard let file = try? io.open(path, mode: .readOnly) else { return false }
        defer { io.close(file) }
        return (try? io.size(of: file)) == 0
    }

    private static func readHeader(_ path: String, count: Int, io: any FileIO) throws -> [UInt8] {
        let file = try io.open(path, mode: .readOnly)
        defer { io.close(file) }
        var bytes = [UInt8](repeating: 0, count: count)
        try bytes.withUnsafeMutableBytes { try io.readExactly(file, into: $0, at: 0) }
        return bytes
    }
}
