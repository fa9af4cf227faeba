import CairnSupport
import struct Foundation.UUID

/// The manifest: which files make up the store, and what is known of each.
///
/// It is small, rewritten only at a segment roll, a dictionary training or a compaction, and
/// always replaced atomically (see ``ManifestFile``). Byte layout: docs/FORMAT.md.
package struct Manifest: Equatable, Sendable {
    /// The newest manifest version this code writes and reads: 2 names a base; a manifest
    /// without one is written as version 1, which every earlier build reads.
    package static let formatVersion: UInt16 = 2
    /// The version of a manifest that names no base.
    package static let versionWithoutBase: UInt16 = 1
    /// The largest manifest accepted; a larger file is refused before it is read.
    package static let maximumSize = 16 << 20

    /// One segment file.
    package struct Segment: Equatable, Sendable {
        /// The segment's number (its file is `StoreLayout.name(.segment, number)`).
        package var number: UInt64
        /// A random value written into the segment header and every frame of the segment.
        package var epoch: UInt32
        /// The LSN of the segment's first frame.
        package var firstLSN: LSN
        /// Whether the segment is sealed (complete); only the last segment is not.
        package var isSealed: Bool
        /// For a sealed segment, its exact length in bytes; 0 for the active one.
        package var length: UInt64
        /// For a sealed segment, its number of frames; 0 for the active one.
        package var frameCount: UInt64
    }

    /// One compression dictionary file.
    package struct Dictionary: Equatable, Sendable {
        /// The dictionary's number, as frames name it.
        package var id: UInt16
        /// Its length in bytes.
        package var length: UInt32
        /// The masked CRC32C of its bytes.
        package var checksum: UInt32
    }

    /// A compacted base: the state as of ``lastLSN``, which replaces every frame up to it
    /// (written by compaction; absent until the first).
    package struct Base: Equatable, Sendable {
        /// The base file's number.
        package var number: UInt64
        /// The last LSN whose effect the base contains.
        package var lastLSN: LSN
        /// The base file's length in bytes.
        package var length: UInt64
        /// The masked CRC32C of the base file's bytes.
        package var checksum: UInt32
    }

    /// Increases by one at every rewrite.
    package var generation: UInt64
    /// A random identity, written into every segment header: bytes of another store are refused.
    package var storeID: UUID
    /// The segments, in order; the last one is the active segment.
    package var segments: [Segment]
    /// The dictionaries that frames may reference.
    package var dictionaries: [Dictionary]
    /// The compacted base, when there is one.
    package var base: Base?
    /// The largest frame payload the store may hold. Readers use it to bound lengths before
    /// allocating, so it is recorded here rather than left to each opener's options.
    package var maximumFrameSize: UInt32

    /// The active (last, unsealed) segment.
    package var activeSegment: Segment? { segments.last }

    /// The number the next new segment gets.
    package var nextSegmentNumber: UInt64 { (segments.last?.number ?? base?.number ?? 0) + 1 }
}

extension Manifest {
    private static let magic: [UInt8] = Array("CAIRNMAN".utf8)

    /// The manifest's bytes.
    package func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 64 + segments.count * 40)
        writer.write(bytes: Self.magic)
        writer.write(base == nil ? Self.versionWithoutBase : Self.formatVersion)
        writer.write(UInt16(0))  // flags
        writer.write(UInt32(0))  // body length, patched below
        let bodyStart = writer.count
        writer.write(generation)
        writer.write(bytes: withUnsafeBytes(of: storeID.uuid) { Array($0) })
        writer.write(maximumFrameSize)
        writer.write(UInt32(segments.count))
        for segment in segments {
            writer.write(segment.number)
            writer.write(segment.firstLSN.rawValue)
            writer.write(segment.length)
            writer.write(segment.frameCount)
            writer.write(segment.epoch)
            writer.write(UInt8(segment.isSealed ? 1 : 0))
            writer.writeZeros(3)
        }
        writer.write(UInt32(dictionaries.count))
        for dictionary in dictionaries {
            writer.write(UInt32(dictionary.id))
            writer.write(dictionary.length)
            writer.write(dictionary.checksum)
        }
        if let base {
            writer.write(UInt8(1))
            writer.write(base.number)
            writer.write(base.lastLSN.rawValue)
            writer.write(base.length)
            writer.write(base.checksum)
        } else {
            writer.write(UInt8(0))
        }
        writer.patch(UInt32(writer.count - bodyStart), at: 12)
        writer.write(writer.maskedChecksum(of: 0..<writer.count))
        return writer.bytes
    }

    /// Parses and checks a manifest; `path` is used in error messages.
    package init(decoding bytes: [UInt8], path: String) throws {
        func corrupt(_ message: String, _ offset: Int? = nil) -> LogError {
            LogError.corruption("manifest: " + message, path: path, offset: offset.map(UInt64.init))
        }
        self = try bytes.withUnsafeBytes { raw throws -> Manifest in
            var reader = ByteReader(raw)
            do {
                guard raw.count >= 20, Array(try reader.readBytes(8)) == Self.magic else {
                    throw corrupt("not a Cairn manifest (bad magic or too short)", 0)
                }
                let version: UInt16 = try reader.read()
                let flags: UInt16 = try reader.read()
                let bodyLength = Int(try reader.read(UInt32.self))
                guard bodyLength <= raw.count - 20 else { throw corrupt("body length \(bodyLength) runs past the end of the file", 12) }
                let checksumOffset = 16 + bodyLength
                var tail = ByteReader(raw, offset: checksumOffset)
                let stored: UInt32 = try tail.read()
                let actual = CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<checksumOffset])))
                guard stored == actual, tail.isAtEnd else { throw corrupt("checksum mismatch", checksumOffset) }
                // Checked after the checksum, so that a damaged version field reads as damage.
                guard (Self.versionWithoutBase...Self.formatVersion).contains(version) else {
                    throw LogError.unsupportedVersion(of: "manifest", version, current: Self.formatVersion, path: path, offset: 8)
                }
                guard flags == 0 else { throw LogError(.unsupportedFormat, "manifest flags \(flags) are unknown to this build", path: path, offset: 10) }

                let generation: UInt64 = try reader.read()
                let idBytes = try reader.readBytes(16)
                var uuid = UUID().uuid
                withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: idBytes) }
                let maximumFrameSize: UInt32 = try reader.read()
                let segmentCount = Int(try reader.read(UInt32.self))
                guard segmentCount * 40 <= reader.remaining else { throw corrupt("segment count \(segmentCount) does not fit", reader.offset - 4) }
                var segments: [Segment] = []
                segments.reserveCapacity(segmentCount)
                for _ in 0..<segmentCount {
                    let number: UInt64 = try reader.read()
                    let firstLSN: UInt64 = try reader.read()
                    let length: UInt64 = try reader.read()
                    let frameCount: UInt64 = try reader.read()
                    let epoch: UInt32 = try reader.read()
                    let sealed: UInt8 = try reader.read()
                    guard sealed <= 1, Array(try reader.readBytes(3)) == [0, 0, 0] else {
                        throw corrupt("segment record \(number) has an invalid state or reserved bytes", reader.offset - 4)
                    }
                    segments.append(
                        Segment(
                            number: number, epoch: epoch, firstLSN: LSN(firstLSN),
                            isSealed: sealed == 1, length: length, frameCount: frameCount))
                }
                let dictionaryCount = Int(try reader.read(UInt32.self))
                guard dictionaryCount * 12 <= reader.remaining else { throw corrupt("dictionary count \(dictionaryCount) does not fit", reader.offset - 4) }
                var dictionaries: [Dictionary] = []
                for _ in 0..<dictionaryCount {
                    let id: UInt32 = try reader.read()
                    let length: UInt32 = try reader.read()
                    let checksum: UInt32 = try reader.read()
                    guard id > 0, id <= UInt32(UInt16.max) else { throw corrupt("dictionary id \(id) out of range", reader.offset - 12) }
                    dictionaries.append(Dictionary(id: UInt16(id), length: length, checksum: checksum))
                }
                var base: Base?
                let hasBase: UInt8 = try reader.read()
                guard hasBase <= 1 else { throw corrupt("invalid base flag \(hasBase)", reader.offset - 1) }
                if hasBase == 1 {
                    // Only version 2 names a base; no build writes a version 1 manifest with one.
                    guard version == Self.formatVersion else { throw corrupt("a version 1 manifest names a base", reader.offset - 1) }
                    base = Base(
                        number: try reader.read(), lastLSN: LSN(try reader.read(UInt64.self)),
                        length: try reader.read(), checksum: try reader.read())
                }
                guard reader.offset == checksumOffset else {
                    throw corrupt("\(checksumOffset - reader.offset) unexpected bytes after the last record", reader.offset)
                }
                let manifest = Manifest(
                    generation: generation, storeID: UUID(uuid: uuid), segments: segments,
                    dictionaries: dictionaries, base: base, maximumFrameSize: maximumFrameSize)
                try manifest.checkInvariants(path: path)
                return manifest
            } catch let overrun as ByteReader.Overrun {
                throw corrupt("truncated record (\(overrun.wanted) bytes wanted)", overrun.offset)
            }
        }
    }

    /// Checks what every manifest must satisfy: increasing segment numbers, one active segment
    /// at the end, and LSNs that continue from one segment to the next; with a base, the first
    /// segment starts no later than the LSN after the base's (frames up to the base's LSN that
    /// it still holds are not replayed).
    package func checkInvariants(path: String) throws {
        func fail(_ message: String) -> LogError { LogError.corruption("manifest: " + message, path: path) }
        guard let last = segments.last else { throw fail("no segments") }
        guard !last.isSealed else { throw fail("the last segment is sealed; there is no active segment") }
        if let base, base.lastLSN > .maximum { throw fail("base ends at LSN \(base.lastLSN), above the largest LSN \(LSN.maximum)") }
        if let base, !(1...StoreLayout.largestNumber).contains(base.number) {
            throw fail("base number \(base.number) is outside 1...\(StoreLayout.largestNumber)")
        }
        if let base, segments[0].firstLSN > base.lastLSN.next {
            throw fail("segment \(segments[0].number) starts at LSN \(segments[0].firstLSN), after the base's LSN \(base.lastLSN) + 1")
        }
        var expectedLSN = segments[0].firstLSN
        for (index, segment) in segments.enumerated() {
            guard (1...StoreLayout.largestNumber).contains(segment.number) else {
                throw fail("segment number \(segment.number) is outside 1...\(StoreLayout.largestNumber)")
            }
            // Both at most 2^63 - 1, so that their sum (the next segment's first LSN) cannot wrap.
            guard segment.firstLSN <= .maximum, segment.frameCount <= LSN.maximum.rawValue,
                segment.firstLSN.rawValue + segment.frameCount <= LSN.maximum.rawValue + 1
            else {
                throw fail("segment \(segment.number) runs past the largest LSN \(LSN.maximum) (first LSN \(segment.firstLSN), \(segment.frameCount) frames)")
            }
            if index > 0 && segment.number <= segments[index - 1].number { throw fail("segment numbers are not increasing") }
            if index < segments.count - 1 && !segment.isSealed { throw fail("segment \(segment.number) is not the last yet is not sealed") }
            guard segment.firstLSN == expectedLSN, segment.firstLSN.rawValue > 0 else {
                throw fail("segment \(segment.number) starts at LSN \(segment.firstLSN), expected \(expectedLSN)")
            }
            expectedLSN = LSN(segment.firstLSN.rawValue + segment.frameCount)
        }
        if Set(dictionaries.map(\.id)).count != dictionaries.count { throw fail("duplicate dictionary ids") }
        if maximumFrameSize == 0 || maximumFrameSize > UInt32.max - UInt32(FrameHeader.size) {
            throw fail("maximum frame size \(maximumFrameSize) out of range")
        }
    }
}
