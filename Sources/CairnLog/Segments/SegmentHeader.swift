import CairnSupport
import struct Foundation.UUID

/// The 64 bytes at the start of every segment file.
///
/// They identify the file (magic, format version), the store it belongs to, its number, its
/// epoch (repeated in every frame) and the LSN of its first frame, under their own checksum.
package struct SegmentHeader: Equatable, Sendable {
    /// The size of the header; the first frame starts right after it.
    package static let size = 64
    /// The newest segment format version this code reads (and writes when a segment holds a
    /// record of several frames).
    package static let formatVersion: UInt16 = 2
    /// The version of a segment whose every record is one frame: what a new segment is, so
    /// that builds that read version 1 alone read it.
    package static let singleFrameVersion: UInt16 = 1
    /// The first version whose records may span several frames (``FrameFlags``).
    package static let multiFrameVersion: UInt16 = 2
    private static let magic: [UInt8] = Array("CAIRNSEG".utf8)

    package var epoch: UInt32
    package var number: UInt64
    package var firstLSN: LSN
    package var storeID: UUID
    /// The format version: ``singleFrameVersion`` or ``multiFrameVersion``.
    package var version: UInt16

    package init(epoch: UInt32, number: UInt64, firstLSN: LSN, storeID: UUID, version: UInt16 = singleFrameVersion) {
        self.version = version
        self.epoch = epoch
        self.number = number
        self.firstLSN = firstLSN
        self.storeID = storeID
    }

    /// The header's bytes.
    package func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: Self.size)
        writer.write(bytes: Self.magic)
        writer.write(version)
        writer.write(UInt16(Self.size))
        writer.write(epoch)
        writer.write(number)
        writer.write(firstLSN.rawValue)
        writer.write(bytes: withUnsafeBytes(of: storeID.uuid) { Array($0) })
        writer.writeZeros(12)
        writer.write(writer.maskedChecksum(of: 0..<60))
        return writer.bytes
    }

    /// Parses a header and checks it against what the manifest says of the segment.
    package init(decoding raw: UnsafeRawBufferPointer, expected: Manifest.Segment, storeID: UUID, path: String) throws {
        try self.init(decoding: raw, path: path)
        try check(against: expected, storeID: storeID, path: path)
    }

    /// Parses a header on its own: magic, checksum, version and size (a segment no manifest
    /// lists is read this way).
    package init(decoding raw: UnsafeRawBufferPointer, path: String) throws {
        guard raw.count >= Self.size else {
            throw LogError.corruption("segment header is incomplete (\(raw.count) of \(Self.size) bytes)", path: path, offset: 0)
        }
        var reader = ByteReader(raw)
        do {
            guard Array(try reader.readBytes(8)) == Self.magic else { throw LogError.corruption("not a Cairn segment (bad magic)", path: path, offset: 0) }
            let stored = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 60, as: UInt32.self))
            let actual = CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<60])))
            guard stored == actual else { throw LogError.corruption("segment header checksum mismatch", path: path, offset: 0) }
            version = try reader.read()
            guard (Self.singleFrameVersion...Self.formatVersion).contains(version) else {
                throw LogError.unsupportedVersion(of: "segment", version, current: Self.formatVersion, path: path, offset: 8)
            }
            let headerSize: UInt16 = try reader.read()
            guard headerSize == UInt16(Self.size) else { throw LogError.corruption("segment header size \(headerSize)", path: path, offset: 10) }
            epoch = try reader.read()
            number = try reader.read()
            firstLSN = LSN(try reader.read(UInt64.self))
            let idBytes = try reader.readBytes(16)
            self.storeID = UUID(bytes: idBytes)
        } catch let overrun as ByteReader.Overrun {
            throw LogError.corruption("segment header truncated", path: path, offset: UInt64(overrun.offset))
        }
    }

    /// The frame flags a segment of `version` may carry: none in version 1.
    package static func allowedFlags(_ version: UInt16) -> FrameFlags {
        version >= multiFrameVersion ? .known : []
    }

    /// Checks a parsed header against the manifest's record of the segment and the store's ID.
    package func check(against expected: Manifest.Segment, storeID: UUID, path: String) throws {
        guard self.storeID == storeID else { throw LogError.corruption("segment belongs to another store (\(self.storeID))", path: path, offset: 32) }
        guard number == expected.number else {
            throw LogError.corruption("segment header says number \(number), the manifest \(expected.number)", path: path, offset: 16)
        }
        guard epoch == expected.epoch else {
            throw LogError.corruption("segment epoch \(epoch) differs from the manifest's \(expected.epoch)", path: path, offset: 12)
        }
        guard firstLSN == expected.firstLSN else {
            throw LogError.corruption("segment starts at LSN \(firstLSN), the manifest says \(expected.firstLSN)", path: path, offset: 24)
        }
    }
}
