import CCairnSupport
import CairnTestSupport
import Testing

/// The vector searches a text scan starts with (`cairn_find_either_byte`,
/// `cairn_find_byte_pair`, and the word-at-a-time forms other CPUs run) find what a byte-by-byte
/// search finds, at every length and start around their 8-, 16- and 32-byte blocks.
@Suite struct ByteSearchTests {
    static func naivePair(_ bytes: [UInt8], from: Int, _ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) -> Int {
        var index = from
        while index + 1 < bytes.count {
            if (bytes[index] == a || bytes[index] == b) && (bytes[index + 1] == c || bytes[index + 1] == d) { return index }
            index += 1
        }
        return bytes.count
    }

    static func naiveEither(_ bytes: [UInt8], from: Int, _ a: UInt8, _ b: UInt8) -> Int {
        bytes.indices.dropFirst(from).first { bytes[$0] == a || bytes[$0] == b } ?? bytes.count
    }

    @Test func vectorSearchesFindWhatAByteByByteSearchFinds() {
        var random = SeededRandom(seed: 7)
        for length in 0..<100 {
            for _ in 0..<20 {
                // A small alphabet, so that places found are common and pairs straddle blocks.
                let bytes = (0..<length).map { _ in [UInt8(ascii: "a"), UInt8(ascii: "A"), UInt8(ascii: "9"), 0x80, 0xFF, 0][Int(random.next() % 6)] }
                let from = length == 0 ? 0 : Int(random.next() % UInt64(length + 1))
                let (a, b, c, d): (UInt8, UInt8, UInt8, UInt8) = (UInt8(ascii: "9"), UInt8(ascii: "a"), 0xFF, UInt8(ascii: "A"))
                bytes.withUnsafeBufferPointer { buffer in
                    let base = buffer.baseAddress ?? UnsafePointer(bitPattern: 16)!
                    #expect(cairn_find_byte_pair(base, length, from, a, b, c, d) == Self.naivePair(bytes, from: from, a, b, c, d), "\(bytes) from \(from)")
                    #expect(cairn_find_either_byte(base, length, from, 0x80, 0) == Self.naiveEither(bytes, from: from, 0x80, 0), "\(bytes) from \(from)")
                    #expect(cairn_find_byte_pair_portable(base, length, from, a, b, c, d) == Self.naivePair(bytes, from: from, a, b, c, d))
                    #expect(cairn_find_either_byte_portable(base, length, from, 0x80, 0) == Self.naiveEither(bytes, from: from, 0x80, 0))
                }
            }
        }
    }
}
