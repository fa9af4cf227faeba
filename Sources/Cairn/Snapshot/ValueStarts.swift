import CCairnSupport

/// Where each value of a chunk's rows starts, so that a scan reads value `i` of a row without
/// walking the values before it (``RowBytes/value(_:)``): what the header of an SQLite record
/// gives, kept beside the rows instead of in them.
///
/// Made when replay or a save fills a chunk (its rows are still in the cache then), when a full
/// chunk is loaded from a base (in the walk that checks its rows), or by the first scan of a
/// chunk that has none. A chunk reachable from a published snapshot never
/// changes, so its table stays true for as long as the chunk lives; a chunk whose row is
/// replaced or removed (only ever while no snapshot can reach it) drops its table, and a row
/// added to a chunk after its table was made has no entry (scans walk it). An entry is one byte
/// per value and one for the row's end when all the chunk's rows are shorter than 255 bytes,
/// two bytes each otherwise; rows of 64 KiB or more, or of 255 values or more, have none.
final class ValueStarts: @unchecked Sendable {
    // Safety: written only while it is made (by `init`, or by the one thread that loads a
    // base's chunk, through ``writableEntries(_:)``, before the chunk is shared); read-only
    // afterwards.
    /// Per slot: the index of its row's first entry in `starts`, or `.max` (no entry).
    private let first: UnsafeMutablePointer<UInt16>
    /// For each row with an entry: the offset of each of its values, then its length.
    private let starts: UnsafeMutableRawPointer
    private let slots: Int
    /// How many entries the table holds, every slot's.
    private let total: Int
    /// Whether entries take two bytes (a row of the chunk is 255 bytes or longer).
    let wide: Bool

    /// A table laid out for a chunk's rows, `row(slot)` giving a row's length and number of
    /// values (nil: no row); the entries are left for the maker to write
    /// (``writableEntries(_:)``).
    init(slots: Int, layout row: (Int) -> (length: Int, count: Int)?) {
        self.slots = slots
        first = .allocate(capacity: slots)
        first.initialize(repeating: .max, count: slots)
        var total = 0
        var longest = 0
        // At most 256 slots of at most 255 entries each: every index fits below `.max`.
        for slot in 0..<min(slots, 256) {
            guard let (length, count) = row(slot), length < Int(UInt16.max), count < 255 else { continue }
            first[slot] = UInt16(total)
            total += count + 1
            longest = max(longest, length)
        }
        wide = longest >= 255
        self.total = total
        starts = .allocate(byteCount: max(total, 1) * (wide ? 2 : 1), alignment: 2)
    }

    /// Walks every row of a chunk: `row(slot)` gives its bytes and its number of values.
    convenience init(slots: Int, _ row: (Int) -> (bytes: UnsafeRawBufferPointer, count: Int)?) {
        self.init(slots: slots) { slot in row(slot).map { ($0.bytes.count, $0.count) } }
        let ahead = 4
        for slot in 0..<min(slots, 256) {
            guard let entries = writableEntries(slot) else { continue }
            // The row a few slots on starts loading now (each row is read from start to end).
            if slot + ahead < slots, let next = row(slot + ahead)?.bytes, let nextBase = next.baseAddress {
                cairn_prefetch(nextBase)
                cairn_prefetch(nextBase + min(next.count - 1, 64))
            }
            guard let (bytes, count) = row(slot), let base = bytes.baseAddress else {
                first[slot] = .max
                continue
            }
            let end = bytes.count
            var offset = 0
            for index in 0...count {
                Self.store(offset, at: index, in: entries, wide: wide)
                // The walk's fast sizes, clamped to the row as ``ValueEncoding/length(_:available:)`` is.
                if index < count, offset < end { offset += min(ValueEncoding.skip(base, offset, end), end - offset) }
            }
        }
    }

    /// Where a slot's entries go while the table is made (nil: the slot has none).
    func writableEntries(_ slot: Int) -> UnsafeMutableRawPointer? {
        guard slot >= 0, slot < slots, case let index = first[slot], index != .max else { return nil }
        return starts + Int(index) * (wide ? 2 : 1)
    }

    /// Writes entry `index` (a value's start, or the row's length after the last value).
    @inline(__always)
    static func store(_ offset: Int, at index: Int, in entries: UnsafeMutableRawPointer, wide: Bool) {
        if wide {
            entries.storeBytes(of: UInt16(truncatingIfNeeded: offset), toByteOffset: 2 * index, as: UInt16.self)
        } else {
            entries.storeBytes(of: UInt8(truncatingIfNeeded: offset), toByteOffset: index, as: UInt8.self)
        }
    }

    /// How many entries each slot has (its row's number of values when the table was made,
    /// plus one), nil for a slot with none: from its first entry to the next slot's first, or
    /// to the end. For checks.
    func entryCounts() -> [Int?] {
        var counts = [Int?](repeating: nil, count: slots)
        let filled = (0..<slots).filter { first[$0] != .max }.sorted { first[$0] < first[$1] }
        for (position, slot) in filled.enumerated() {
            let end = position + 1 < filled.count ? Int(first[filled[position + 1]]) : total
            counts[slot] = end - Int(first[slot])
        }
        return counts
    }

    /// Entry `index` of a slot's row (a value's start, or the row's length after the last
    /// value); nil when the slot has no entries or `index` is past them (``entryCounts()``).
    func entry(_ slot: Int, _ index: Int, of counts: [Int?]) -> Int? {
        guard slot >= 0, slot < counts.count, let count = counts[slot], index >= 0, index < count, let entries = entries(slot) else { return nil }
        return wide ? Int(entries.loadUnaligned(fromByteOffset: 2 * index, as: UInt16.self)) : Int(entries.load(fromByteOffset: index, as: UInt8.self))
    }

    deinit {
        first.deallocate()
        starts.deallocate()
    }

    /// The entries of a slot's row (value starts, then the row's length; ``wide`` tells their
    /// size), or nil when it has none.
    @inline(__always)
    func entries(_ slot: Int) -> UnsafeRawPointer? {
        guard slot >= 0, slot < slots, case let index = first[slot], index != .max else { return nil }
        return UnsafeRawPointer(starts + Int(index) * (wide ? 2 : 1))
    }
}
