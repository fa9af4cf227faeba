import struct Foundation.UUID

/// What ``Log/followWriter(byteLimit:)`` keeps from one step to the next.
struct FollowState {
    /// The segment being read, and its file.
    var number: UInt64?
    var file: OpenFile?
    /// The writer's last acknowledgement read: one that goes lower is a store that went back.
    var acknowledged: LSN?
}

/// What one step of following a writer found (``Log/followWriter(byteLimit:)``).
package enum FollowStep: Sendable {
    /// The frames the writer acknowledged since the last step (empty: none yet), in LSN order.
    case records([LogRecord])
    /// The frames after this log's last are no longer there: a compaction replaced them with
    /// a base. Open the log again.
    case replaced(String)
    /// Following cannot go on: the store was replaced by another (wiped, created anew) or went
    /// back to an earlier state (restored from a backup). What this log showed is not the
    /// store's past; open the store again.
    case ended(String)
}

extension Log {
    /// For a read-only log whose store another process writes: reads the frames that writer
    /// acknowledged after the last this log holds, up to about `byteLimit` bytes of payload,
    /// and holds them too (``records(from:)`` and ``lastLSN`` include them). Follows the writer
    /// across segment rolls, new compression dictionaries and compactions that keep the frames
    /// after this log's last, and takes up the manifest a compaction installed while the
    /// writer was idle (so that readers and backups of this log read the files now listed).
    ///
    /// A frame after the writer's last acknowledgement (``AcknowledgedFile``) is never read: it
    /// may yet be cut. One step at a time (steps from several threads take turns). A step that
    /// read frames and then met an error returns the frames; the next step meets the error.
    ///
    /// - Throws: ``LogError/Code/invalidArgument`` for a writable log; ``LogError/Code/corruption``
    ///   naming file and offset for a damaged frame the writer acknowledged or a segment that
    ///   does not continue the last; ``LogError/Code/busy`` for a segment shorter than its
    ///   acknowledged frames (a copy under way); I/O errors.
    package func followWriter(byteLimit: Int = LogTuning.followBatchBytes) throws -> FollowStep {
        guard !options.isWritable else { throw LogError(.invalidArgument, "only a read-only log follows a writer", path: directory) }
        return try following.withLock { state in
            var records: [LogRecord] = []
            do {
                return try followStep(&state, byteLimit: byteLimit, into: &records)
            } catch {
                // What was read and held is handed out; the error comes again at the next step.
                guard records.isEmpty else { return .records(records) }
                throw error
            }
        }
    }

    /// Whether the store this log follows has a writer's ``AcknowledgedFile`` (a live store;
    /// not a replica's folder, which a copy writes).
    package var followsAcknowledgements: Bool { following.withLock { $0.acknowledged != nil } }

    /// ``followWriter(byteLimit:)``'s step, under its lock: appends to `records` what it holds.
    private func followStep(_ state: inout FollowState, byteLimit: Int, into records: inout [LogRecord]) throws -> FollowStep {
        let acknowledged = try AcknowledgedFile.read(layout, io)
        var last = appendState.withLock { $0.nextLSN.previous }
        // (Seen once, then gone: a live store whose file is being replaced; wait for it.)
        if acknowledged == nil && state.acknowledged != nil { return .records([]) }
        if let acknowledged {
            guard acknowledged.storeID == storeID else {
                // The writer rewrites the file when it opens the store: until then it may be
                // the last store's. The manifest tells whether this one is still there.
                if let ended = try storeReplaced() { return .ended(ended) }
                return .records([])
            }
            // Lower than both what this log showed and what the writer acknowledged before: the
            // store went back. (Not lower than what it showed: a stale file read at the open,
            // or one left high by a crash that lost what it named, which this log never read.)
            if let seen = state.acknowledged, acknowledged.lsn < min(seen, last) {
                return .ended("the store went back to LSN \(acknowledged.lsn), before LSN \(last) shown (restored from a backup?)")
            }
            state.acknowledged = acknowledged.lsn
            // A live store's segment is never replaced by another file at its path (only a
            // copy does that: a backup restored); a replica's folder, without the file, is.
            if let file = state.file, io.isReplaced(file, at: layout.path(.segment, state.number ?? 0)), io.exists(layout.path(.segment, state.number ?? 0)) {
                return .ended("segment \(state.number ?? 0) was replaced by another file (the store restored from a backup?)")
            }
        }
        // (Without the file, a writer of an earlier build: every complete frame.)
        let bound = acknowledged?.lsn ?? LSN(UInt64.max >> 1)
        guard last < bound else {
            // Nothing new: a compaction may still have replaced the files this log reads.
            guard let extent = appendState.withLock({ $0.extents.last }) else { return .records([]) }
            switch try nextFollowedSegment(after: extent, last: last, scanned: false, live: acknowledged != nil) {
            case .replaced(let why): return .replaced(why)
            case .ended(let why): return .ended(why)
            case .added, .wait: return .records([])
            }
        }
        var bytes = 0
        var reopened = false
        while last < bound && bytes < byteLimit {
            guard var extent = appendState.withLock({ $0.extents.last }) else { break }
            if state.number != extent.segment.number || state.file == nil {
                if let file = state.file { io.close(file) }
                state = FollowState(acknowledged: state.acknowledged)
                do {
                    (state.file, extent.version) = try openSegment(extent)
                    state.number = extent.segment.number
                } catch  where !io.exists(extent.path) {
                    // Gone: a compaction replaced it (the manifest says what holds the
                    // next frame), or, still listed, a copy has yet to bring it.
                    switch try nextFollowedSegment(after: extent, last: last, scanned: false, live: acknowledged != nil) {
                    case .added: continue
                    case .wait:
                        throw LogError(
                            .busy, "the folder is caught between two copies: its manifest names this segment, which is not there (yet); trying again",
                            path: extent.path)
                    case .replaced(let why): return records.isEmpty ? .replaced(why) : .records(records)
                    case .ended(let why): return records.isEmpty ? .ended(why) : .records(records)
                    }
                }
            }
            guard let file = state.file else { break }
            var scanner = FrameScanner(
                io: io, file: file, epoch: extent.segment.epoch, firstLSN: extent.segment.firstLSN, end: try io.size(of: file),
                maximumFrameSize: frameLimit, version: extent.version, buffer: ReadBuffer())
            scanner.resume(at: extent.end, lsn: extent.nextLSN)
            var assembler = RecordAssembler()
            var problem: FrameScanner.Problem?
            do {
                // What was read is held, whatever ends the scan.
                defer { holdFollowed(extent, through: last) }
                scan: while last < bound && bytes < byteLimit {
                    let step = try scanner.next()
                    guard case .frame(let frame) = step, frame.header.lsn <= bound else {
                        if case .invalid(let refused) = step { problem = refused }
                        break scan
                    }
                    let end = frame.offset + UInt64(frame.size)
                    // (A segment taken up after a compaction may start before the next frame.)
                    guard frame.header.lsn > last else {
                        if frame.header.flags.endsRecord { (extent.end, extent.nextLSN) = (end, frame.header.lsn.next) }
                        continue
                    }
                    // (A dictionary the writer trained since this log last read the manifest.)
                    if frame.header.codec == .lz4Dictionary && codec.dictionary(frame.header.dictionaryID) == nil {
                        guard case .found(let manifest, _) = try manifestFile.read(segmentsWithFrames: [], repair: false) else { break scan }
                        try installDictionaries(of: manifest)
                    }
                    // (A record of several frames is held once its last frame is read.)
                    guard let record = try assembler.add(frame, codec, path: extent.path) else { continue }
                    bytes += record.payload.count
                    records.append(record)
                    last = frame.header.lsn
                    (extent.end, extent.nextLSN) = (end, frame.header.lsn.next)
                }
            }
            guard last < bound && bytes < byteLimit else { break }
            // A copy (a backup, rsync) put another file at the path, longer: read on in it
            // (once a step: a path replaced again and again waits for the next).
            if !reopened, io.isReplaced(file, at: extent.path), io.exists(extent.path) {
                reopened = true
                io.close(file)
                state = FollowState(acknowledged: state.acknowledged)
                continue
            }
            // No more frames in this segment now: the next ones may be in a later one.
            switch try nextFollowedSegment(after: extent, last: last, scanned: true, live: acknowledged != nil) {
            case .added: continue
            case .replaced(let why): return records.isEmpty ? .replaced(why) : .records(records)
            case .ended(let why): return records.isEmpty ? .ended(why) : .records(records)
            case .wait:
                // Without the file, every complete frame was read; with it, the writer
                // acknowledged frames this segment does not hold (readably).
                guard acknowledged != nil else { return .records(records) }
                throw try unreadableAcknowledged(extent, problem: problem, scanner: scanner, last: last, bound: bound)
            }
        }
        return .records(records)
    }

    /// The error for frames up to `bound` the writer acknowledged that `extent`'s file, the
    /// segment that must hold them, does not give after LSN `last`: damage (a refused frame
    /// that cannot be a write under way), or a copy that has yet to bring them.
    private func unreadableAcknowledged(
        _ extent: SegmentExtent, problem: FrameScanner.Problem?, scanner: FrameScanner, last: LSN, bound: LSN
    ) throws -> LogError {
        // (The writer writes a frame whole before it acknowledges it: one the file holds whole
        // and that does not check is damage; only a file that ends too soon can be a copy.)
        if let problem, try !problem.isShort || scanner.findValidFrame(after: problem.offset, laterThan: last) != nil {
            return LogError.corruption(
                "\(problem.reason): a frame the writer acknowledged (through LSN \(bound)) is damaged", path: extent.path, offset: problem.offset,
                lsn: last.next)
        }
        return LogError(
            .busy,
            "the writer acknowledged LSN \(bound), but the segment ends after LSN \(last) (offset \(extent.end)): a copy under way? trying again",
            path: extent.path, offset: extent.end, lsn: last.next)
    }

    /// Why following cannot go on when the store's manifest names another store (nil: it is
    /// still this one, or has no manifest just now).
    private func storeReplaced() throws -> String? {
        guard case .found(let manifest, _) = try manifestFile.read(segmentsWithFrames: [], repair: false), manifest.storeID != storeID else {
            return nil
        }
        return "the store was replaced by another (wiped or created anew: store \(manifest.storeID.uuidString.lowercased()))"
    }

    /// Opens a segment to follow, checking its header against the manifest's entry; returns
    /// the file and the header's format version.
    private func openSegment(_ extent: SegmentExtent) throws -> (OpenFile, UInt16) {
        let file = try io.open(extent.path, mode: .readOnly)
        do {
            var header = [UInt8](repeating: 0, count: SegmentHeader.size)
            try header.withUnsafeMutableBytes { try io.readExactly(file, into: $0, at: 0) }
            let decoded = try header.withUnsafeBytes {
                try SegmentHeader(decoding: $0, expected: extent.segment, storeID: storeID, path: extent.path)
            }
            return (file, decoded.version)
        } catch {
            io.close(file)
            throw error
        }
    }

    /// Loads the dictionaries `manifest` lists that this log's codec does not hold yet.
    private func installDictionaries(of manifest: Manifest) throws {
        for dictionary in manifest.dictionaries where codec.dictionary(dictionary.id) == nil {
            let path = layout.path(.dictionary, UInt64(dictionary.id))
            let bytes = try io.readWholeFile(path, limit: CompressionDictionary.maximumSize + 64)
            codec.install(try CompressionDictionary(file: bytes, expected: dictionary, path: path))
        }
    }

    /// Records that this log holds the frames of `extent` up to `last`.
    private func holdFollowed(_ extent: SegmentExtent, through last: LSN) {
        appendState.withLock { state in
            guard let index = state.extents.lastIndex(where: { $0.segment.number == extent.segment.number }) else { return }
            state.extents[index] = extent
            state.nextLSN = max(state.nextLSN, last.next)
            state.writtenLSN = max(state.writtenLSN, last)
            state.durableLSN = max(state.durableLSN, last)
        }
    }

    private enum NextSegment {
        case added
        case wait
        case replaced(String)
        case ended(String)
    }

    /// After the frames of `extent` (the last this log holds, up to `last`): reads the manifest
    /// again, takes up what it changed (a compaction's base and segments, new dictionaries)
    /// and the segment that holds the next frame, when there is one. `scanned`: the frames of
    /// `extent`'s file were read to its end (a sealed segment must then be whole). `live`: the
    /// store has a writer's ``AcknowledgedFile`` (not a replica's folder, which a copy may
    /// leave behind for a while).
    private func nextFollowedSegment(after extent: SegmentExtent, last: LSN, scanned: Bool, live: Bool) throws -> NextSegment {
        guard case .found(let manifest, _) = try manifestFile.read(segmentsWithFrames: [], repair: false) else {
            return .replaced("the store's manifest is gone")
        }
        guard manifest.storeID == storeID else {
            return .ended("the store was replaced by another (wiped or created anew: store \(manifest.storeID.uuidString.lowercased()))")
        }
        let needed = last.next
        guard let holder = manifest.segments.last(where: { $0.firstLSN <= needed }) else {
            return .replaced("a compaction replaced the saves after LSN \(last) with a base (at LSN \(manifest.base?.lastLSN ?? .zero))")
        }
        try installDictionaries(of: manifest)
        // What a compaction replaced is no longer read; what it kept is.
        let listed = Set(manifest.segments.map(\.number))
        appendState.withLock { $0.extents.removeAll { !listed.contains($0.segment.number) && $0.segment.number != extent.segment.number } }
        installedBase.withLock { $0 = manifest.base }
        followedManifest.withLock { $0 = manifest }
        if holder.number == extent.segment.number {
            if scanned && holder.isSealed && extent.end < holder.length {
                let length = (try? io.open(extent.path, mode: .readOnly)).map { file in
                    defer { io.close(file) }
                    return (try? io.size(of: file)) ?? 0
                }
                if !live, let length, length < holder.length {
                    throw LogError(
                        .busy, "the sealed segment is \(length) bytes of its \(holder.length): a copy under way? trying again", path: extent.path,
                        offset: length)
                }
                throw LogError.corruption(
                    "the sealed segment's frames end at offset \(extent.end), before its length \(holder.length)", path: extent.path,
                    offset: extent.end, lsn: needed)
            }
            return .wait
        }
        guard holder.number > extent.segment.number else {
            let why = "segment \(holder.number) holds LSN \(needed), after segment \(extent.segment.number)"
            // An older manifest: a live store went back (restored); a replica's copy is under way.
            if live { return .ended("the store went back: \(why) (restored from a backup?)") }
            throw LogError(.busy, why + ": a copy under way? trying again", path: extent.path)
        }
        appendState.withLock { state in
            state.extents.removeAll { $0.segment.number == extent.segment.number && !listed.contains($0.segment.number) }
            state.extents.append(
                SegmentExtent(
                    segment: holder, path: layout.path(.segment, holder.number), end: UInt64(SegmentHeader.size), nextLSN: holder.firstLSN,
                    // (Read from its header when the follower opens it, before any frame.)
                    version: SegmentHeader.singleFrameVersion))
        }
        return .added
    }
}
