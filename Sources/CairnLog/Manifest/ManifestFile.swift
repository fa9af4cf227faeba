/// Reads and replaces the MANIFEST file of a store, keeping the previous generation.
///
/// Replacing: write `MANIFEST.tmp` and fsync it; rename `MANIFEST` to `MANIFEST.prev`; rename
/// `MANIFEST.tmp` to `MANIFEST`; fsync the directory. A crash between the two renames leaves no
/// `MANIFEST` but a complete, synced `MANIFEST.tmp`, which the next open promotes.
package struct ManifestFile: Sendable {
    package let layout: StoreLayout
    package let io: any FileIO

    package init(layout: StoreLayout, io: any FileIO) {
        self.layout = layout
        self.io = io
    }

    private var temporary: String { layout.manifest + ".tmp" }

    /// Writes a new generation.
    package func write(_ manifest: Manifest) throws {
        let bytes = manifest.encoded()
        if io.exists(temporary) { try io.remove(temporary) }
        let file = try io.open(temporary, mode: .createNew)
        do {
            try bytes.withUnsafeBytes { try io.writeAll(file, $0, at: 0) }
            try io.fullSync(file)
        } catch {
            io.close(file)
            try? io.remove(temporary)
            throw error
        }
        io.close(file)
        if io.exists(layout.manifest) { try io.rename(layout.manifest, to: layout.previousManifest) }
        try io.rename(temporary, to: layout.manifest)
        try io.syncDirectory(layout.directory)
    }

    /// What reading found.
    package enum Outcome: Sendable {
        /// No manifest of any generation: the directory holds no store.
        case missing
        /// The manifest, and a note when it did not come from `MANIFEST` itself.
        case found(Manifest, note: String?)
    }

    /// Reads the current manifest, falling back as the format allows.
    ///
    /// - `MANIFEST` valid: used.
    /// - `MANIFEST` absent and `MANIFEST.tmp` valid: a crash between the renames; the temporary
    ///   file is the newest generation and is used (and promoted when `repair` is true).
    /// - `MANIFEST` damaged or absent and `MANIFEST.prev` valid: used only when no segment newer
    ///   than its last holds frames (`segmentsWithFrames`), so that nothing acknowledged since is
    ///   dropped.
    /// - otherwise the error of `MANIFEST` is thrown (naming the file and offset).
    ///
    /// A reader in another process may look while a writer replaces the manifest: `MANIFEST`
    /// can be renamed away after it was seen, and `MANIFEST.tmp` renamed to `MANIFEST` after
    /// `MANIFEST` was found missing. Each is a replacement that went on, not damage: the read
    /// starts again (up to ``replacementRetries`` times) rather than take `MANIFEST.prev`, a
    /// generation older than one the reader may have seen already.
    package func read(segmentsWithFrames: Set<UInt64>, repair: Bool) throws -> Outcome {
        var primaryError: LogError?
        var attempt = 0
        reading: while true {
            attempt += 1
            let retries = attempt <= Self.replacementRetries
            if io.exists(layout.manifest) {
                do {
                    return .found(try load(layout.manifest), note: nil)
                } catch let error as LogError {
                    if error.code == .unsupportedFormat { throw error }
                    // Renamed away while it was read: a replacement under way.
                    if retries && !io.exists(layout.manifest) { continue reading }
                    primaryError = error
                }
            } else if io.exists(temporary), let manifest = try? load(temporary) {
                if repair {
                    try io.rename(temporary, to: layout.manifest)
                    try io.syncDirectory(layout.directory)
                }
                return .found(manifest, note: "MANIFEST was missing; used the complete MANIFEST.tmp of an interrupted replacement")
            } else if retries && io.exists(layout.manifest) {
                // `MANIFEST.tmp` became `MANIFEST` between the two looks.
                continue reading
            }
            break
        }
        if io.exists(layout.previousManifest), let previous = try? load(layout.previousManifest) {
            let newest = previous.segments.last?.number ?? 0
            if segmentsWithFrames.allSatisfy({ $0 <= newest }) {
                let reason = primaryError.map { "MANIFEST is damaged (\($0)); used MANIFEST.prev" } ?? "MANIFEST was missing; used MANIFEST.prev"
                return .found(previous, note: reason)
            }
        }
        if let primaryError { throw primaryError }
        return .missing
    }

    /// How many times a read starts again when a replacement of the manifest went on under it.
    static let replacementRetries = 8

    /// The numbers of the segment files among `names` that are longer than a segment header
    /// (or cannot be opened to tell): those that may hold frames.
    package static func segmentsHoldingFrames(_ names: [String], layout: StoreLayout, io: any FileIO) -> Set<UInt64> {
        var found = Set<UInt64>()
        for name in names {
            guard let (kind, number) = StoreLayout.parse(name), kind == .segment else { continue }
            guard let file = try? io.open(layout.path(name), mode: .readOnly) else {
                found.insert(number)
                continue
            }
            if (try? io.size(of: file)).map({ $0 > UInt64(SegmentHeader.size) }) ?? true { found.insert(number) }
            io.close(file)
        }
        return found
    }

    private func load(_ path: String) throws -> Manifest {
        try Manifest(decoding: io.readWholeFile(path, limit: Manifest.maximumSize), path: path)
    }
}
