extension Manifest {
    /// Whether this manifest, read after `earlier`, still names every file `earlier` names: the
    /// same store and base, each of its segments and dictionaries. A writer's roll or training
    /// since only adds files; a compaction or a wipe replaces some.
    package func keepsFiles(of earlier: Manifest) -> Bool {
        let segments = Set(self.segments.map(\.number))
        let dictionaries = Set(self.dictionaries.map(\.id))
        return storeID == earlier.storeID && base == earlier.base
            && earlier.segments.allSatisfy { segments.contains($0.number) }
            && earlier.dictionaries.allSatisfy { dictionaries.contains($0.id) }
    }
}

/// The one question every reader of another process's store asks when its files do not read as
/// the manifest it read says they should: did the store change under it?
extension ManifestFile {
    /// The store's manifest now, when it still names every file `earlier` names
    /// (``Manifest/keepsFiles(of:)``); nil when a compaction or a wipe replaced some since, or
    /// the manifest is gone.
    ///
    /// - Throws: the manifest's own errors (damaged, of a newer format).
    package func manifest(keepingFilesOf earlier: Manifest) throws -> Manifest? {
        guard case .found(let now, _) = try read(segmentsWithFrames: [], repair: false), now.keepsFiles(of: earlier) else { return nil }
        return now
    }

    /// Whether the store changed under a reader that read `earlier`: its files replaced (a
    /// compaction, a wipe, the manifest gone), or its maximum frame size raised (a writable open
    /// with a larger limit records it before it writes a frame above the old one). A reader
    /// then reads again (``busy(_:)``) rather than call what it met damage. False when the
    /// manifest now cannot be read (then what the reader met is the store's own).
    package func changedUnderReader(since earlier: Manifest) -> Bool {
        let now: Manifest?
        do { now = try manifest(keepingFilesOf: earlier) } catch { return false }
        guard let now else { return true }
        return now.maximumFrameSize > earlier.maximumFrameSize
    }

    /// The error of a reader whose files changed while it read them (``changedUnderReader(since:)``).
    package func busy(_ cause: LogError? = nil) -> LogError {
        LogError(
            .busy,
            "the store's files were replaced (compacted) or its frame limit raised while they were read; try again"
                + (cause.map { " (\($0.message))" } ?? ""),
            path: layout.directory)
    }
}
