/// Appending: LSN assignment, group commit, segment rolls, dictionary training, failures.
///
/// An append compresses its payload on the caller's task, takes the next LSN and queues the
/// frame. If no one is writing, the appender becomes the writer: it takes the whole queue and
/// writes it with one `pwrite` (one per segment when a roll falls inside), and repeats while the
/// queue is not empty. Appenders that arrive meanwhile just queue. Syncing is the sync thread's
/// job (``SyncThread``): it `fdatasync`s everything written so far and acknowledges it, while
/// new frames queue and are written for the next sync. This is group commit: under load, one
/// write and one sync acknowledge many appends, and no cooperative thread waits on the disk.
///
/// A payload larger than ``LogOptions/maximumFrameSize`` is one record of several frames with
/// one LSN (docs/FORMAT.md §4), written together in one segment and acknowledged together once
/// the last is durable: a reader or a reopen sees the whole record or none of it.
extension Log {
    /// Appends one payload as one record (one frame, or several for a payload over the maximum
    /// frame size) and returns its LSN once the record is as durable as
    /// ``LogOptions/durability`` says.
    ///
    /// - Throws: ``LogError`` — ``LogError/Code/io`` or ``LogError/Code/diskFull`` when writing or syncing
    ///   failed (the log is then poisoned or read-only until reopened, and this frame is not in
    ///   the log); ``LogError/Code/poisoned``, ``LogError/Code/readOnly`` or
    ///   ``LogError/Code/closed`` when appends are refused.
    @discardableResult
    public func append(_ payload: [UInt8]) async throws -> LSN {
        let lsn = try submit(payload)
        try await waitUntilAcknowledged(lsn)
        return lsn
    }

    /// Queues a payload as the next frame and returns its LSN at once, without waiting for it
    /// to be acknowledged: a caller that must order its frames (the object graph's saves) takes
    /// the LSN under its own lock, then waits with ``waitUntilAcknowledged(_:)`` outside it.
    /// The frame may already be written when this returns (the caller then wrote the queue).
    public func submit(_ payload: [UInt8]) throws -> LSN {
        try submit(prepare(payload))
    }

    /// Compresses and checksums a payload for ``submit(_:)-(PreparedPayload)``: the costly part
    /// of an append, which needs no LSN, so a caller may do it on another thread while it does
    /// other work. A payload over the maximum frame size is cut into pieces of that size, one
    /// frame each.
    public func prepare(_ payload: [UInt8]) throws -> PreparedPayload {
        let pieceSize = options.maximumFrameSize
        guard payload.count > pieceSize else {
            return PreparedPayload(frames: [payload.withUnsafeBytes { codec.encode($0) }])
        }
        // Each frame's checksum continues the one before: a frame lost, repeated or moved
        // inside a record fails its check.
        var frames: [EncodedPayload] = []
        var chain: UInt32 = 0
        payload.withUnsafeBytes { bytes in
            for start in stride(from: 0, to: bytes.count, by: pieceSize) {
                let piece = codec.encode(UnsafeRawBufferPointer(rebasing: bytes[start..<min(start + pieceSize, bytes.count)]), extending: chain)
                chain = piece.checksum
                frames.append(piece)
            }
        }
        return PreparedPayload(frames: frames)
    }

    /// Queues a prepared payload as the next record and returns its LSN at once, as
    /// ``submit(_:)-([UInt8])`` does.
    public func submit(_ prepared: PreparedPayload) throws -> LSN {
        let frames = prepared.frames
        let (lsn, leads) = try appendState.withLock { state -> (LSN, Bool) in
            try state.checkAcceptingAppends(directory)
            let lsn = state.nextLSN
            guard lsn <= .maximum else {
                throw LogError(.readOnly, "the log has used every LSN up to \(LSN.maximum)", path: directory, lsn: lsn)
            }
            state.nextLSN = lsn.next
            state.pending.append(PendingRecord(lsn: lsn, frames: frames))
            if state.writing { return (lsn, false) }
            state.writing = true
            return (lsn, true)
        }
        if leads { drainQueue() }
        return lsn
    }

    /// Waits until the frame at `lsn` is as durable as ``LogOptions/durability`` says.
    ///
    /// - Throws: the failure that prevented it (the log is then poisoned or read-only).
    public func waitUntilAcknowledged(_ lsn: LSN) async throws {
        try await waitFor(lsn)
        if case .interval(let interval) = options.durability {
            let lagging = appendState.withLock { state in
                state.durableLSN < lsn && ContinuousClock.now - state.lastSync > interval * 2
            }
            if lagging { try syncWrittenFrames() }
        }
    }

    /// Syncs every frame written so far, whatever the durability mode.
    public func sync() async throws {
        try syncWrittenFrames()
    }

    /// Waits until `lsn` is acknowledged, or throws the failure that prevents it.
    func waitFor(_ lsn: LSN) async throws {
        let durability = options.durability
        if let outcome = appendState.withLock({ $0.outcome(of: lsn, durability) }) { return try outcome.get() }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let outcome = appendState.withLock { state -> Result<Void, LogError>? in
                if let outcome = state.outcome(of: lsn, durability) { return outcome }
                state.waiters.append(Waiter(lsn: lsn, continuation: continuation))
                return nil
            }
            if let outcome { continuation.resume(with: outcome.mapError { $0 as any Error }) }
        }
    }

    /// Writes the queue until it is empty (the caller is the leader).
    private func drainQueue() {
        while true {
            let batch = appendState.withLock { state -> [PendingRecord] in
                guard !state.pending.isEmpty, state.failure == nil else {
                    state.writing = false
                    state.pending.removeAll()
                    return []
                }
                defer { state.pending = [] }
                return state.pending
            }
            if batch.isEmpty { return }
            do {
                try withWriter { state in
                    try failingSafely(&state) { try write(batch, &$0) }
                }
            } catch {
                poison(with: error as? LogError ?? LogError(.io, "\(error)", path: directory))
                return
            }
            if options.durability == .always { syncThread.withLock { $0?.signal() } }
        }
    }

    /// Runs `body` with the writer state; throws when the log is closed.
    func withWriter<R>(_ body: (inout WriterState) throws -> R) throws -> R {
        try writer.withLock { slot in
            guard var state = slot else { throw LogError(.closed, "the log is closed", path: directory) }
            slot = nil
            defer { slot = state }
            return try body(&state)
        }
    }

    /// Runs a step of the writer (a write, a roll). Whatever failed (a write, the roll's sync,
    /// a new segment, a dictionary, the manifest), frames written since the last
    /// acknowledgement are cut: their appends throw, so they must not reappear after a reopen.
    /// Poisoned first, so that no sync finishing meanwhile acknowledges them.
    func failingSafely(_ state: inout WriterState, _ step: (inout WriterState) throws -> Void) throws {
        do {
            try step(&state)
        } catch {
            poison(with: error as? LogError ?? LogError(.io, "\(error)", path: directory))
            cutBackToAcknowledged(&state)
            throw error
        }
    }

    /// Writes a batch, rolling to a new segment where the active one would pass its size, and
    /// before a record of several frames when the active segment's version cannot hold one. A
    /// record's frames all go in one segment.
    private func write(_ batch: [PendingRecord], _ state: inout WriterState) throws {
        var buffer = state.buffer
        buffer.removeAll(keepingCapacity: true)
        defer { state.buffer = buffer.capacity > LogTuning.writeBufferKept ? [] : buffer }
        var chunkEnd = LSN.zero
        var chunkRecords: UInt64 = 0
        var epoch = state.manifest.segments[state.manifest.segments.count - 1].epoch
        for record in batch {
            let size = record.frames.reduce(0) { $0 + UInt64(FrameHeader.size + $1.bytes.count) }
            let used = state.length + UInt64(buffer.count)
            let needsVersion = record.frames.count > 1 && state.segmentVersion < SegmentHeader.multiFrameVersion
            if needsVersion || (used + size > UInt64(options.segmentSize) && used > UInt64(SegmentHeader.size)) {
                try throwIfPoisoned()
                try writeChunk(&buffer, records: chunkRecords, through: chunkEnd, &state)
                chunkRecords = 0
                try roll(
                    &state, firstLSN: record.lsn,
                    version: record.frames.count > 1 ? SegmentHeader.multiFrameVersion : SegmentHeader.singleFrameVersion)
                epoch = state.manifest.segments[state.manifest.segments.count - 1].epoch
            }
            appendRecord(record, epoch: epoch, to: &buffer)
            chunkEnd = record.lsn
            chunkRecords += 1
        }
        try throwIfPoisoned()
        try writeChunk(&buffer, records: chunkRecords, through: chunkEnd, &state)
        if codec.currentDictionary == nil, let bytes = codec.trainIfReady() {
            var manifest = state.manifest
            if let dictionary = try addDictionary(bytes, to: &manifest) {
                manifest.generation += 1
                try manifestFile.write(manifest)
                state.manifest = manifest
                codec.install(dictionary)
            }
        }
    }

    /// Appends a record's frames to `buffer`: each but the last says more follow, each but the
    /// first that it continues the one before (``FrameFlags``).
    private func appendRecord(_ record: PendingRecord, epoch: UInt32, to buffer: inout [UInt8]) {
        for (index, payload) in record.frames.enumerated() {
            var flags: FrameFlags = []
            if index > 0 { flags.insert(.continuation) }
            if index < record.frames.count - 1 { flags.insert(.continues) }
            let header = FrameHeader(
                lsn: record.lsn, epoch: epoch, storedLength: UInt32(payload.bytes.count),
                rawLength: payload.rawLength, dictionaryID: payload.dictionaryID, codec: payload.codec, flags: flags)
            let start = buffer.count
            buffer.append(contentsOf: repeatElement(0, count: FrameHeader.size))
            buffer.withUnsafeMutableBytes { raw in
                header.write(
                    to: UnsafeMutableRawBufferPointer(rebasing: raw[start..<(start + FrameHeader.size)]),
                    payloadChecksum: payload.checksum)
            }
            buffer.append(contentsOf: payload.bytes)
        }
    }

    /// Writes the buffered `records` (LSNs up to `last`) at the end of the active segment and
    /// publishes them as written. On failure the caller cuts the segment back to its last
    /// acknowledged frame.
    private func writeChunk(_ buffer: inout [UInt8], records: UInt64, through last: LSN, _ state: inout WriterState) throws {
        guard !buffer.isEmpty else { return }
        let start = state.length
        let file = state.segment.file
        try buffer.withUnsafeBytes { try io.writeAll(file, $0, at: start) }
        state.length = start + UInt64(buffer.count)
        state.frameCount += records
        buffer.removeAll(keepingCapacity: true)
        let target = SyncTarget(segment: state.segment, lsn: last, end: state.length)
        appendState.withLock { $0.syncTarget = target }
        publish(target, synced: false)
        unsyncedWrites.store(true, ordering: .releasing)
    }

    /// Records progress and resumes the appends it completes.
    private func publish(_ target: SyncTarget, synced: Bool) {
        let durability = options.durability
        let (ready, acknowledged) = appendState.withLock { state -> ([Waiter], LSN?) in
            // After a failure nothing more is acknowledged: the writer is cutting the frames
            // that were not acknowledged before it, and their appends have been told they failed.
            guard state.failure == nil else { return ([], nil) }
            state.writtenLSN = max(state.writtenLSN, target.lsn)
            if synced {
                state.durableLSN = max(state.durableLSN, target.lsn)
                state.lastSync = .now
            }
            if target.lsn <= state.acknowledged(for: durability),
                let index = state.extents.lastIndex(where: { $0.segment.number == target.segment.number })
            {
                state.extents[index].end = max(state.extents[index].end, target.end)
                state.extents[index].nextLSN = max(state.extents[index].nextLSN, target.lsn.next)
            }
            return (state.takeSatisfiedWaiters(durability), state.acknowledged(for: durability))
        }
        // Followers in other processes learn of it before the appends return.
        if let acknowledged { acknowledgedFile.withLock { $0?.write(acknowledged, io) } }
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Syncs the active segment, seals it, and starts the next one at `firstLSN`, of format
    /// `version` (``SegmentHeader/multiFrameVersion`` for a record of several frames).
    func roll(_ state: inout WriterState, firstLSN: LSN, version: UInt16 = SegmentHeader.singleFrameVersion) throws {
        // The manifest is about to say the segment is sealed at this length: make it so on disk.
        let written = SyncTarget(segment: state.segment, lsn: firstLSN.previous, end: state.length)
        try syncAndAcknowledge(written)
        guard state.manifest.nextSegmentNumber <= StoreLayout.largestNumber else {
            throw LogError(.readOnly, "the store has used every segment number up to \(StoreLayout.largestNumber)", path: directory)
        }

        var manifest = state.manifest
        let activeIndex = manifest.segments.count - 1
        manifest.segments[activeIndex].isSealed = true
        manifest.segments[activeIndex].length = state.length
        manifest.segments[activeIndex].frameCount = state.frameCount
        let sealed = manifest.segments[activeIndex]

        let segment = Manifest.Segment(
            number: manifest.nextSegmentNumber, epoch: Self.newEpoch(), firstLSN: firstLSN,
            isSealed: false, length: 0, frameCount: 0)
        let handle = SegmentHandle(file: try createSegmentFile(segment, version: version), number: segment.number, io: io)
        // The new file's directory entry is durable before any manifest names it.
        try io.syncDirectory(layout.directory)
        var installed: CompressionDictionary?
        // Retrain at rolls of segments large enough that a new dictionary file (up to 64 KiB)
        // is a small cost beside them.
        if state.length >= UInt64(options.dictionaryTraining.retrainingSegmentSize), let bytes = codec.trainIfReady() {
            installed = try addDictionary(bytes, to: &manifest)
        }
        manifest.segments.append(segment)
        manifest.generation += 1
        // A sync that failed meanwhile (on the sync thread) must not see its frames sealed.
        try throwIfPoisoned()
        try manifestFile.write(manifest)
        state.manifest = manifest
        state.segment = handle
        state.length = UInt64(SegmentHeader.size)
        state.frameCount = 0
        state.segmentVersion = version
        if let installed { codec.install(installed) }
        let path = layout.path(.segment, segment.number)
        appendState.withLock { shared in
            shared.extents[shared.extents.count - 1].segment = sealed
            shared.extents.append(
                SegmentExtent(segment: segment, path: path, end: UInt64(SegmentHeader.size), nextLSN: firstLSN, version: version))
        }
    }

    /// Creates a segment file of format `version` with its header, synced, open for writing.
    func createSegmentFile(_ segment: Manifest.Segment, version: UInt16) throws -> OpenFile {
        let path = layout.path(.segment, segment.number)
        if io.exists(path) {
            // Only a frameless file (an earlier roll interrupted before any frame) is replaced;
            // one that holds more came from elsewhere and is not Cairn's to delete.
            guard
                !ManifestFile.segmentsHoldingFrames([StoreLayout.name(.segment, segment.number)], layout: layout, io: io)
                    .contains(segment.number)
            else {
                throw LogError.corruption("a segment file the manifest does not list is in the way of the next segment", path: path)
            }
            try io.remove(path)
        }
        let file = try io.open(path, mode: .createNew)
        do {
            let header = SegmentHeader(
                epoch: segment.epoch, number: segment.number, firstLSN: segment.firstLSN, storeID: storeID, version: version)
            try header.encoded().withUnsafeBytes { try io.writeAll(file, $0, at: 0) }
            try io.fullSync(file)
        } catch {
            io.close(file)
            throw error
        }
        return file
    }

    /// Writes a dictionary file and lists it in `manifest` (which the caller writes). Returns
    /// nil when every dictionary id is taken.
    private func addDictionary(_ bytes: [UInt8], to manifest: inout Manifest) throws -> CompressionDictionary? {
        let highest = manifest.dictionaries.map(\.id).max() ?? 0
        guard highest < UInt16.max, !bytes.isEmpty else { return nil }
        let dictionary = CompressionDictionary(id: highest + 1, bytes: bytes)
        try io.replaceAtomically(
            layout.path(.dictionary, UInt64(dictionary.id)), directory: layout.directory,
            with: dictionary.fileContents())
        manifest.dictionaries.append(
            Manifest.Dictionary(
                id: dictionary.id, length: UInt32(dictionary.count),
                checksum: dictionary.checksum))
        return dictionary
    }

    /// Syncs the newest written frame's segment and acknowledges what the sync covers. On
    /// failure the log is poisoned and the active segment cut back to its last acknowledged
    /// frame (a failed `fdatasync` is never retried: Linux may have dropped the dirty pages).
    func syncWrittenFrames() throws {
        unsyncedWrites.store(false, ordering: .releasing)
        let target = appendState.withLock { state -> SyncTarget? in
            guard let target = state.syncTarget, target.lsn > state.durableLSN, state.failure == nil else { return nil }
            return target
        }
        guard let target else { return }
        do {
            try syncAndAcknowledge(target)
        } catch {
            // Poisoned already: cut whatever the active segment holds past its last
            // acknowledged frame (the writer may have rolled since the target was taken).
            try? withWriter { cutBackToAcknowledged(&$0) }
            throw error
        }
    }

    /// Syncs `target`'s segment and acknowledges what the sync covers, one sync at a time
    /// (``syncOrder``). Throws, without syncing, when the log is already poisoned; poisons it
    /// when the sync fails.
    private func syncAndAcknowledge(_ target: SyncTarget) throws {
        syncOrder.lock()
        defer { syncOrder.unlock() }
        try throwIfPoisoned()
        do {
            try io.sync(target.segment.file)
        } catch {
            let failure = error as? LogError ?? LogError(.io, "\(error)", path: target.segment.file.path)
            poison(with: failure)
            throw failure
        }
        publish(target, synced: true)
    }

    /// Throws the failure that poisoned the log, if any.
    func throwIfPoisoned() throws {
        if let failure = appendState.withLock({ $0.failure }) { throw failure }
    }

    /// After a failure (the log is poisoned): cuts the active segment back to the end of its
    /// last acknowledged frame and syncs the cut, best effort (the frames after it were never
    /// acknowledged; the next open cuts any torn rest).
    private func cutBackToAcknowledged(_ state: inout WriterState) {
        let number = state.segment.number
        let file = state.segment.file
        guard let end = appendState.withLock({ $0.extents.last(where: { $0.segment.number == number })?.end }) else { return }
        let size = (try? io.size(of: file)) ?? state.length
        guard end < max(state.length, size) else { return }
        if (try? io.truncate(file, to: end)) != nil {
            state.length = end
        } else {
            // The cut failed: overwrite what follows the last acknowledged frame with zeros,
            // so that the next open takes it for a torn tail (saved to a side file and cut)
            // rather than for frames.
            let zeros = [UInt8](repeating: 0, count: LogTuning.zeroFillChunkSize)
            var offset = end
            while offset < max(state.length, size) {
                let count = Int(min(UInt64(zeros.count), max(state.length, size) - offset))
                guard (try? zeros.withUnsafeBytes({ try io.writeAll(file, UnsafeRawBufferPointer(rebasing: $0[0..<count]), at: offset) })) != nil else { break }
                offset += UInt64(count)
            }
        }
        try? io.fullSync(file)
    }

    /// Refuses all further appends and fails every waiting one with `error`.
    private func poison(with error: LogError) {
        let waiting = appendState.withLock { state -> [Waiter] in
            if state.failure == nil { state.failure = error }
            state.writing = false
            state.pending.removeAll()
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiting { waiter.continuation.resume(throwing: error) }
    }

    /// A random, non-zero segment epoch.
    static func newEpoch() -> UInt32 { UInt32.random(in: 1...UInt32.max) }
}

/// A payload compressed and checksummed by ``Log/prepare(_:)``, ready to be submitted: the
/// frames of one record.
public struct PreparedPayload: Sendable {
    let frames: [EncodedPayload]
}
