/// Reads little-endian integers and byte runs from a buffer, checking every bound.
///
/// A read past the end throws ``ByteReader/Overrun`` instead of trapping, so hostile input
/// (a damaged file, a forged length) becomes an error the caller turns into a ``LogError``
/// that names the file and offset.
package struct ByteReader {
    /// Thrown when a read would go past the end of the buffer.
    package struct Overrun: Error, Sendable {
        /// Where the read started.
        package var offset: Int
        /// How many bytes it wanted.
        package var wanted: Int
    }

    private let buffer: UnsafeRawBufferPointer
    /// The position of the next read.
    package private(set) var offset: Int

    /// Reads `buffer` from `offset`. The buffer must outlive the reader.
    package init(_ buffer: UnsafeRawBufferPointer, offset: Int = 0) {
        self.buffer = buffer
        self.offset = offset
    }

    /// Bytes left after the current position.
    package var remaining: Int { buffer.count - offset }

    /// Whether every byte has been read.
    package var isAtEnd: Bool { offset >= buffer.count }

    /// Reads one little-endian integer.
    package mutating func read<T: FixedWidthInteger>(_: T.Type = T.self) throws(Overrun) -> T {
        let size = MemoryLayout<T>.size
        guard size <= remaining else { throw Overrun(offset: offset, wanted: size) }
        let value = T(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: T.self))
        offset += size
        return value
    }

    /// Reads `count` bytes as a view into the buffer.
    package mutating func readBytes(_ count: Int) throws(Overrun) -> UnsafeRawBufferPointer {
        guard count >= 0, count <= remaining else { throw Overrun(offset: offset, wanted: count) }
        let slice = UnsafeRawBufferPointer(rebasing: buffer[offset..<(offset + count)])
        offset += count
        return slice
    }

    /// Skips `count` bytes.
    package mutating func skip(_ count: Int) throws(Overrun) {
        _ = try readBytes(count)
    }
}
