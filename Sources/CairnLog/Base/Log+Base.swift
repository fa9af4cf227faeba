import Glibc
import struct Foundation.Date

/// Compaction's part in the log: writing a base file, and installing it in the manifest in
/// place of the frames it holds.
///
/// The object graph writes the state as of an LSN into a ``BaseWriter`` (from a snapshot of
/// its own, while appends go on), then calls ``installBase(_:stopCutting:)``: one manifest replacement
/// names the base and drops the sealed segments whose frames it holds. That replacement is
/// the commit point. The files it no longer lists (the old base, the dropped segments) are
/// removed after it, or by the next writable open when a crash came first.
extension Log {
    /// Checks that the file system has room for a base of about `expectedBytes` and one more
    /// segment: compaction asks before it starts, so that a full disk stops it with nothing
    /// written.
    ///
    /// - Throws: ``LogError/Code/diskFull`` naming what is needed and what is free.
    public func ensureRoomForBase(expectedBytes: UInt64) throws {
        let needed = expectedBytes.addingReportingOverflow(UInt64(options.segmentSize)).partialValue
        guard let available = io.availableSpace(at: directory), available < needed else { return }
        throw LogError(
            .diskFull,
            "compaction needs about \(needed) bytes (a base of about \(expectedBytes) and one segment of \(options.segmentSize)); "
                + "the file system has \(available) free", path: directory)
    }

    /// A writer for a new base holding the state as of `lastLSN`, which must be an LSN this
    /// log has handed out. One base is written at a time.
    ///
    /// - Throws: ``LogError/Code/readOnly`` for a read-only log; ``LogError/Code/invalidArgument``
    ///   while another base is being written, or for an LSN not yet handed out or older than
    ///   the installed base's; I/O errors.
    public func makeBaseWriter(lastLSN: LSN, level: CompactionLevel) throws -> BaseWriter {
        guard options.isWritable else { throw LogError(.readOnly, "the log was opened read-only", path: directory) }
        let handedOut = appendState.withLock { $0.nextLSN.previous }
        let installed = installedBase.withLock { $0 }
        guard lastLSN <= handedOut, lastLSN >= installed?.lastLSN ?? .zero else {
            throw LogError(
                .invalidArgument, "a base at LSN \(lastLSN) is outside the log (\(installed?.lastLSN ?? .zero)...\(handedOut))", path: directory)
        }
        guard compacting.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            throw LogError(.invalidArgument, "a base is already being written", path: directory)
        }
        do {
            let number = (installed?.number ?? 0) + 1
            guard number <= StoreLayout.largestNumber else {
                throw LogError(.readOnly, "the store has used every base number up to \(StoreLayout.largestNumber)", path: directory)
            }
            return try BaseWriter(
                io: io, layout: layout, header: BaseHeader(storeID: storeID, number: number, lastLSN: lastLSN), level: level,
                step: options.compactionStep
            ) { [weak self] in self?.compacting.store(false, ordering: .releasing) }
        } catch {
            compacting.store(false, ordering: .releasing)
            throw error
        }
    }

    /// The last LSN of the newest sealed segment last written before `date` (every frame up
    /// to it is older than `date`); nil when no sealed segment is that old.
    public func lastLSN(writtenBefore date: Date) -> LSN? {
        let cutoff = date.timeIntervalSince1970
        var found: LSN?
        for extent in appendState.withLock({ $0.extents }) where extent.segment.isSealed {
            var info = stat()
            guard stat(extent.path, &info) == 0 else { break }
            let written = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
            guard written < cutoff else { break }
            found = extent.nextLSN.previous
        }
        return found
    }

    /// Seals the active segment now (when it holds frames) and starts the next one, so that a
    /// base written next can replace every frame written so far.
    ///
    /// - Throws: the roll's failure (the log is then poisoned, as after a failed append).
    public func sealActiveSegment() throws {
        try withWriter { state in
            guard state.frameCount > 0 else { return }
            try failingSafely(&state) { state in
                // Under the writer's lock nothing is being written: the next frame follows the last written.
                try roll(&state, firstLSN: appendState.withLock { $0.writtenLSN.next })
            }
        }
    }

    /// The bytes a base holding the state as of `lastLSN` would replace if installed now: the
    /// installed base and the sealed segments whose every frame it holds (the files
    /// ``installBase(_:stopCutting:)`` removes).
    ///
    /// - Throws: ``LogError/Code/closed`` once the log is closed.
    public func bytesReplaced(byBaseAt lastLSN: LSN) throws -> UInt64 {
        let segments = try withWriter { $0.manifest.segments }
        let dropped = segments.prefix { $0.isSealed && $0.firstLSN.rawValue + $0.frameCount <= lastLSN.next.rawValue }
        return dropped.reduce(baseBytes) { $0 + $1.length }
    }

    /// Gives up a finished base that was not installed: removes its file (no manifest names
    /// it) and lets another base begin.
    public func abandonBase(_ base: WrittenBase) {
        try? io.remove(base.path)
        compacting.store(false, ordering: .releasing)
    }

    /// Makes a finished base part of the store: syncs the frames up to its LSN if they are
    /// not yet durable, then replaces the manifest with one naming the base and without the
    /// sealed segments whose frames all precede it (the commit point). Then removes the files
    /// no longer listed, the old base and those segments, cutting them down first when no one
    /// reads them (``removeReplacedFiles(_:stopCutting:afterFirst:)``); a failure there is left to the next
    /// writable open, which removes them as left-overs. Returns the names it removed.
    ///
    /// - Throws: ``LogError``: I/O errors (the store then stays as it was: the manifest is
    ///   replaced atomically); ``LogError/Code/invalidArgument`` for a base older than the
    ///   installed one.
    ///
    /// `stopCutting` is asked between the steps of cutting a replaced file down (the store is
    /// closing: the files left are only unlinked).
    @discardableResult
    public func installBase(_ base: WrittenBase, stopCutting: () -> Bool = { false }) throws -> [String] {
        // The next base may begin once this one is installed or refused.
        defer { compacting.store(false, ordering: .releasing) }
        if durableLSN < base.lastLSN { try syncWrittenFrames() }
        guard durableLSN >= base.lastLSN else {
            throw LogError(.io, "the frames up to the base's LSN \(base.lastLSN) are not on disk", path: base.path, lsn: base.lastLSN)
        }
        let removable = try withWriter { state -> [String] in
            var manifest = state.manifest
            guard base.lastLSN >= manifest.base?.lastLSN ?? .zero else {
                throw LogError(.invalidArgument, "base at LSN \(base.lastLSN) is older than the installed one", path: base.path)
            }
            let old = manifest.base
            manifest.base = Manifest.Base(number: base.number, lastLSN: base.lastLSN, length: base.length, checksum: base.checksum)
            // Sealed segments whose every frame the base holds.
            let dropped = manifest.segments.prefix { $0.isSealed && $0.firstLSN.rawValue + $0.frameCount <= base.lastLSN.next.rawValue }
            manifest.segments.removeFirst(dropped.count)
            manifest.generation += 1
            try throwIfPoisoned()
            try manifestFile.write(manifest)
            state.manifest = manifest
            installedBase.withLock { $0 = manifest.base }
            let numbers = Set(dropped.map(\.number))
            appendState.withLock { $0.extents.removeAll { numbers.contains($0.segment.number) } }
            var names = dropped.map { StoreLayout.name(.segment, $0.number) }
            if let old, old.number != base.number { names.append(StoreLayout.name(.base, old.number)) }
            return names
        }
        options.compactionStep?(.manifestReplaced)
        let removed = removeReplacedFiles(removable, stopCutting: stopCutting) { options.compactionStep?(.removingOldFiles) }
        if !removed.isEmpty { try? io.syncDirectory(layout.directory) }
        return removed
    }
}
