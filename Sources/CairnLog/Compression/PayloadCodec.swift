import CLZ4
import CairnSupport

/// How the log compresses payloads.
public enum CompressionPolicy: Sendable, Equatable {
    /// Store every payload as it is.
    case none
    /// LZ4 each payload on its own.
    case lz4
    /// LZ4 against a dictionary of recent payloads, so that small records compress too
    /// (the default). Until the first dictionary is built, plain LZ4.
    case lz4Dictionary
}

/// A payload ready to be framed: compressed (or not) and checksummed, but not yet given an LSN.
package struct EncodedPayload: Sendable {
    package var codec: FrameCodec
    package var dictionaryID: UInt16
    package var rawLength: UInt32
    package var bytes: [UInt8]
    /// CRC32C (unmasked) of `bytes`, continuing that of the record's frames before it.
    package var checksum: UInt32
}

/// Compresses payloads for appending, and decompresses stored ones.
///
/// A payload is stored compressed only when LZ4 saves at least 5%; otherwise raw.
package final class PayloadCodec: Sendable {
    /// Payloads shorter than this are always stored raw.
    package static let smallestCompressed = 16
    /// Payloads longer than this (LZ4's `LZ4_MAX_INPUT_SIZE`) are always stored raw.
    package static let largestCompressed = 0x7E00_0000

    private let policy: CompressionPolicy
    private let dictionaries: Protected<[UInt16: CompressionDictionary]>
    private let current: Protected<CompressionDictionary?>
    private let trainer: Protected<DictionaryTrainer>
    private let scratch = Protected<[StreamBox]>([])

    package init(policy: CompressionPolicy, dictionaries: [CompressionDictionary], trainingThreshold: Int = DictionaryTrainingPolicy().threshold) {
        self.policy = policy
        self.dictionaries = Protected(Dictionary(uniqueKeysWithValues: dictionaries.map { ($0.id, $0) }))
        self.current = Protected(policy == .lz4Dictionary ? dictionaries.max { $0.id < $1.id } : nil)
        self.trainer = Protected(DictionaryTrainer(threshold: trainingThreshold))
    }

    deinit {
        scratch.withLock { boxes in boxes.forEach { $0.stream.deallocate() } }
    }

    /// The dictionary new payloads are compressed with, if any.
    package var currentDictionary: CompressionDictionary? { current.withLock { $0 } }

    /// All known dictionaries.
    package var allDictionaries: [CompressionDictionary] { dictionaries.withLock { Array($0.values) } }

    /// Makes a newly persisted dictionary the one new payloads use.
    package func install(_ dictionary: CompressionDictionary) {
        dictionaries.withLock { $0[dictionary.id] = dictionary }
        current.withLock { $0 = dictionary }
    }

    /// The dictionary with this id, if known.
    package func dictionary(_ id: UInt16) -> CompressionDictionary? { dictionaries.withLock { $0[id] } }

    /// When enough new samples arrived since the last dictionary, the bytes of a new one.
    package func trainIfReady() -> [UInt8]? {
        guard policy == .lz4Dictionary else { return nil }
        return trainer.withLock { trainer in trainer.isReady ? trainer.train() : nil }
    }

    /// Compresses (or not) and checksums a payload. `seed`: the checksum of the stored bytes
    /// of the record's frames before this one (0 for a record's first frame), which the
    /// checksum continues (docs/FORMAT.md §4).
    package func encode(_ payload: UnsafeRawBufferPointer, extending seed: UInt32 = 0) -> EncodedPayload {
        let raw = {
            EncodedPayload(
                codec: .raw, dictionaryID: 0, rawLength: UInt32(payload.count),
                bytes: Array(payload), checksum: CRC32C.checksum(payload, extending: seed))
        }
        // (LZ4 takes at most LZ4_MAX_INPUT_SIZE bytes: a larger frame, possible only with a
        // maximum frame size above it, is stored raw.)
        guard policy != .none, payload.count >= Self.smallestCompressed, payload.count <= Self.largestCompressed else { return raw() }
        if policy == .lz4Dictionary {
            trainer.withLock { if $0.wants(size: payload.count) { $0.add(payload) } }
        }
        let dictionary = policy == .lz4Dictionary ? currentDictionary : nil
        let bound = Int(LZ4_compressBound(Int32(payload.count)))
        let compressed = [UInt8](unsafeUninitializedCapacity: bound) { buffer, initialized in
            let destination = UnsafeMutableRawBufferPointer(buffer)
            if let dictionary {
                let box = takeScratch()
                initialized = dictionary.compress(payload, into: destination, scratch: box.stream)
                returnScratch(box)
            } else {
                initialized = Int(
                    LZ4_compress_default(
                        payload.baseAddress?.assumingMemoryBound(to: CChar.self),
                        destination.baseAddress?.assumingMemoryBound(to: CChar.self),
                        Int32(payload.count), Int32(bound)))
            }
        }
        guard !compressed.isEmpty, compressed.count * 20 <= payload.count * 19 else { return raw() }  // saves at least 5%
        return EncodedPayload(
            codec: dictionary == nil ? .lz4 : .lz4Dictionary, dictionaryID: dictionary?.id ?? 0,
            rawLength: UInt32(payload.count), bytes: compressed,
            checksum: CRC32C.checksum(compressed, extending: seed))
    }

    /// Why a stored payload could not be decoded.
    package enum DecodeFailure: Error, Sendable {
        case unknownDictionary(UInt16)
        case malformed
    }

    /// Decompresses a stored payload into a new array of exactly `rawLength` bytes.
    package func decode(_ stored: UnsafeRawBufferPointer, codec: FrameCodec, dictionaryID: UInt16, rawLength: Int) throws(DecodeFailure) -> [UInt8] {
        switch codec {
        case .raw:
            return Array(stored)
        case .lz4, .lz4Dictionary:
            var dictionary: CompressionDictionary?
            if codec == .lz4Dictionary {
                guard let found = self.dictionary(dictionaryID) else { throw .unknownDictionary(dictionaryID) }
                dictionary = found
            }
            // No writer compresses more than LZ4 takes: a longer frame is damage (and past Int32).
            guard stored.count <= Self.largestCompressed, rawLength <= Self.largestCompressed else { throw .malformed }
            var produced = -1
            let output = [UInt8](unsafeUninitializedCapacity: rawLength) { buffer, initialized in
                let destination = UnsafeMutableRawBufferPointer(buffer)
                LargeBuffer.adviseHugePages(destination)
                if let dictionary {
                    produced = dictionary.decompress(stored, into: destination)
                } else {
                    produced = Int(
                        LZ4_decompress_safe(
                            stored.baseAddress?.assumingMemoryBound(to: CChar.self),
                            destination.baseAddress?.assumingMemoryBound(to: CChar.self),
                            Int32(stored.count), Int32(rawLength)))
                }
                initialized = produced == rawLength ? rawLength : 0
            }
            guard produced == rawLength else { throw .malformed }
            return output
        }
    }

    private func takeScratch() -> StreamBox {
        if let box = scratch.withLock({ $0.popLast() }) { return box }
        let stream = UnsafeMutablePointer<LZ4_stream_t>.allocate(capacity: 1)
        LZ4_initStream(stream, MemoryLayout<LZ4_stream_t>.size)
        return StreamBox(stream: stream)
    }

    private func returnScratch(_ box: StreamBox) {
        scratch.withLock { $0.append(box) }
    }
}

/// An LZ4 working state in the scratch pool. Each is used by one compression at a time.
private struct StreamBox: @unchecked Sendable {
    let stream: UnsafeMutablePointer<LZ4_stream_t>
}
