import CairnLog

/// An object's committed values in one allocation: the values encoded exactly as in change
/// records (docs/FORMAT.md §9), one after the other.
///
/// A row costs little more than its data (no table of offsets: a value is found by skipping the
/// ones before it, a few nanoseconds each), and replay builds it by copying the bytes of the
/// change record without decoding strings. Reading a value decodes it.
struct Row: @unchecked Sendable {
    // Safety: the storage is written once, in `make`, and only read afterwards.
    fileprivate let storage: RowStorage

    /// A row of `count` values encoded one after the other in `bytes`.
    static func make(count: Int, bytes: UnsafeRawBufferPointer) -> Row {
        Row(storage: RowStorage.make(count: count, bytes: bytes))
    }

    /// A row of values encoded one after the other in `pieces` (each one value's bytes).
    static func make(pieces: [UnsafeRawBufferPointer]) -> Row {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(pieces.reduce(0) { $0 + $1.count })
        for piece in pieces { bytes.append(contentsOf: piece) }
        return bytes.withUnsafeBytes { make(count: pieces.count, bytes: $0) }
    }

    /// The number of values.
    var count: Int { storage.header.count }

    /// Calls `body` with the encoded bytes of value `position` (empty past the last value).
    func withValueBytes<R>(_ position: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try storage.withBytes { bytes in
            guard position >= 0, position < count else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
            var offset = 0
            for _ in 0..<position { offset += Self.storedLength(bytes, at: offset) }
            let end = offset + Self.storedLength(bytes, at: offset)
            return try body(UnsafeRawBufferPointer(rebasing: bytes[offset..<end]))
        }
    }

    /// Value `position`, decoded.
    func value(_ position: Int) -> PropertyValue {
        withValueBytes(position) { ChangeSetCodec.decodeStored($0) }
    }

    /// Every value, decoded (in one pass).
    var values: [PropertyValue] {
        storage.withBytes { bytes in
            var values: [PropertyValue] = []
            values.reserveCapacity(count)
            var offset = 0
            for _ in 0..<count {
                let end = offset + Self.storedLength(bytes, at: offset)
                values.append(ChangeSetCodec.decodeStored(UnsafeRawBufferPointer(rebasing: bytes[offset..<end])))
                offset = end
            }
            return values
        }
    }

    /// This row with the values at `positions` (increasing) replaced by those of `patch`.
    func replacing(_ positions: [Int], with patch: Row) -> Row {
        storage.withBytes { old in
            patch.storage.withBytes { new in
                var bytes: [UInt8] = []
                bytes.reserveCapacity(old.count + new.count)
                var oldOffset = 0, newOffset = 0, next = 0
                for position in 0..<count {
                    let oldEnd = oldOffset + Self.storedLength(old, at: oldOffset)
                    if next < positions.count && positions[next] == position {
                        let newEnd = newOffset + Self.storedLength(new, at: newOffset)
                        bytes.append(contentsOf: new[newOffset..<newEnd])
                        newOffset = newEnd
                        next += 1
                    } else {
                        bytes.append(contentsOf: old[oldOffset..<oldEnd])
                    }
                    oldOffset = oldEnd
                }
                return bytes.withUnsafeBytes { Row.make(count: count, bytes: $0) }
            }
        }
    }

    /// The length of the encoded value at `offset`, read from its tag (clamped to the bytes, so
    /// that damaged bytes never lead a read past the end).
    static func storedLength(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Int {
        guard offset < bytes.count else { return 0 }
        var reader = ByteReader(bytes, offset: offset)
        func length() -> Int {
            do {
                guard let tag = ChangeSetCodec.Tag(rawValue: try reader.readByte()) else { return 1 }
                switch tag {
                case .null, .falseValue, .trueValue, .noObject: break
                case .string, .decimal, .binary, .uri: _ = try reader.readLengthPrefixed()
                case .integer: _ = try reader.readVarint()
                case .double, .date: try reader.skip(8)
                case .float: try reader.skip(4)
                case .uuid: try reader.skip(16)
                case .object:
                    _ = try reader.readVarint()
                    _ = try reader.readVarint()
                case .objects:
                    let count = try reader.readCount(limit: reader.remaining)
                    for _ in 0..<count {
                        _ = try reader.readVarint()
                        _ = try reader.readVarint()
                    }
                }
                return reader.offset - offset
            } catch {
                return bytes.count - offset
            }
        }
        return length()
    }
}

/// The one allocation behind a ``Row``: its value count, then the bytes.
final class RowStorage: ManagedBuffer<RowStorage.Header, UInt8> {
    struct Header {
        /// How many values.
        var count: Int
        /// How many bytes.
        var byteCount: Int
    }

    static func make(count: Int, bytes: UnsafeRawBufferPointer) -> RowStorage {
        let buffer = create(minimumCapacity: bytes.count) { _ in Header(count: count, byteCount: bytes.count) }
        let row = unsafeDowncast(buffer, to: RowStorage.self)
        row.withUnsafeMutablePointerToElements { elements in
            if let base = bytes.baseAddress { UnsafeMutableRawPointer(elements).copyMemory(from: base, byteCount: bytes.count) }
        }
        return row
    }

    /// Calls `body` with the row's bytes.
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeMutablePointerToElements { elements in
            try body(UnsafeRawBufferPointer(start: UnsafeRawPointer(elements), count: header.byteCount))
        }
    }
}
