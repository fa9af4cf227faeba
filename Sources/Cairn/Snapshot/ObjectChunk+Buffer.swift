/// How a chunk's row buffer grows and is compacted: rows are appended to the buffer while the
/// chunk alone holds it; a shared buffer is replaced by a copy (of all its bytes, or of its live
/// rows when its garbage is more than a quarter of its live bytes); a chunk that fills gives
/// back the room its buffer grew by.
extension ObjectChunk {
    /// Shrinks the buffer to its live rows, when this chunk alone holds it.
    func trim() {
        guard isKnownUniquelyReferenced(&buffer), buffer.room > 0 || garbage > 0 else { return }
        let fresh = RowStorage.make(capacity: buffer.used - garbage)
        copyLiveRows(into: fresh)
    }

    /// Copies the live rows into `fresh`, which becomes the buffer.
    private func copyLiveRows(into fresh: RowStorage) {
        buffer.withBytes { old in
            for slot in entries.indices {
                guard let entry = entries[slot], entry.start != .max else { continue }
                let range = Int(entry.start)..<(Int(entry.start) + Int(entry.length))
                let start = fresh.append(UnsafeRawBufferPointer(rebasing: old[range])) ?? 0
                entries[slot]?.start = UInt32(start)
            }
        }
        buffer = fresh
        garbage = 0
    }

    /// The buffer, made this chunk's alone and with `room` free bytes: a shared buffer (a
    /// published snapshot or a reader still holds rows of it) is replaced by a copy of all its
    /// bytes, or of its live rows when its garbage is more than a quarter of them; a full one
    /// that is mostly garbage by a copy of its live rows.
    func writableBuffer(room: Int) -> RowStorage {
        let shared = !isKnownUniquelyReferenced(&buffer)
        if !shared && buffer.room >= room { return buffer }
        let liveBytes = buffer.used - garbage
        if shared || garbage > liveBytes {
            // A save usually changes a few rows of a chunk: a little room, grown if needed.
            let growth = room + max(Tuning.smallestBufferGrowth, liveBytes / 8)
            if garbage <= liveBytes / 4 {
                // Little garbage (the usual shared buffer): one copy of all the bytes, rows
                // stay where they are (copying row by row costs several times more).
                let copy = RowStorage.make(capacity: buffer.used + growth)
                buffer.withBytes { old in _ = copy.append(old) }
                buffer = copy
            } else {
                // Mostly garbage: copy the live rows only.
                copyLiveRows(into: RowStorage.make(capacity: liveBytes + growth))
            }
            return buffer
        }
        // Unique but full: grow (by half, at least what is needed). A chunk's first row sizes
        // the buffer for a chunk of rows like it, so that replay fills it without copies
        // (a chunk that fills up gives the rest back, see `trim`).
        let growth =
            live == 0 && buffer.used == 0
            ? min(room * Tuning.objectChunkSize * 5 / 4, Tuning.largestFirstChunkBuffer) : max(room, buffer.used / 2, Tuning.smallestBufferGrowth)
        let grown = RowStorage.make(capacity: buffer.used + growth)
        buffer.withBytes { old in _ = grown.append(old) }
        buffer = grown
        return buffer
    }
}
