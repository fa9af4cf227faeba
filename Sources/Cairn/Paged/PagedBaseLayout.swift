import CairnLog
import CairnSupport

/// The layout of a paged base file, the measured prototype of docs/SCALE.md's design for
/// stores larger than memory (not a store file: nothing but ``PagedBase`` reads it):
///
/// ```
/// blocks      base blocks (FORMAT.md §8: 16-byte header, LZ4), each holding whole objects
///             entries (FORMAT.md §8, kind 2), each a u32 length then its bytes
/// model       the model in Cairn's JSON model format
/// directory   per block: offset u64, stored length u32, raw length u32, first chunk u64
/// keys        per object with a key: (key hash u64, object key u64), sorted
/// fences      the hash of every 256th key (the keys' directory)
/// trailer     128 bytes (below)
/// ```
///
/// The trailer: model offset and length, directory offset and block count, keys offset and
/// count, fences offset and count, last LSN, next key, object count (u64 each); the key
/// constraint's owner and number, keys per fence, version (u32 each); 8 reserved bytes; a masked
/// CRC32C of the model, the directory, the fences and the trailer's first 112 bytes; 4 reserved
/// bytes; the magic `CAIRNPGB`. An open reads the trailer, the model, the directory and the
/// fences, and checks that checksum; each block is checked when it is first read. The keys are
/// read in place (mapped), bounded but not checksummed.
struct PagedBaseLayout: Equatable {
    static let magic: [UInt8] = Array("CAIRNPGB".utf8)
    static let version: UInt32 = 1
    static let trailerSize = 128
    static let directoryEntrySize = 24
    static let keyEntrySize = 16
    static let keysPerFence = 256

    var modelOffset: UInt64 = 0
    var modelLength: UInt64 = 0
    var directoryOffset: UInt64 = 0
    var blockCount: UInt64 = 0
    var keysOffset: UInt64 = 0
    var keyCount: UInt64 = 0
    var fencesOffset: UInt64 = 0
    var fenceCount: UInt64 = 0
    var lastLSN: UInt64 = 0
    var nextKey: UInt64 = 0
    var objectCount: UInt64 = 0
    var owner: UInt32 = 0
    var number: UInt32 = 0

    /// Where the model, the directory and the fences are in the file, in that order (bounded by
    /// the file once ``init(trailer:fileSize:path:)`` has checked them).
    var coveredRegions: [Range<Int>] {
        [(modelOffset, modelLength), (directoryOffset, blockCount * UInt64(Self.directoryEntrySize)), (fencesOffset, fenceCount * 8)].map {
            Int($0.0)..<Int($0.0 + $0.1)
        }
    }

    /// The unmasked CRC32C of ``coveredRegions`` in `file`: what the trailer's checksum extends.
    func regionsChecksum(_ file: UnsafeRawBufferPointer) -> UInt32 {
        coveredRegions.reduce(0) { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: file[$1]), extending: $0) }
    }

    /// The trailer's bytes; `checksum` is the unmasked CRC32C of the model, the directory and
    /// the fences, which the trailer's first 112 bytes extend.
    func trailer(extending checksum: UInt32) -> [UInt8] {
        var writer = ByteWriter(capacity: Self.trailerSize)
        for field in [modelOffset, modelLength, directoryOffset, blockCount, keysOffset, keyCount, fencesOffset, fenceCount, lastLSN, nextKey, objectCount] {
            writer.write(field)
        }
        writer.write(owner)
        writer.write(number)
        writer.write(UInt32(Self.keysPerFence))
        writer.write(Self.version)
        writer.write(UInt64(0))
        let crc = writer.bytes.withUnsafeBytes { CRC32C.checksum($0, extending: checksum) }
        writer.write(CRC32C.mask(crc))
        writer.write(UInt32(0))
        writer.write(bytes: Self.magic)
        return writer.bytes
    }

    /// Reads a trailer, checking its magic, version and that every region lies before it in
    /// order; returns it with its recorded checksum.
    init(trailer bytes: UnsafeRawBufferPointer, fileSize: UInt64, path: String) throws {
        func damaged(_ message: String, _ offset: UInt64) -> StoreError {
            StoreError(.corruptRecord, "paged base \(path): \(message)", file: path, offset: offset)
        }
        let start = fileSize - UInt64(Self.trailerSize)
        guard bytes.count == Self.trailerSize, Array(bytes[120..<128]) == Self.magic else { throw damaged("not a paged base (bad magic)", start) }
        var reader = ByteReader(bytes)
        do {
            modelOffset = try reader.read()
            modelLength = try reader.read()
            directoryOffset = try reader.read()
            blockCount = try reader.read()
            keysOffset = try reader.read()
            keyCount = try reader.read()
            fencesOffset = try reader.read()
            fenceCount = try reader.read()
            lastLSN = try reader.read()
            nextKey = try reader.read()
            objectCount = try reader.read()
            owner = try reader.read()
            number = try reader.read()
            let perFence: UInt32 = try reader.read()
            let version: UInt32 = try reader.read()
            guard version == Self.version, perFence == UInt32(Self.keysPerFence) else {
                throw StoreError(.unsupportedFormat, "paged base \(path): version \(version), \(perFence) keys a fence", file: path, offset: start + 96)
            }
        } catch is ByteReader.Overrun {
            throw damaged("the trailer is truncated", start)
        }
        // Each region starts where the one before ends, the last where the trailer starts.
        let regions: [(String, UInt64, UInt64, UInt64)] = [
            ("model", modelOffset, modelLength, 1), ("directory", directoryOffset, blockCount, UInt64(Self.directoryEntrySize)),
            ("keys", keysOffset, keyCount, UInt64(Self.keyEntrySize)), ("fences", fencesOffset, fenceCount, 8)
        ]
        var expected = modelOffset
        for (name, offset, count, size) in regions {
            let (length, overflow) = count.multipliedReportingOverflow(by: size)
            guard !overflow, offset == expected, offset <= start, length <= start - offset else {
                throw damaged("its \(name) (at \(offset), \(count) × \(size) bytes) does not fit the file", offset)
            }
            expected = offset + length
        }
        guard expected == start else { throw damaged("its regions end at \(expected), not at the trailer (\(start))", expected) }
        let fences = keyCount == 0 ? 0 : (keyCount - 1) / UInt64(Self.keysPerFence) + 1
        guard fenceCount == fences else { throw damaged("\(fenceCount) fences for \(keyCount) keys", fencesOffset) }
    }

    init() {}
}
