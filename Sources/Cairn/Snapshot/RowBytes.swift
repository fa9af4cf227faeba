import Foundation

/// A row's bytes, borrowed for a moment (one comparison, one object of a scan): walked with
/// plain pointer reads, without reference counting or decoding.
///
/// Values are encoded as in change records (docs/FORMAT.md §9): a tag byte, then a fixed number
/// of bytes or a varint length and that many bytes. Lengths are clamped to the bytes, so damaged
/// bytes never lead a read past the end.
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
                offset += Self.skip(base, offset, end)
                index += 1
                memo.ends[index] = Int32(truncatingIfNeeded: offset)
            }
            if index > Int(memo.ends[0]) { memo.ends[0] = Int32(truncatingIfNeeded: index) }
        } else {
            while index < position, offset < end {
                offset += Self.skip(base, offset, end)
                index += 1
            }
        }
        guard offset < end else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: base + offset, count: Self.length(base + offset, available: end - offset))
    }

    /// The length of the value at `offset`: the common ones (fixed sizes, short strings) without
    /// the general decoding.
    @inline(__always)
    static func skip(_ base: UnsafeRawPointer, _ offset: Int, _ end: Int) -> Int {
        let tag = base.load(fromByteOffset: offset, as: UInt8.self)
        let fixed = ValueTag.fixedSize(ofTag: tag)
        if fixed != 0 { return fixed }
        if tag == ValueTag.string.rawValue, offset + 1 < end, case let size = base.load(fromByteOffset: offset + 1, as: UInt8.self), size < 0x80 {
            return 2 + Int(size)
        }
        return length(base + offset, available: end - offset)
    }

    /// The length of the encoded value at `start`, with `available` bytes from there.
    @inline(__always)
    static func length(_ start: UnsafeRawPointer, available: Int) -> Int {
        guard available > 0 else { return 0 }
        let tag = start.load(as: UInt8.self)
        var fixed = ValueTag.fixedSize(ofTag: tag)
        if fixed != 0 { return min(fixed, available) }
        guard let layout = ValueTag(rawValue: tag)?.layout else { return 1 }  // an unknown tag: one byte
        switch layout {
        case .tagOnly, .fixed: return 1  // (fixed sizes are found above)
        case .varint:
            let (_, size) = varint(start + 1, available: available - 1)
            fixed = 1 + size
        case .lengthPrefixed:
            let (length, size) = varint(start + 1, available: available - 1)
            fixed = length >= UInt64(available) ? available : 1 + size + Int(length)
        case .objectID:
            let (_, first) = varint(start + 1, available: available - 1)
            let (_, second) = varint(start + 1 + first, available: available - 1 - first)
            fixed = 1 + first + second
        case .objectIDs:
            var (pairs, offset) = varint(start + 1, available: available - 1)
            offset += 1
            while pairs > 0, offset < available {
                offset += varint(start + offset, available: available - offset).size
                offset += varint(start + offset, available: available - offset).size
                pairs -= 1
            }
            fixed = offset
        }
        return min(fixed, available)
    }

    /// An unsigned LEB128 varint at `start` and how many bytes it takes (at most `available`;
    /// an unterminated varint takes them all).
    @inline(__always)
    static func varint(_ start: UnsafeRawPointer, available: Int) -> (value: UInt64, size: Int) {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        var index = 0
        while index < available {
            let byte = start.load(fromByteOffset: index, as: UInt8.self)
            index += 1
            if shift < 64 { result |= UInt64(byte & 0x7F) << shift }
            if byte & 0x80 == 0 { return (result, index) }
            shift += 7
        }
        return (result, max(0, available))
    }

    /// A zigzag integer value's number, or nil for another kind of value.
    @inline(__always)
    static func integer(_ value: UnsafeRawBufferPointer) -> Int64? {
        guard value.count >= 2, let base = value.baseAddress, value[0] == ValueTag.integer.rawValue else { return nil }
        let raw = varint(base + 1, available: value.count - 1).value
        return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }

    /// A double or date value's number (eight little-endian bytes), or nil.
    @inline(__always)
    static func double(_ value: UnsafeRawBufferPointer) -> Double? {
        guard value.count == 9, value[0] == ValueTag.double.rawValue || value[0] == ValueTag.date.rawValue else { return nil }
        return Double(bitPattern: value.loadUnaligned(fromByteOffset: 1, as: UInt64.self).littleEndian)
    }

    /// A string value's UTF-8 bytes, or nil.
    @inline(__always)
    static func text(_ value: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        guard value.count >= 2, let base = value.baseAddress, value[0] == ValueTag.string.rawValue else { return nil }
        let (length, size) = varint(base + 1, available: value.count - 1)
        guard length == UInt64(value.count - 1 - size) else { return nil }
        return UnsafeRawBufferPointer(start: base + 1 + size, count: Int(length))
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
