/// How a frame's payload is stored.
public enum FrameCodec: UInt8, Sendable, CaseIterable {
    /// The payload as given.
    case raw = 0
    /// An LZ4 block.
    case lz4 = 1
    /// An LZ4 block compressed against a dictionary named by the frame's dictionary id.
    case lz4Dictionary = 2
}

/// Where a frame stands in its record: a record is one frame, or (in a version 2 segment) a
/// run of frames with one LSN whose payloads, decoded and joined in order, are its payload.
package struct FrameFlags: OptionSet, Sendable, Hashable {
    package let rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }

    /// More frames of this record follow: the record is not complete at this frame.
    package static let continues = FrameFlags(rawValue: 1)
    /// This frame continues the previous frame's record (same LSN).
    package static let continuation = FrameFlags(rawValue: 2)
    /// Every flag a version 2 segment may carry.
    package static let known: FrameFlags = [.continues, .continuation]

    /// Whether this frame ends its record.
    package var endsRecord: Bool { !contains(.continues) }
}

/// The 32-byte header in front of every frame's payload.
///
/// ```
/// offset size field
///  0     4    frame checksum   masked CRC32C of the payload, then of header bytes 8..<32
///  4     4    header checksum  masked CRC32C of header bytes 8..<32
///  8     8    LSN
/// 16     4    epoch            the segment's epoch
/// 20     4    stored length    payload bytes that follow the header
/// 24     4    raw length       payload bytes after decompression
/// 28     2    dictionary id    0 unless the codec is lz4Dictionary
/// 30     1    codec
/// 31     1    flags            0; in a version 2 segment, ``FrameFlags``
/// ```
///
/// The header checksum is verified first, so that a torn or damaged header is rejected before
/// any length in it is trusted.
package struct FrameHeader: Equatable, Sendable {
    package static let size = 32

    package var lsn: LSN
    package var epoch: UInt32
    package var storedLength: UInt32
    package var rawLength: UInt32
    package var dictionaryID: UInt16
    package var codec: FrameCodec
    package var flags: FrameFlags

    package init(
        lsn: LSN, epoch: UInt32, storedLength: UInt32, rawLength: UInt32, dictionaryID: UInt16, codec: FrameCodec,
        flags: FrameFlags = []
    ) {
        self.flags = flags
        self.lsn = lsn
        self.epoch = epoch
        self.storedLength = storedLength
        self.rawLength = rawLength
        self.dictionaryID = dictionaryID
        self.codec = codec
    }

    /// Writes the header for a payload whose own CRC32C (unmasked) is `payloadChecksum` into
    /// `destination`, which must have room for ``size`` bytes.
    package func write(to destination: UnsafeMutableRawBufferPointer, payloadChecksum: UInt32) {
        destination.storeBytes(of: lsn.rawValue.littleEndian, toByteOffset: 8, as: UInt64.self)
        destination.storeBytes(of: epoch.littleEndian, toByteOffset: 16, as: UInt32.self)
        destination.storeBytes(of: storedLength.littleEndian, toByteOffset: 20, as: UInt32.self)
        destination.storeBytes(of: rawLength.littleEndian, toByteOffset: 24, as: UInt32.self)
        destination.storeBytes(of: dictionaryID.littleEndian, toByteOffset: 28, as: UInt16.self)
        destination.storeBytes(of: codec.rawValue, toByteOffset: 30, as: UInt8.self)
        destination.storeBytes(of: flags.rawValue, toByteOffset: 31, as: UInt8.self)
        let tail = UnsafeRawBufferPointer(rebasing: destination[8..<Self.size])
        let headerChecksum = CRC32C.mask(CRC32C.checksum(tail))
        let frameChecksum = CRC32C.mask(CRC32C.checksum(tail, extending: payloadChecksum))
        destination.storeBytes(of: frameChecksum.littleEndian, toByteOffset: 0, as: UInt32.self)
        destination.storeBytes(of: headerChecksum.littleEndian, toByteOffset: 4, as: UInt32.self)
    }

    /// Why a header was refused.
    package enum Defect: Error, Sendable, Equatable {
        case headerChecksum
        case unknownCodec(UInt8)
        case flags(UInt8)
        case inconsistentLengths
    }

    /// Parses a header, or says why it is refused (the header checksum is checked first).
    /// `allowed`: the flags the segment's version admits (none in version 1).
    package static func parse(_ raw: UnsafeRawBufferPointer, allowing allowed: FrameFlags) -> Result<FrameHeader, Defect> {
        let tail = UnsafeRawBufferPointer(rebasing: raw[8..<size])
        let stored = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
        guard stored == CRC32C.mask(CRC32C.checksum(tail)) else { return .failure(.headerChecksum) }
        let codecByte = raw.load(fromByteOffset: 30, as: UInt8.self)
        guard let codec = FrameCodec(rawValue: codecByte) else { return .failure(.unknownCodec(codecByte)) }
        let flags = raw.load(fromByteOffset: 31, as: UInt8.self)
        guard FrameFlags(rawValue: flags).isSubset(of: allowed) else { return .failure(.flags(flags)) }
        let header = FrameHeader(
            lsn: LSN(UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))),
            epoch: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 16, as: UInt32.self)),
            storedLength: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 20, as: UInt32.self)),
            rawLength: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 24, as: UInt32.self)),
            dictionaryID: UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: 28, as: UInt16.self)),
            codec: codec, flags: FrameFlags(rawValue: flags))
        let consistent =
            switch codec {
            case .raw: header.storedLength == header.rawLength && header.dictionaryID == 0
            case .lz4: header.dictionaryID == 0
            case .lz4Dictionary: header.dictionaryID != 0
            }
        return consistent ? .success(header) : .failure(.inconsistentLengths)
    }

    /// When the frame checksum matches the payload, the payload's CRC32C (unmasked),
    /// continuing `seed`: the checksum of the stored bytes of the record's frames before this
    /// one (0 for a record's first frame), which the next frame of the record continues.
    package static func checkedPayloadChecksum(
        header raw: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer, extending seed: UInt32 = 0
    ) -> UInt32? {
        let stored = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 0, as: UInt32.self))
        let payloadChecksum = CRC32C.checksum(payload, extending: seed)
        let matches = stored == CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[8..<size]), extending: payloadChecksum))
        return matches ? payloadChecksum : nil
    }
}
