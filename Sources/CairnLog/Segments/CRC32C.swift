import CCairnSupport

/// CRC32C (Castagnoli), the checksum of every frame, segment header, dictionary and manifest.
///
/// Uses the SSE4.2 `crc32` instruction when the CPU has it (checked once at run time) and a
/// software slicing-by-8 table otherwise. Both give the same values: the RFC 3720 appendix B.4
/// vectors are in the tests.
public enum CRC32C {
    /// Whether the hardware path is in use on this machine.
    public static let usesHardware: Bool = cairn_crc32c_hardware_available() == 1

    /// The CRC32C of `bytes`, continuing from `crc` (the result of an earlier call, or 0 to start).
    ///
    /// `checksum(b, extending: checksum(a))` equals the checksum of `a` followed by `b`.
    @inlinable
    public static func checksum(_ bytes: UnsafeRawBufferPointer, extending crc: UInt32 = 0) -> UInt32 {
        usesHardware
            ? hardwareChecksum(bytes, extending: crc)
            : softwareChecksum(bytes, extending: crc)
    }

    /// The CRC32C of an array of bytes, continuing from `crc`.
    @inlinable
    public static func checksum(_ bytes: [UInt8], extending crc: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0, extending: crc) }
    }

    /// Masks a CRC before it is stored, as LevelDB does: a CRC computed over bytes that contain
    /// embedded CRCs is then less likely to collide with them.
    @inlinable
    public static func mask(_ crc: UInt32) -> UInt32 {
        ((crc >> 15) | (crc << 17)) &+ 0xa282_ead8
    }

    /// Reverses ``mask(_:)``.
    @inlinable
    public static func unmask(_ masked: UInt32) -> UInt32 {
        let rotated = masked &- 0xa282_ead8
        return (rotated >> 17) | (rotated << 15)
    }

    /// The hardware path. Only valid when ``usesHardware`` is true.
    @usableFromInline
    static func hardwareChecksum(_ bytes: UnsafeRawBufferPointer, extending crc: UInt32) -> UInt32 {
        cairn_crc32c_hardware(crc, bytes.baseAddress, bytes.count)
    }

    /// The portable slicing-by-8 path (eight table look-ups per eight input bytes).
    @usableFromInline
    static func softwareChecksum(_ bytes: UnsafeRawBufferPointer, extending crc: UInt32) -> UInt32 {
        var c = ~crc
        var index = 0
        let count = bytes.count
        slicingTables.withUnsafeBufferPointer { t in
            while count - index >= 8 {
                let low = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt32.self)) ^ c
                let high = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: index + 4, as: UInt32.self))
                c =
                    t[7 &* 256 &+ Int(low & 0xff)] ^ t[6 &* 256 &+ Int((low >> 8) & 0xff)]
                    ^ t[5 &* 256 &+ Int((low >> 16) & 0xff)] ^ t[4 &* 256 &+ Int(low >> 24)]
                    ^ t[3 &* 256 &+ Int(high & 0xff)] ^ t[2 &* 256 &+ Int((high >> 8) & 0xff)]
                    ^ t[256 &+ Int((high >> 16) & 0xff)] ^ t[Int(high >> 24)]
                index &+= 8
            }
            while index < count {
                c = t[Int((c ^ UInt32(bytes[index])) & 0xff)] ^ (c >> 8)
                index &+= 1
            }
        }
        return ~c
    }

    /// Eight 256-entry tables for the reflected Castagnoli polynomial 0x82F63B78, laid end to end.
    @usableFromInline
    static let slicingTables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 {
                crc = (crc & 1) != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1
            }
            tables[byte] = crc
        }
        for slice in 1..<8 {
            for byte in 0..<256 {
                let previous = tables[(slice - 1) * 256 + byte]
                tables[slice * 256 + byte] = (previous >> 8) ^ tables[Int(previous & 0xff)]
            }
        }
        return tables
    }()
}
