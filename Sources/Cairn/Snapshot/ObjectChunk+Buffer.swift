/// How a chunk's row buffers grow and are compacted: rows are appended to the buffer while the
/// chunk alone holds it (replay and inserts fill it, growing it as needed); rows stored while
/// it is shared with an older snapshot go to the small overflow buffer instead, which is copied
/// when it is shared in turn (a save replacing a few rows of a chunk copies a few rows, not the
/// chunk's bytes); once the garbage of the two passes a quarter of their live bytes, the live
/// rows are compacted into one new buffer. A chunk that fills gives back the room its buffer
/// grew by.
extension ObjectChunk {
    /// Puts the live rows in one buffer of their size: when this chunk alone holds a buffer
    /// with room (more than the allocator's rounding: a 32nd of its bytes) or garbage, or when
    /// it has an overflow buffer (a chunk filled save by save, while its buffer was shared, has
    /// most of its rows there).
    func trim() {
        let spare = buffer.room > buffer.used / 32 || garbage > 0
        guard overflow != nil || (spare && isKnownUniquelyReferenced(&buffer)) else { return }
        copyLiveRows(into: RowStorage.make(capacity: liveBytes))
    }

    /// Bytes of the live rows in the two buffers.
    private var liveBytes: Int { buffer.used + (overflow?.used ?? 0) - garbage }

    /// Bytes of every live row of the chunk, long ones included.
    var rowBytes: Int { large.values.reduce(liveBytes) { $0 + $1.length } }

    /// Copies the live rows of both buffers into `fresh`, which becomes the buffer (the chunk
    /// then has no overflow buffer and no garbage).
    private func copyLiveRows(into fresh: RowStorage) {
        let spill = overflow ?? RowStorage.make(capacity: 0)
        buffer.withBytes { main in
            spill.withBytes { extra in
                for slot in entries.indices {
                    guard let entry = entries[slot] else { continue }
                    let source: UnsafeRawBufferPointer, start: Int
                    switch entry.place {
                    case .buffer(let at): (source, start) = (main, at)
                    case .overflow(let at): (source, start) = (extra, at)
                    case .large: continue
                    }
                    let end = min(source.count, start + Int(entry.length))
                    let copied = fresh.append(UnsafeRawBufferPointer(rebasing: source[min(start, end)..<end])) ?? 0
                    entries[slot]?.start = UInt32(truncatingIfNeeded: copied)
                }
            }
        }
        buffer = fresh
        overflow = nil
        garbage = 0
    }

    /// Sizes the buffer of a chunk that holds no row yet for the rows about to fill it (length,
    /// entity and value count of each; the long ones keep buffers of their own), so that a chunk
    /// replay or a large save fills in one run is neither grown nor trimmed: its rows are
    /// copied once. (A chunk filled a few rows at a time grows by `writableStorage`'s rule.)
    func reserveFirstRows<Rows: Sequence<(length: Int, entity: Int, count: Int)>>(_ rows: Rows) {
        guard live == 0, buffer.used == 0, overflow == nil, isKnownUniquelyReferenced(&buffer) else { return }
        var bytes = 0
        for row in rows where Self.fitsBuffer(length: row.length, entity: row.entity, count: row.count) { bytes += row.length }
        if bytes > buffer.room { buffer = RowStorage.make(capacity: bytes) }
    }

    /// Where a row of `room` bytes goes, made this chunk's alone with room for it: the buffer
    /// (`false`) while this chunk alone holds it; else the overflow buffer (`true`), a copy of
    /// it when it is shared or full; or, once the garbage is more than a quarter of the live
    /// bytes or the overflow buffer would pass a quarter of the buffer (rows inserted save by
    /// save leave no garbage), a new buffer holding the live rows of both.
    func writableStorage(room: Int) -> (RowStorage, Bool) {
        let shared = !isKnownUniquelyReferenced(&buffer)
        if !shared && buffer.room >= room { return (buffer, false) }
        if !shared && overflow == nil && garbage <= liveBytes / 4 {
            // A chunk filling (replay, inserts): its buffer grows by half, at least what is
            // needed. A chunk's first row sizes the buffer for a chunk of rows like it, so that
            // replay fills it without copies (a chunk that fills gives the rest back: `trim`).
            let growth =
                live == 0 && buffer.used == 0
                ? min(room * Tuning.objectChunkSize * 5 / 4, Tuning.largestFirstChunkBuffer)
                : max(room, buffer.used / 2, Tuning.smallestBufferGrowth)
            let grown = RowStorage.make(capacity: buffer.used + growth)
            buffer.withBytes { old in _ = grown.append(old) }
            buffer = grown
            return (buffer, false)
        }
        // (Checked before a second reference to the overflow buffer is taken.)
        if isKnownUniquelyReferenced(&overflow), let current = overflow, current.room >= room { return (current, true) }
        // A save usually changes a few rows of a chunk: a little room, grown if needed.
        let growth = room + max(Tuning.smallestBufferGrowth, liveBytes / 8)
        if garbage > liveBytes / 4 || (overflow?.used ?? 0) + room > buffer.used / 4 {
            copyLiveRows(into: RowStorage.make(capacity: liveBytes + growth))
            return (buffer, false)
        }
        let used = overflow?.used ?? 0
        let copy = RowStorage.make(capacity: used + growth)
        overflow?.withBytes { old in _ = copy.append(old) }
        overflow = copy
        return (copy, true)
    }
}
