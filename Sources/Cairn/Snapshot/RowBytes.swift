import Foundation

/// A row's bytes, borrowed for a moment (one comparison, one object of a scan): walked with
/// plain pointer reads, without reference counting or decoding.
///
/// Values are encoded as in change records (docs/FORMAT.md §9) and measured by
/// ``ValueEncoding``, which clamps lengths to the bytes: damaged bytes never lead a read past
/// the end.
struct RowBytes {
    /// The encoded values, one after the other.
    let bytes: UnsafeRawBufferPointer
    /// The number of values.
    let count: Int
    /// Where the values walked so far end (a scan thread's scratch memory, reset for each row),
    /// so that reading several values of one row walks it once; nil: walk from the start.
    let memo: RowMemo?

    /// Where each value starts, then the row's length, when the row's chunk knows
    /// (``ValueStarts``): a value is then found without walking the ones before it.
    let starts: UnsafeRawPointer?
    /// Whether the entries of `starts` take two bytes (one otherwise).
    let wideStarts: Bool

    init(bytes: UnsafeRawBufferPointer, count: Int, memo: RowMemo? = nil, starts: UnsafeRawPointer? = nil, wideStarts: Bool = false) {
        self.bytes = bytes
        self.count = count
        self.memo = bytes.count < Int(Int32.max) ? memo : nil
        self.starts = starts
        self.wideStarts = wideStarts
    }

    /// Whether two byte ranges hold the same bytes.
    static func same(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        guard let first = a.baseAddress, let second = b.baseAddress else { return true }
        return memcmp(first, second, a.count) == 0
    }

    /// The encoded bytes of value `position` (empty when there is no such value).
    @inline(__always)
    func value(_ position: Int) -> UnsafeRawBufferPointer {
        guard position >= 0, position < count, let base = bytes.baseAddress else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        let end = bytes.count
        if let starts {
            let start =
                wideStarts ? Int(starts.load(fromByteOffset: 2 * position, as: UInt16.self)) : Int(starts.load(fromByteOffset: position, as: UInt8.self))
            let next =
                wideStarts
                ? Int(starts.load(fromByteOffset: 2 * position + 2, as: UInt16.self)) : Int(starts.load(fromByteOffset: position + 1, as: UInt8.self))
            guard start <= next, next <= end else { return UnsafeRawBufferPointer(start: nil, count: 0) }
            return UnsafeRawBufferPointer(start: base + start, count: next - start)
        }
        var offset = 0
        var index = 0
        if let memo, position < RowMemo.capacity {
            // Start from the furthest value already walked that is not past this one.
            index = min(position, Int(memo.ends[0]))
            offset = index == 0 ? 0 : Int(memo.ends[index])
            while index < position, offset < end {
                offset += ValueEncoding.skip(base, offset, end)
                index += 1
                memo.ends[index] = Int32(truncatingIfNeeded: offset)
            }
            if index > Int(memo.ends[0]) { memo.ends[0] = Int32(truncatingIfNeeded: index) }
        } else {
            while index < position, offset < end {
                offset += ValueEncoding.skip(base, offset, end)
                index += 1
            }
        }
        guard offset < end else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: base + offset, count: ValueEncoding.length(base + offset, available: end - offset))
    }
}

/// One scan thread's scratch memory for ``RowBytes/memo``: the end offsets of the first values
/// of the row being visited (`ends[0]`: how many are known; `ends[i]`: where value `i - 1`
/// ends). Reset before each row.
struct RowMemo {
    /// The values whose ends are remembered (beyond them, rows are walked from the start).
    static let capacity = 64
    let ends: UnsafeMutablePointer<Int32>

    static func allocate() -> RowMemo {
        let ends = UnsafeMutablePointer<Int32>.allocate(capacity: capacity + 1)
        ends.initialize(repeating: 0, count: capacity + 1)
        return RowMemo(ends: ends)
    }

    func deallocate() { ends.deallocate() }

    /// Forgets the previous row.
    @inline(__always)
    func reset() { ends[0] = 0 }
}
