import CairnSupport
import struct Foundation.UUID

/// The layout of a base file: the state of a store as of one LSN, written by compaction, in
/// checksummed blocks of opaque entries (docs/FORMAT.md §8). The log knows nothing of what an
/// entry holds; the object graph writes and reads them (``BaseWriter``, ``BaseReader``).
///
/// ```
/// header (64 bytes) | block | block | … | index (16 bytes per block) | trailer (32 bytes)
/// block: stored length u32, raw length u32, codec u8, reserved 3, masked CRC32C u32, bytes
/// raw block: pieces of entries, each a u32 (its length; the top bit set when the entry goes
///            on in the next block's first piece) and its bytes
/// ```
package enum BaseFile {
    /// The base format version this code writes and reads.
    package static let formatVersion: UInt16 = 1
    static let magic: [UInt8] = Array("CAIRNBAS".utf8)
    static let headerSize = 64
    package static let blockHeaderSize = 16
    static let indexEntrySize = 16
    static let trailerSize = 32
    /// A block's codec byte: stored as is.
    static let rawCodec: UInt8 = 0
    /// A block's codec byte: one LZ4 block (written by LZ4 or LZ4-HC, read the same way).
    static let lz4Codec: UInt8 = 1

    /// Bytes a base writer writes between two syncs of the file (so that the disk never
    /// has much of it to write at once while saves wait for their own syncs).
    static let writebackInterval = 1 << 20
    /// The largest raw block: a longer entry is split into pieces across blocks.
    package static let maximumRawBlock = 256 << 10
    /// The most bytes a block of ``maximumRawBlock`` bytes can store: LZ4's bound for it.
    package static let maximumStoredBlock = maximumRawBlock + maximumRawBlock / 255 + 16
    /// The top bit of a piece's length: the entry continues in the next block.
    static let continues: UInt32 = 1 << 31
}

/// The 64 bytes at the start of a base file: magic, version, the store it belongs to, its
/// number and the LSN whose state it holds, under their own checksum.
struct BaseHeader: Equatable {
    var storeID: UUID
    var number: UInt64
    var lastLSN: LSN

    func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: BaseFile.headerSize)
        writer.write(bytes: BaseFile.magic)
        writer.write(BaseFile.formatVersion)
        writer.write(UInt16(0))  // flags
        writer.write(UInt32(BaseFile.headerSize))
        writer.write(bytes: withUnsafeBytes(of: storeID.uuid) { Array($0) })
        writer.write(number)
        writer.write(lastLSN.rawValue)
        writer.writeZeros(12)
        writer.write(writer.maskedChecksum(of: 0..<60))
        return writer.bytes
    }

    /// Parses a header: magic, checksum, version, flags, size.
    init(decoding raw: UnsafeRawBufferPointer, path: String) throws {
        guard raw.count >= BaseFile.headerSize else {
            throw LogError.corruption("base header is incomplete (\(raw.count) of \(BaseFile.headerSize) bytes)", path: path, offset: 0)
        }
        guard Array(raw[0..<8]) == BaseFile.magic else { throw LogError.corruption("not a Cairn base (bad magic)", path: path, offset: 0) }
        let stored = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 60, as: UInt32.self))
        guard stored == CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<60]))) else {
            throw LogError.corruption("base header checksum mismatch", path: path, offset: 0)
        }
        var reader = ByteReader(UnsafeRawBufferPointer(rebasing: raw[8..<60]))
        do {
            let version: UInt16 = try reader.read()
            guard version == BaseFile.formatVersion else {
                throw LogError.unsupportedVersion(of: "base", version, current: BaseFile.formatVersion, path: path, offset: 8)
            }
            let flags: UInt16 = try reader.read()
            guard flags == 0 else { throw LogError(.unsupportedFormat, "base flags \(flags) are unknown to this build", path: path, offset: 10) }
            let size: UInt32 = try reader.read()
            guard size == UInt32(BaseFile.headerSize) else { throw LogError.corruption("base header size \(size), expected 64", path: path, offset: 12) }
            var uuid = UUID().uuid
            let id = try reader.readBytes(16)
            withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: id) }
            storeID = UUID(uuid: uuid)
            number = try reader.read()
            lastLSN = LSN(try reader.read(UInt64.self))
        } catch let overrun as ByteReader.Overrun {
            throw LogError.corruption("base header is incomplete", path: path, offset: UInt64(8 + overrun.offset))
        }
    }

    init(storeID: UUID, number: UInt64, lastLSN: LSN) {
        self.storeID = storeID
        self.number = number
        self.lastLSN = lastLSN
    }
}

/// The last 32 bytes of a base file: where the index starts, how many blocks and entries there
/// are, and a checksum over the index and these fields.
struct BaseTrailer {
    var indexOffset: UInt64
    var blockCount: UInt64
    var entryCount: UInt64

    /// Reads the trailer's fields (its checksum is checked with the index it covers).
    init(decoding raw: UnsafeRawBufferPointer) {
        indexOffset = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
        blockCount = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        entryCount = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
    }

    /// The index and trailer bytes.
    static func encoded(blocks: [BaseBlock], entryCount: UInt64, indexOffset: UInt64) -> [UInt8] {
        var writer = ByteWriter(capacity: blocks.count * BaseFile.indexEntrySize + BaseFile.trailerSize)
        for block in blocks {
            writer.write(block.offset)
            writer.write(block.storedLength)
            writer.write(block.rawLength)
        }
        writer.write(indexOffset)
        writer.write(UInt64(blocks.count))
        writer.write(entryCount)
        writer.write(UInt32(0))
        writer.write(writer.maskedChecksum(of: 0..<writer.count))
        return writer.bytes
    }
}
