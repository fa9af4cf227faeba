/// Reads little-endian integers and byte runs from a buffer, checking every bound.
///
/// A read past the end throws ``ByteReader/Overrun`` instead of trapping, so hostile input
/// (a damaged file, a forged length) becomes an error the caller turns into a ``LogError``
/// that names the file and offset.
///
/// The type is public, its members `package`: the compiler (Swift 6.3) inlines `@inlinable`
/// members into other modules only when their type is public, and every decoder of the log and
/// the object graph reads through this one. No product exports this module.
public struct ByteReader {
    /// Thrown when a read would go past the end of the buffer.
    public struct Overrun: Error, Sendable {
        /// Where the read started.
        @usableFromInline
        package var offset: Int
        /// How many bytes it wanted.
        @usableFromInline
        package var wanted: Int

        @inlinable
        package init(offset: Int, wanted: Int) {
            self.offset = offset
            self.wanted = wanted
        }
    }

    @usableFromInline
    package let buffer: UnsafeRawBufferPointer
    /// The position of the next read.
    @usableFromInline
    package private(set) var offset: Int

    /// Reads `buffer` from `offset`. The buffer must outlive the reader.
    @inlinable
    package init(_ buffer: UnsafeRawBufferPointer, offset: Int = 0) {
        self.buffer = buffer
        self.offset = offset
    }

    /// Bytes left after the current position.
    @inlinable
    package var remaining: Int { buffer.count - offset }

    /// Whether every byte has been read.
    @inlinable
    package var isAtEnd: Bool { offset >= buffer.count }

    /// Reads one little-endian integer.
    @inlinable
    package mutating func read<T: FixedWidthInteger>(_: T.Type = T.self) throws(Overrun) -> T {
        let size = MemoryLayout<T>.size
        guard size <= remaining else { throw Overrun(offset: offset, wanted: size) }
        let value = T(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: T.self))
        offset += size
        return value
    }

    /// Reads one byte (the non-generic fast path of ``read(_:)``).
    @inlinable
    package mutating func readByte() throws(Overrun) -> UInt8 {
        guard offset < buffer.count else { throw Overrun(offset: offset, wanted: 1) }
        defer { offset += 1 }
        return buffer[offset]
    }

    /// Reads `count` bytes as a view into the buffer.
    @inlinable
    package mutating func readBytes(_ count: Int) throws(Overrun) -> UnsafeRawBufferPointer {
        guard count >= 0, count <= remaining else { throw Overrun(offset: offset, wanted: count) }
        let slice = UnsafeRawBufferPointer(rebasing: buffer[offset..<(offset + count)])
        offset += count
        return slice
    }

    /// Skips `count` bytes.
    @inlinable
    package mutating func skip(_ count: Int) throws(Overrun) {
        _ = try readBytes(count)
    }
}

extension ByteReader {
    /// Reads an unsigned LEB128 integer (at most 10 bytes).
    @inlinable
    package mutating func readVarint() throws(Overrun) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        let start = offset
        while true {
            let byte = try readByte()
            guard shift < 64, shift < 63 || byte <= 1 else { throw Overrun(offset: start, wanted: 10) }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
    }

    /// Reads a zigzag varint.
    @inlinable
    package mutating func readSignedVarint() throws(Overrun) -> Int64 {
        let raw = try readVarint()
        return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }

    /// Reads a varint that must fit in `Int` and be at most `limit` (for lengths and counts).
    @inlinable
    package mutating func readCount(limit: Int) throws(Overrun) -> Int {
        let start = offset
        let value = try readVarint()
        guard value <= UInt64(limit) else { throw Overrun(offset: start, wanted: Int(clamping: value)) }
        return Int(value)
    }

    /// Reads a length-prefixed byte string.
    @inlinable
    package mutating func readLengthPrefixed() throws(Overrun) -> UnsafeRawBufferPointer {
        try readBytes(try readCount(limit: remaining))
    }
}

extension ByteReader {
    /// The bytes from `start` to the current position.
    @inlinable
    package func bytes(from start: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: buffer[start..<offset])
    }
}

extension UnsafeRawBufferPointer {
    /// The bytes at `range` (which lies within these), without the `Slice` that subscripting
    /// makes: hot paths that take many small pieces of one buffer use this.
    @inlinable
    package func piece(_ range: Range<Int>) -> UnsafeRawBufferPointer {
        guard let base = baseAddress, range.lowerBound >= 0, range.upperBound <= count else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: base + range.lowerBound, count: range.count)
    }
}
