/// Appends little-endian integers and raw bytes to a growing byte array.
///
/// Shared by every binary structure of the store (frame and segment headers, the manifest,
/// dictionaries, and the upper layers' change records).
///
/// Public with `package` members, as ``ByteReader`` is (so that its `@inlinable` members are
/// inlined into the modules that encode).
public struct ByteWriter {
    /// The bytes written so far.
    @usableFromInline
    package private(set) var bytes: [UInt8]

    /// Starts an empty buffer with room for `capacity` bytes.
    @inlinable
    package init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// The number of bytes written so far.
    @inlinable
    package var count: Int { bytes.count }

    /// Forgets what was written, keeping the buffer for reuse.
    @inlinable
    package mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

    /// Appends an integer in little-endian order.
    @inlinable
    package mutating func write<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Appends a 64-bit integer in little-endian order (the non-generic form of ``write(_:)``,
    /// for the doubles and dates of every change record).
    @inlinable
    package mutating func write(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Appends a 32-bit integer in little-endian order.
    @inlinable
    package mutating func write(_ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Appends one byte (the non-generic fast path of ``write(_:)``).
    @inlinable
    package mutating func writeByte(_ byte: UInt8) {
        bytes.append(byte)
    }

    /// Appends raw bytes.
    @inlinable
    package mutating func write(bytes other: some Collection<UInt8>) {
        bytes.append(contentsOf: other)
    }

    /// Appends raw bytes (not generic, so that a caller in another module never takes the
    /// generic path: the hot paths of encoding copy many small pieces).
    package mutating func write(bytes other: UnsafeRawBufferPointer) {
        guard let base = other.baseAddress, !other.isEmpty else { return }
        bytes.append(contentsOf: UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: other.count))
    }

    /// Appends raw bytes (not generic; see ``write(bytes:)-(UnsafeRawBufferPointer)``).
    package mutating func write(bytes other: [UInt8]) {
        bytes.append(contentsOf: other)
    }

    /// Appends `count` bytes that `fill` writes into the room made for them (zeros where it
    /// writes none): one growth of the buffer for a piece decoded byte by byte.
    @inlinable
    package mutating func write(count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) {
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: count))
        bytes.withUnsafeMutableBytes { fill(UnsafeMutableRawBufferPointer(rebasing: $0[start...])) }
    }

    /// Appends `count` zero bytes (reserved fields).
    @inlinable
    package mutating func writeZeros(_ count: Int) {
        bytes.append(contentsOf: repeatElement(0, count: count))
    }

    /// Overwrites an integer at an earlier position (for lengths and checksums known only later).
    @inlinable
    package mutating func patch<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        withUnsafeBytes(of: value.littleEndian) { source in
            for (index, byte) in source.enumerated() { bytes[offset + index] = byte }
        }
    }
}

extension ByteWriter {
    /// Appends an unsigned integer in LEB128 form (7 bits a byte, low bits first).
    @inlinable
    package mutating func writeVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            writeByte(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        writeByte(UInt8(value))
    }

    /// Appends a signed integer as a zigzag varint (small magnitudes take few bytes).
    @inlinable
    package mutating func writeSignedVarint(_ value: Int64) {
        writeVarint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    /// Appends a length-prefixed byte string.
    @inlinable
    package mutating func writeLengthPrefixed(_ bytes: some Collection<UInt8>) {
        writeVarint(UInt64(bytes.count))
        write(bytes: bytes)
    }

    /// Appends a length-prefixed byte string (not generic).
    package mutating func writeLengthPrefixed(_ other: UnsafeRawBufferPointer) {
        writeVarint(UInt64(other.count))
        write(bytes: other)
    }

    /// Appends a string's UTF-8 bytes after their count (as ``writeLengthPrefixed(_:)``), copied
    /// in one piece when the string's storage is contiguous, as a native string's is.
    @inlinable
    package mutating func writeLengthPrefixed(utf8 text: String) {
        let utf8 = text.utf8
        writeVarint(UInt64(utf8.count))
        let copied: Void? = utf8.withContiguousStorageIfAvailable { bytes.append(contentsOf: $0) }
        if copied == nil { bytes.append(contentsOf: utf8) }
    }

    /// Makes room for `count` more bytes (one allocation for a record whose size is known roughly).
    @inlinable
    package mutating func reserve(_ count: Int) {
        bytes.reserveCapacity(bytes.count + count)
    }
}
