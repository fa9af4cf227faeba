import CLZ4
import CairnSupport
import struct Foundation.UUID

/// Reads a base file's entries in order, checking everything before it trusts it: the length
/// and checksum the manifest recorded, the header (store, number, LSN), the trailer and index
/// (every block where the one before ends, every length bounded before anything is allocated),
/// each block's checksum and decompressed length, each entry's length. Damage is
/// ``LogError/Code/corruption`` naming the file and the offset of the block.
public struct BaseReader: Sendable {
    /// The base file.
    public let path: String
    /// The LSN whose state the base holds.
    public let lastLSN: LSN
    /// The base's length in bytes.
    public let length: UInt64
    let number: UInt64
    let checksum: UInt32
    let storeID: UUID
    let io: any FileIO

    init(base: Manifest.Base, layout: StoreLayout, storeID: UUID, io: any FileIO) {
        self.path = layout.path(.base, base.number)
        self.lastLSN = base.lastLSN
        self.length = base.length
        self.number = base.number
        self.checksum = base.checksum
        self.storeID = storeID
        self.io = io
    }

    /// Where an entry is: the offset of its block in the file, for error messages.
    public struct Location: Sendable {
        package init(path: String, blockOffset: UInt64) {
            self.path = path
            self.blockOffset = blockOffset
        }

        /// The base file.
        public let path: String
        /// The offset of the entry's block.
        public let blockOffset: UInt64
    }

    /// Calls `body` with every entry, in the order they were written. Errors `body` throws
    /// stop the reading and are rethrown as they are.
    public func forEachEntry(_ body: (UnsafeRawBufferPointer, Location) throws -> Void) throws {
        let file = try io.open(path, mode: .readOnly)
        defer { io.close(file) }
        let size = try checkedSize(of: file)
        guard size >= UInt64(BaseFile.headerSize + BaseFile.trailerSize) else {
            throw LogError.corruption("base is too short (\(size) bytes)", path: path, offset: 0)
        }
        var headerBytes = [UInt8](repeating: 0, count: BaseFile.headerSize)
        try headerBytes.withUnsafeMutableBytes { try io.readExactly(file, into: $0, at: 0) }
        let header = try headerBytes.withUnsafeBytes { try BaseHeader(decoding: $0, path: path) }
        guard header.storeID == storeID else { throw LogError.corruption("base belongs to another store", path: path, offset: 16) }
        guard header.number == number, header.lastLSN == lastLSN else {
            throw LogError.corruption(
                "base header names base \(header.number) at LSN \(header.lastLSN); the manifest lists base \(number) at LSN \(lastLSN)", path: path,
                offset: 32)
        }
        let (blocks, tail, entryCount) = try readIndex(file, size: size)

        var crc = CRC32C.checksum(headerBytes)
        var stored = [UInt8](repeating: 0, count: BaseFile.blockHeaderSize + Int(LZ4_compressBound(Int32(BaseFile.maximumRawBlock))))
        var raw = [UInt8](repeating: 0, count: BaseFile.maximumRawBlock)
        var entries: UInt64 = 0
        // A long entry's pieces so far (grown as they come: bounded by the bytes read).
        var long: [UInt8] = []
        var continuing = false
        for block in blocks {
            let total = BaseFile.blockHeaderSize + Int(block.storedLength)
            try stored.withUnsafeMutableBytes { try io.readExactly(file, into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<total]), at: block.offset) }
            crc = stored.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<total]), extending: crc) }
            let rawCount = try stored.withUnsafeBytes { bytes in try raw.withUnsafeMutableBytes { try block.decode(bytes, into: $0, path: path) } }
            try raw.withUnsafeBytes { all in
                var position = 0
                let bytes = UnsafeRawBufferPointer(rebasing: all[0..<rawCount])
                while position < rawCount {
                    guard rawCount - position >= 4 else {
                        throw LogError.corruption("base block ends inside an entry's length", path: path, offset: block.offset)
                    }
                    let header = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt32.self))
                    let count = Int(header & ~BaseFile.continues)
                    guard count <= rawCount - position - 4 else {
                        throw LogError.corruption("base entry of \(count) bytes runs past the end of its block", path: path, offset: block.offset)
                    }
                    let piece = UnsafeRawBufferPointer(rebasing: bytes[(position + 4)..<(position + 4 + count)])
                    position += 4 + count
                    if header & BaseFile.continues != 0 {
                        // The entry goes on in the next block: this piece ends its block.
                        guard position == rawCount else {
                            throw LogError.corruption("a base entry continues from the middle of its block", path: path, offset: block.offset)
                        }
                        long.append(contentsOf: piece)
                        continuing = true
                        continue
                    }
                    if continuing {
                        long.append(contentsOf: piece)
                        try long.withUnsafeBytes { try body($0, Location(path: path, blockOffset: block.offset)) }
                        long = []
                        continuing = false
                    } else {
                        try body(piece, Location(path: path, blockOffset: block.offset))
                    }
                    entries += 1
                }
            }
        }
        guard !continuing else { throw LogError.corruption("the base's last entry is incomplete", path: path, offset: size - UInt64(BaseFile.trailerSize)) }
        crc = CRC32C.checksum(tail, extending: crc)
        guard entries == entryCount else {
            throw LogError.corruption("base holds \(entries) entries; its trailer says \(entryCount)", path: path, offset: size - UInt64(BaseFile.trailerSize))
        }
        guard CRC32C.mask(crc) == checksum else {
            throw LogError.corruption("base checksum does not match the manifest's", path: path, offset: 0)
        }
    }

    /// Checks that the file is there with the length the manifest recorded (an open that does
    /// not read the base).
    func checkLength() throws {
        let file = try io.open(path, mode: .readOnly)
        defer { io.close(file) }
        _ = try checkedSize(of: file)
    }

    /// The file's size, which must be the length the manifest recorded.
    private func checkedSize(of file: OpenFile) throws -> UInt64 {
        let size = try io.size(of: file)
        guard size == length else {
            throw LogError.corruption("base is \(size) bytes long; the manifest recorded \(length)", path: path, offset: min(size, length))
        }
        return size
    }

    /// Checks every block and entry without looking inside them (``forEachEntry(_:)``).
    public func verify() throws {
        try forEachEntry { _, _ in }
    }

    /// Reads and checks the trailer and the index; returns the blocks, the index and trailer
    /// bytes (the end of the file, for its checksum) and the entry count.
    private func readIndex(_ file: OpenFile, size: UInt64) throws -> ([BaseBlock], [UInt8], UInt64) {
        let trailerOffset = size - UInt64(BaseFile.trailerSize)
        var trailer = [UInt8](repeating: 0, count: BaseFile.trailerSize)
        try trailer.withUnsafeMutableBytes { try io.readExactly(file, into: $0, at: trailerOffset) }
        let (indexOffset, blockCount, entryCount) = trailer.withUnsafeBytes { raw in
            let fields = BaseTrailer(decoding: raw)
            return (fields.indexOffset, fields.blockCount, fields.entryCount)
        }
        // Bounded by the file before anything is allocated.
        let indexRoom = trailerOffset - UInt64(BaseFile.headerSize)
        guard blockCount <= indexRoom / UInt64(BaseFile.indexEntrySize), indexOffset >= UInt64(BaseFile.headerSize),
            indexOffset == trailerOffset - blockCount * UInt64(BaseFile.indexEntrySize)
        else {
            throw LogError.corruption("base trailer is damaged (index at \(indexOffset), \(blockCount) blocks)", path: path, offset: trailerOffset)
        }
        var tail = [UInt8](repeating: 0, count: Int(size - indexOffset))
        try tail.withUnsafeMutableBytes { try io.readExactly(file, into: $0, at: indexOffset) }
        let stored = tail.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: $0.count - 4, as: UInt32.self)) }
        guard stored == tail.withUnsafeBytes({ CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<($0.count - 4)]))) }) else {
            throw LogError.corruption("base index checksum mismatch", path: path, offset: indexOffset)
        }
        let maximumRaw = BaseFile.maximumRawBlock
        let maximumStored = Int(LZ4_compressBound(Int32(maximumRaw)))
        var blocks: [BaseBlock] = []
        blocks.reserveCapacity(Int(blockCount))
        var expected = UInt64(BaseFile.headerSize)
        try tail.withUnsafeBytes { raw in
            for index in 0..<Int(blockCount) {
                let at = index * BaseFile.indexEntrySize
                let block = BaseBlock(
                    offset: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt64.self)),
                    storedLength: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: at + 8, as: UInt32.self)),
                    rawLength: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: at + 12, as: UInt32.self)))
                guard block.offset == expected, Int(block.rawLength) <= maximumRaw, Int(block.storedLength) <= maximumStored,
                    UInt64(BaseFile.blockHeaderSize) + UInt64(block.storedLength) <= indexOffset - block.offset
                else {
                    throw LogError.corruption(
                        "base index entry \(index) is damaged (block at \(block.offset), \(block.storedLength) stored bytes, \(block.rawLength) raw)",
                        path: path, offset: indexOffset + UInt64(at))
                }
                blocks.append(block)
                expected = block.offset + UInt64(BaseFile.blockHeaderSize) + UInt64(block.storedLength)
            }
        }
        guard expected == indexOffset else {
            throw LogError.corruption("base blocks end at \(expected), not where the index starts (\(indexOffset))", path: path, offset: expected)
        }
        return (blocks, tail, entryCount)
    }
}
