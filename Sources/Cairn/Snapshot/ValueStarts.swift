import CCairnSupport

/// Where each value of a chunk's rows starts, worked out by the chunk's first scan and kept
/// with the chunk, so that later scans read value `i` of a row without walking the values
/// before it (``RowBytes/value(_:)``).
///
/// A chunk reachable from a published snapshot never changes, so its table stays true for as
/// long as the chunk lives; a chunk that changes (only ever while no snapshot can reach it)
/// drops its table. It costs two bytes per value plus four per row, only for chunks that were
/// scanned. Rows of 64 KiB or more, or of more than 255 values, have no entry (scans walk them).
final class ValueStarts: @unchecked Sendable {
    // Safety: written only by `init`; read-only afterwards.
    /// Per slot: where its row's entries start in `starts`, or -1 (no row, or a row walked).
    private let first: UnsafeMutablePointer<Int32>
    /// For each row: the offset of each of its values, then its length (count + 1 entries).
    private let starts: UnsafeMutablePointer<UInt16>
    private let slots: Int

    /// Walks every row of a chunk: `row(slot)` gives its bytes and its number of values.
    init(slots: Int, _ row: (Int) -> (bytes: UnsafeRawBufferPointer, count: Int)?) {
        self.slots = slots
        first = .allocate(capacity: slots)
        first.initialize(repeating: -1, count: slots)
        var total = 0
        for slot in 0..<slots {
            guard let (bytes, count) = row(slot), bytes.count < Int(UInt16.max), count < 256 else { continue }
            first[slot] = Int32(total)
            total += count + 1
        }
        starts = .allocate(capacity: max(total, 1))
        let ahead = 4
        for slot in 0..<slots where first[slot] >= 0 {
            // The row a few slots on starts loading now (each row is read from start to end).
            if slot + ahead < slots, first[slot + ahead] >= 0, let next = row(slot + ahead)?.bytes, let nextBase = next.baseAddress {
                cairn_prefetch(nextBase)
                cairn_prefetch(nextBase + min(next.count - 1, 64))
            }
            guard let (bytes, count) = row(slot), let base = bytes.baseAddress else {
                first[slot] = -1
                continue
            }
            let entries = starts + Int(first[slot])
            let end = bytes.count
            var offset = 0
            for index in 0..<count {
                entries[index] = UInt16(truncatingIfNeeded: offset)
                // The walk's fast sizes, clamped to the row as ``RowBytes/length(_:available:)`` is.
                if offset < end { offset += min(RowBytes.skip(base, offset, end), end - offset) }
            }
            entries[count] = UInt16(truncatingIfNeeded: offset)
        }
    }

    deinit {
        first.deallocate()
        starts.deallocate()
    }

    /// The entries of a slot's row (value starts, then the row's length), or nil when it has none.
    @inline(__always)
    func entries(_ slot: Int) -> UnsafePointer<UInt16>? {
        guard slot >= 0, slot < slots, case let index = first[slot], index >= 0 else { return nil }
        return UnsafePointer(starts + Int(index))
    }
}
