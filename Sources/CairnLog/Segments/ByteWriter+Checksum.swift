import CairnSupport

extension ByteWriter {
    /// The masked CRC32C of the bytes in `range`.
    package func maskedChecksum(of range: Range<Int>) -> UInt32 {
        bytes.withUnsafeBytes { CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[range]))) }
    }
}
