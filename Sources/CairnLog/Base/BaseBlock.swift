import CLZ4
import CairnSupport

/// Where a block of a base file is, as the index lists it, and how a block is encoded and
/// decoded (docs/FORMAT.md §8, "Base file"): a 16-byte header (stored length, raw length,
/// codec, checksum) and its bytes, LZ4-compressed when that saves any.
package struct BaseBlock: Equatable, Sendable {
    /// The offset of the block's header in its file.
    package var offset: UInt64
    /// The bytes after the header.
    package var storedLength: UInt32
    /// The bytes the block decodes to.
    package var rawLength: UInt32

    package init(offset: UInt64, storedLength: UInt32, rawLength: UInt32) {
        self.offset = offset
        self.storedLength = storedLength
        self.rawLength = rawLength
    }

    /// Encodes `raw` (at most ``BaseFile/maximumRawBlock`` bytes) as a block, header first,
    /// into the start of `encoded` (grown when too small); returns the stored length (the
    /// bytes after the header).
    package static func encode(_ raw: UnsafeRawBufferPointer, level: CompactionLevel, into encoded: inout [UInt8]) -> Int {
        let bound = Int(LZ4_compressBound(Int32(raw.count)))
        if encoded.count < BaseFile.blockHeaderSize + bound { encoded = [UInt8](repeating: 0, count: BaseFile.blockHeaderSize + bound) }
        let size = encoded.withUnsafeMutableBytes { target -> Int in
            guard let start = target.baseAddress, let input = raw.baseAddress?.assumingMemoryBound(to: CChar.self) else { return 0 }
            let destination = start.advanced(by: BaseFile.blockHeaderSize).assumingMemoryBound(to: CChar.self)
            switch level {
            case .fast: return Int(LZ4_compress_default(input, destination, Int32(raw.count), Int32(bound)))
            case .high: return Int(LZ4_compress_HC(input, destination, Int32(raw.count), Int32(bound), LZ4HC_CLEVEL_DEFAULT))
            }
        }
        // Stored as is unless LZ4 saves something.
        let codec = size > 0 && size < raw.count ? BaseFile.lz4Codec : BaseFile.rawCodec
        let stored = codec == BaseFile.lz4Codec ? size : raw.count
        encoded.withUnsafeMutableBytes { target in
            if codec == BaseFile.rawCodec {
                UnsafeMutableRawBufferPointer(rebasing: target[BaseFile.blockHeaderSize..<(BaseFile.blockHeaderSize + stored)]).copyMemory(from: raw)
            }
            target.storeBytes(of: UInt32(stored).littleEndian, toByteOffset: 0, as: UInt32.self)
            target.storeBytes(of: UInt32(raw.count).littleEndian, toByteOffset: 4, as: UInt32.self)
            target.storeBytes(of: codec, toByteOffset: 8, as: UInt8.self)
            for index in 9..<12 { target[index] = 0 }
            var crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: target[0..<12]))
            crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: target[BaseFile.blockHeaderSize..<(BaseFile.blockHeaderSize + stored)]), extending: crc)
            target.storeBytes(of: CRC32C.mask(crc).littleEndian, toByteOffset: 12, as: UInt32.self)
        }
        return stored
    }

    /// Checks this block's bytes (`bytes`: its header and its ``storedLength`` bytes) against
    /// what the index says of it, and decodes them into `raw` (at least ``rawLength`` bytes
    /// long); returns the raw length.
    ///
    /// - Throws: ``LogError/Code/corruption`` naming `path` and the block's offset.
    package func decode(_ bytes: UnsafeRawBufferPointer, into raw: UnsafeMutableRawBufferPointer, path: String) throws -> Int {
        let storedLength = Int(storedLength), rawLength = Int(rawLength)
        guard storedLength <= BaseFile.maximumStoredBlock, rawLength <= BaseFile.maximumRawBlock else {
            throw LogError.corruption("base block of \(storedLength) bytes stored, \(rawLength) raw is larger than a block can be", path: path, offset: offset)
        }
        guard bytes.count >= BaseFile.blockHeaderSize + storedLength, raw.count >= rawLength else {
            throw LogError.corruption("base block runs past the bytes read for it", path: path, offset: offset)
        }
        let recordedStored = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt32.self))
        let recordedRaw = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
        let codec = bytes[8]
        let checksum = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 12, as: UInt32.self))
        var crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<12]))
        let payload = UnsafeRawBufferPointer(rebasing: bytes[BaseFile.blockHeaderSize..<(BaseFile.blockHeaderSize + storedLength)])
        crc = CRC32C.checksum(payload, extending: crc)
        guard CRC32C.mask(crc) == checksum else { throw LogError.corruption("base block checksum mismatch", path: path, offset: offset) }
        guard recordedStored == self.storedLength, recordedRaw == self.rawLength, bytes[9] == 0, bytes[10] == 0, bytes[11] == 0 else {
            throw LogError.corruption("base block header disagrees with the index", path: path, offset: offset)
        }
        switch codec {
        case BaseFile.rawCodec:
            guard storedLength == rawLength else { throw LogError.corruption("stored base block has two lengths", path: path, offset: offset) }
            UnsafeMutableRawBufferPointer(rebasing: raw[0..<rawLength]).copyMemory(from: payload)
        case BaseFile.lz4Codec:
            guard let source = payload.baseAddress, let destination = raw.baseAddress else {
                throw LogError.corruption("base block is empty", path: path, offset: offset)
            }
            let decoded = LZ4_decompress_safe(
                source.assumingMemoryBound(to: CChar.self), destination.assumingMemoryBound(to: CChar.self), Int32(storedLength), Int32(rawLength))
            guard Int(decoded) == rawLength else {
                throw LogError.corruption("base block does not decompress to its recorded \(rawLength) bytes", path: path, offset: offset)
            }
        default:
            throw LogError.corruption("base block has unknown codec \(codec)", path: path, offset: offset)
        }
        return rawLength
    }
}
