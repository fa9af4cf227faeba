import struct Foundation.UUID

/// Where a following read-only log reads next (``Log/followWriter(byteLimit:)``).
struct FollowPosition {
    /// The segment being read, and its file.
    var number: UInt64
    var file: OpenFile
}

/// What one step of following a writer found (``Log/followWriter(byteLimit:)``).
package enum FollowStep: Sendable {
    /// The frames the writer acknowledged since the last step (empty: none yet), in LSN order.
    case records([LogRecord])
    /// The frames after this log's last are no longer there: a compaction replaced them with
    /// a base, or the store was wiped. Open the log again.
    case replaced(String)
}

extension Log {
    /// For a read-only log whose store another process writes: reads the frames that writer
    /// acknowledged after the last this log holds, up to about `byteLimit` bytes of payload,
    /// and holds them too (``records(from:)`` and ``lastLSN`` include them). Follows the writer
    /// across segment rolls, new compression dictionaries and compactions that keep the frames
    /// after this log's last.
    ///
    /// A frame after the writer's last acknowledgement (``AcknowledgedFile``) is never read: it
    /// may yet be cut. One step at a time (steps from several threads take turns).
    ///
    /// - Throws: ``LogError/Code/invalidArgument`` for a writable log; ``LogError/Code/corruption``
    ///   naming file and offset for a damaged frame of a sealed segment or a segment that does
    ///   not continue the last; I/O errors.
    package func followWriter(byteLimit: Int = LogTuning.followBatchBytes) throws -> FollowStep {
        guard !options.isWritable else { throw LogError(.invalidArgument, "only a read-only log follows a writer", path: directory) }
        let acknowledged = AcknowledgedFile.read(layout, io)
        if let acknowledged, acknowledged.storeID != storeID {
            return .replaced("the store was replaced by another (wiped or created anew: store \(acknowledged.storeID))")
        }
        // (Without the file, a writer of an earlier build: every complete frame.)
        let bound = acknowledged?.lsn ?? LSN(UInt64.max >> 1)
        return try following.withLock { position in
            var records: [LogRecord] = []
            var bytes = 0
            var last = appendState.withLock { $0.nextLSN.previous }
            while last < bound && bytes < byteLimit {
                guard var extent = appendState.withLock({ $0.extents.last }) else { break }
                if position?.number != extent.segment.number {
                    if let file = position?.file { io.close(file) }
                    position = nil
                    do {
                        position = FollowPosition(number: extent.segment.number, file: try openSegment(extent))
                    } catch  where !io.exists(extent.path) {
                        // Gone: a compaction replaced it (the manifest says what holds the
                        // next frame), or, still listed, a copy has yet to bring it.
                        switch try nextFollowedSegment(after: extent, last: last) {
                        case .added: continue
                        case .wait: throw error
                        case .replaced(let why): return records.isEmpty ? .replaced(why) : .records(records)
                        }
                    }
                }
                guard let file = position?.file else { break }
                var scanner = FrameScanner(
                    io: io, file: file, epoch: extent.segment.epoch, firstLSN: extent.segment.firstLSN, end: try io.size(of: file),
                    maximumFrameSize: frameLimit, buffer: ReadBuffer())
                scanner.resume(at: extent.end, lsn: extent.nextLSN)
                scan: while last < bound && bytes < byteLimit {
                    guard case .frame(let frame) = try scanner.next(), frame.header.lsn <= bound else { break scan }
                    extent.end = frame.offset + UInt64(frame.size)
                    extent.nextLSN = frame.header.lsn.next
                    // (A segment taken up after a compaction may start before the next frame.)
                    guard frame.header.lsn > last else { continue }
                    // (A dictionary the writer trained since this log last read the manifest.)
                    if frame.header.codec == .lz4Dictionary && codec.dictionary(frame.header.dictionaryID) == nil {
                        guard case .found(let manifest, _) = try manifestFile.read(segmentsWithFrames: [], repair: false) else { break scan }
                        try installDictionaries(of: manifest)
                    }
                    let record = try codec.record(from: frame, path: extent.path)
                    bytes += record.payload.count
                    records.append(record)
                    last = frame.header.lsn
                }
                holdFollowed(extent, through: last)
                guard last < bound && bytes < byteLimit else { break }
                // A copy (a backup, rsync) replaced the file read with a longer one: read on in
                // the file now at its path.
                if let file = position?.file, (try? io.linkCount(of: file)) == 0, io.exists(extent.path) {
                    io.close(file)
                    position = nil
                    continue
                }
                // No more frames in this segment now: the next ones may be in a later one.
                switch try nextFollowedSegment(after: extent, last: last) {
                case .added: continue
                case .wait: return .records(records)
                case .replaced(let why): return records.isEmpty ? .replaced(why) : .records(records)
                }
            }
            return .records(records)
        }
    }

    /// Opens a segment to follow, checking its header against the manifest's entry.
    private func openSegment(_ extent: SegmentExtent) throws -> OpenFile {
        let file = try io.open(extent.path, mode: .readOnly)
        do {
            var header = [UInt8](repeating: 0, count: SegmentHeader.size)
            try header.withUnsafeMutableBytes { try io.readExactly(file, into: $0, at: 0) }
            _ = try header.withUnsafeBytes { try SegmentHeader(decoding: $0, expected: extent.segment, storeID: storeID, path: extent.path) }
            return file
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
    }

    /// After the frames of `extent` (the last this log holds, up to `last`): reads the manifest
    /// again and takes up the segment that holds the next frame, when there is one.
    private func nextFollowedSegment(after extent: SegmentExtent, last: LSN) throws -> NextSegment {
        guard case .found(let manifest, _) = try manifestFile.read(segmentsWithFrames: [], repair: false) else {
            return .replaced("the store's manifest is gone")
        }
        guard manifest.storeID == storeID else { return .replaced("the store was replaced by another (store \(manifest.storeID))") }
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
            if holder.isSealed && extent.end < holder.length {
                throw LogError.corruption(
                    "the sealed segment's frames end at offset \(extent.end), before its length \(holder.length)", path: extent.path,
                    offset: extent.end, lsn: needed)
            }
            return .wait
        }
        guard holder.number > extent.segment.number else {
            throw LogError.corruption("segment \(holder.number) holds LSN \(needed), after segment \(extent.segment.number)", path: extent.path)
        }
        appendState.withLock { state in
            state.extents.removeAll { $0.segment.number == extent.segment.number && !listed.contains($0.segment.number) }
            state.extents.append(
                SegmentExtent(
                    segment: holder, path: layout.path(.segment, holder.number), end: UInt64(SegmentHeader.size), nextLSN: holder.firstLSN))
        }
        return .added
    }
}
