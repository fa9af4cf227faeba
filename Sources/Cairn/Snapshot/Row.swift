import CairnLog

/// An object's committed values in one allocation: the values encoded exactly as in change
/// records (docs/FORMAT.md §9), behind a table of where each starts.
///
/// A row costs little more than its data, and replay builds it by copying the bytes of the
/// change record without decoding strings. Reading a value decodes it.
struct Row: @unchecked Sendable {
    // Safety: the storage is written once, in `make`, and only read afterwards.
    fileprivate let storage: RowStorage

    /// A row of `count` values taken from `bytes`, where value `i` spans
    /// `offsets[i]..<offsets[i + 1]` (offsets relative to `bytes`, `count + 1` of them).
    static func make(count: Int, bytes: UnsafeRawBufferPointer, offsets: [Int]) -> Row {
        Row(storage: RowStorage.make(count: count, bytes: bytes, offsets: offsets))
    }

    /// A row of values encoded one after the other in `pieces` (each one value's bytes).
    static func make(pieces: [UnsafeRawBufferPointer]) -> Row {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(pieces.reduce(0) { $0 + $1.count })
        var offsets = [0]
        for piece in pieces {
            bytes.append(contentsOf: piece)
            offsets.append(bytes.count)
        }
        return bytes.withUnsafeBytes { make(count: pieces.count, bytes: $0, offsets: offsets) }
    }

    /// The number of values.
    var count: Int { storage.header.count }

    /// Calls `body` with the encoded bytes of value `position` (empty past the last value).
    func withValueBytes<R>(_ position: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        guard position >= 0, position < count else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return try storage.withValueBytes(position, body)
    }

    /// Value `position`, decoded.
    func value(_ position: Int) -> PropertyValue {
        withValueBytes(position) { ChangeSetCodec.decodeStored($0) }
    }

    /// Every value, decoded.
    var values: [PropertyValue] {
        (0..<count).map(value)
    }

    /// This row with the values at `positions` replaced by those of `patch` (in order).
    func replacing(_ positions: [Int], with patch: Row) -> Row {
        var bytes: [UInt8] = []
        var offsets = [0]
        var next = 0
        for position in 0..<count {
            if next < positions.count && positions[next] == position {
                patch.withValueBytes(next) { bytes.append(contentsOf: $0) }
                next += 1
            } else {
                withValueBytes(position) { bytes.append(contentsOf: $0) }
            }
            offsets.append(bytes.count)
        }
        return bytes.withUnsafeBytes { Row.make(count: count, bytes: $0, offsets: offsets) }
    }
}

/// The one allocation behind a ``Row``: a table of `count + 1` 32-bit offsets, then the bytes.
final class RowStorage: ManagedBuffer<RowStorage.Header, UInt8> {

    struct Header {
        /// How many values.
        var count: Int
    }

    static func make(count: Int, bytes: UnsafeRawBufferPointer, offsets: [Int]) -> RowStorage {
        let table = (count + 1) * MemoryLayout<UInt32>.size
        let buffer = create(minimumCapacity: table + bytes.count) { _ in Header(count: count) }
        let row = unsafeDowncast(buffer, to: RowStorage.self)
        row.withUnsafeMutablePointerToElements { elements in
            let raw = UnsafeMutableRawPointer(elements)
            for (index, offset) in offsets.enumerated() {
                raw.storeBytes(of: UInt32(offset), toByteOffset: index * 4, as: UInt32.self)
            }
            if let base = bytes.baseAddress { (raw + table).copyMemory(from: base, byteCount: bytes.count) }
        }
        return row
    }

    /// Calls `body` with the encoded bytes of value `position`.
    func withValueBytes<R>(_ position: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeMutablePointerToElements { elements in
            let raw = UnsafeRawPointer(elements)
            let table = (header.count + 1) * 4
            let start = Int(raw.loadUnaligned(fromByteOffset: position * 4, as: UInt32.self))
            let end = Int(raw.loadUnaligned(fromByteOffset: (position + 1) * 4, as: UInt32.self))
            return try body(UnsafeRawBufferPointer(start: raw + table + start, count: end - start))
        }
    }
}
