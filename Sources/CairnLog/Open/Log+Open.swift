import struct Foundation.UUID

/// Opening: the writer or reader lock, the manifest (``readManifest(layout:options:lock:)``),
/// then the recovery of every file it names (``Recovery/run(base:)``).
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
    ///   ``LogError/Code/tornTail`` in ``RecoveryMode/absoluteConsistency``;
    ///   ``LogError/Code/notFound`` when there is no store and none may be created (a directory
    ///   with no file of a store is left as it was, no lock file made); I/O errors.
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
        // An open that may not create a store leaves nothing behind, not even the lock's file,
        // in a directory that holds no file of a store. (One that holds any, a manifest that
        // only `.tmp` or `.prev` keeps, a store that lost its manifest, goes on to be opened or
        // refused with its files named.)
        if writable && !options.createIfMissing, try !io.contentsOfDirectory(layout.directory).contains(where: StoreLayout.isStoreName) {
            throw LogError.noStore(layout)
        }
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

    /// Reads the manifest (creating the store when there is none), then recovers the files it
    /// names (``Recovery``); a read-only open reads them through the files it opened together.
    private static func recover(
        layout: StoreLayout, options: LogOptions, lock: OpenFile?,
        base readBase: ((BaseReader) throws -> Void)?,
        replay: ((LogRecord) throws -> Void)?
    ) throws -> Log {
        let io = options.fileIO
        let read = try readManifest(layout: layout, options: options, lock: lock)
        defer { read.pinned?.release() }
        let (manifest, note) = try manifestOrNewStore(read, layout: layout, options: options)
        // Readers find the reader lock's file from now on (``Log/removeReplacedFiles``).
        if options.isWritable { try ReaderLock.create(layout, io) }
        var recovery = Recovery(
            layout: layout, options: options, io: read.pinned ?? io, lock: lock, names: read.names, manifest: manifest, note: note,
            replay: replay)
        if options.readsAcknowledgedOnly && !options.isWritable, let acknowledged = try acknowledgedAtOpen(layout, io),
            acknowledged.storeID == manifest.storeID
        {
            recovery.acknowledged = acknowledged.lsn
        }
        let log: Log
        do {
            log = try recovery.run(base: readBase)
        } catch let error as LogError
            where read.pinned != nil && error.code != .busy && ManifestFile(layout: layout, io: io).changedUnderReader(since: manifest)
        {
            // A file opened only when reached (past the limit), cut by a writer that could not
            // see this reader, or a frame above the limit this reader read while a writer raised
            // it: the store changed under the read, it is not damaged.
            throw ManifestFile(layout: layout, io: io).busy(error)
        }
        // (A following log's later acknowledgements are checked against the one it opened at.)
        if let acknowledged = recovery.acknowledged { log.following.withLock { $0.acknowledged = acknowledged } }
        log.startSyncThread()
        if options.isWritable {
            do {
                let opened = try AcknowledgedFileWriter.open(layout, io, storeID: log.storeID, lsn: log.lastLSN)
                log.acknowledgedFile.withLock { $0 = opened }
            } catch {
                try? log.closeNow()
                throw error
            }
        }
        return log
    }

    /// What ``AcknowledgedFile`` says for a following open. One that does not read while no
    /// writer has the store (a writer killed before it first wrote the file, a crash that left
    /// it zeroed) is absent: every complete frame is then one no writer will cut; the next
    /// writer rewrites it.
    private static func acknowledgedAtOpen(_ layout: StoreLayout, _ io: any FileIO) throws -> (storeID: UUID, lsn: LSN)? {
        do {
            return try AcknowledgedFile.read(layout, io)
        } catch let error as LogError where error.code == .busy && !writerHoldsLock(layout, io) {
            return nil
        }
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
