import CLZ4
import CairnSupport

/// An LZ4 dictionary: bytes that small payloads are compressed against, so that a 200-byte
/// record compresses although it repeats little of itself.
///
/// LZ4 needs no real training: a dictionary is a sample of earlier payloads that later ones can
/// refer back to. The dictionary is hashed once (`LZ4_loadDict`) into a primed stream; each
/// compression copies that stream instead of hashing the dictionary again.
package final class CompressionDictionary: @unchecked Sendable {
    // Safety: `bytes` and `primed` are written only in `init` and freed in `deinit`; afterwards
    // they are only read, so sharing between threads is safe.

    /// The largest dictionary LZ4 can use (its window).
    package static let maximumSize = 64 * 1024

    /// The id that frames compressed with it carry.
    package let id: UInt16
    private let bytes: UnsafeMutableRawBufferPointer
    private let primed: UnsafeMutablePointer<LZ4_stream_t>

    /// Wraps dictionary bytes (at most ``maximumSize``; longer input keeps its end).
    package init(id: UInt16, bytes source: [UInt8]) {
        self.id = id
        let kept = source.suffix(Self.maximumSize)
        bytes = .allocate(byteCount: max(1, kept.count), alignment: 16)
        bytes.copyBytes(from: kept)
        primed = .allocate(capacity: 1)
        LZ4_initStream(primed, MemoryLayout<LZ4_stream_t>.size)
        LZ4_loadDict(primed, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(kept.count))
        count = kept.count
    }

    deinit {
        bytes.deallocate()
        primed.deallocate()
    }

    /// The dictionary's length in bytes.
    package let count: Int

    /// The dictionary's bytes.
    package var contents: [UInt8] { Array(UnsafeRawBufferPointer(rebasing: bytes[0..<count])) }

    /// Compresses `source` into `destination` using `scratch` as working state; returns the
    /// compressed size, or 0 when it does not fit.
    package func compress(
        _ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer,
        scratch: UnsafeMutablePointer<LZ4_stream_t>
    ) -> Int {
        cairn_lz4_copy_stream(scratch, primed)
        return Int(
            LZ4_compress_fast_continue(
                scratch, source.baseAddress?.assumingMemoryBound(to: CChar.self),
                destination.baseAddress?.assumingMemoryBound(to: CChar.self),
                Int32(source.count), Int32(destination.count), 1))
    }

    /// Decompresses a block made by ``compress(_:into:scratch:)``; returns the number of bytes
    /// produced, or a negative number when the block is malformed.
    package func decompress(_ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer) -> Int {
        Int(
            LZ4_decompress_safe_usingDict(
                source.baseAddress?.assumingMemoryBound(to: CChar.self),
                destination.baseAddress?.assumingMemoryBound(to: CChar.self),
                Int32(source.count), Int32(destination.count),
                bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(count)))
    }
}

extension CompressionDictionary {
    private static let magic: [UInt8] = Array("CAIRNDIC".utf8)
    /// The version of the dictionary file format this build writes and reads.
    package static let formatVersion: UInt16 = 1

    /// The masked CRC32C of the dictionary's bytes, as the manifest records it.
    package var checksum: UInt32 {
        CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<count])))
    }

    /// The dictionary file's bytes: magic, version, id, length, the bytes, a masked CRC32C.
    package func fileContents() -> [UInt8] {
        var writer = ByteWriter(capacity: count + 24)
        writer.write(bytes: Self.magic)
        writer.write(Self.formatVersion)
        writer.write(id)
        writer.write(UInt32(count))
        writer.write(bytes: UnsafeRawBufferPointer(rebasing: bytes[0..<count]))
        writer.write(writer.maskedChecksum(of: 0..<writer.count))
        return writer.bytes
    }

    /// Reads a dictionary file and checks it against the manifest's record.
    package convenience init(file: [UInt8], expected: Manifest.Dictionary, path: String) throws {
        let (id, body) = try Self.parse(file, path: path)
        guard id == expected.id, body.count == Int(expected.length) else {
            throw LogError.corruption("dictionary \(id) of \(body.count) bytes does not match the manifest's \(expected.id) of \(expected.length)", path: path)
        }
        self.init(id: expected.id, bytes: body)
        guard checksum == expected.checksum else {
            throw LogError.corruption("dictionary bytes do not match the manifest's checksum", path: path)
        }
    }

    /// Reads a dictionary file that no manifest lists (salvage of a stale manifest), checked
    /// by its own checksum and against the id its name gives.
    package convenience init(unlistedFile file: [UInt8], id expectedID: UInt64, path: String) throws {
        let (id, body) = try Self.parse(file, path: path)
        guard UInt64(id) == expectedID else { throw LogError.corruption("dictionary file holds dictionary \(id)", path: path, offset: 10) }
        self.init(id: id, bytes: body)
    }

    /// A dictionary file's id and bytes, after its magic, checksum, version and length checks.
    private static func parse(_ file: [UInt8], path: String) throws -> (id: UInt16, body: [UInt8]) {
        try file.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            do {
                guard Array(try reader.readBytes(8)) == Self.magic else { throw LogError.corruption("not a Cairn dictionary", path: path, offset: 0) }
                let version: UInt16 = try reader.read()
                let id: UInt16 = try reader.read()
                let length = Int(try reader.read(UInt32.self))
                let body = Array(try reader.readBytes(length))
                let end = reader.offset
                let stored: UInt32 = try reader.read()
                guard stored == CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<end]))), reader.isAtEnd else {
                    throw LogError.corruption("dictionary checksum mismatch", path: path, offset: UInt64(end))
                }
                guard version == Self.formatVersion else {
                    throw LogError.unsupportedVersion(of: "dictionary", version, current: Self.formatVersion, path: path, offset: 8)
                }
                guard id > 0, length <= Self.maximumSize else {
                    throw LogError.corruption("dictionary \(id) of \(length) bytes is out of range", path: path, offset: 10)
                }
                return (id, body)
            } catch let overrun as ByteReader.Overrun {
                throw LogError.corruption("dictionary file truncated", path: path, offset: UInt64(overrun.offset))
            }
        }
    }
}
