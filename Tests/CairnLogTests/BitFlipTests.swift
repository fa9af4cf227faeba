import CairnTestSupport
import Foundation
import Testing
@testable import CairnLog

@Suite struct BitFlipTests {
    /// Flips bits of the first (sealed) segment and checks that opening refuses each one with a
    /// corruption error naming the file and an offset at or before the flipped byte.
    func checkFlips(segmentSize: Int, frames: Int, bits: (Int) -> [Int]) async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        var writing = smallSegments(segmentSize)
        writing.compression = .none
        let log = try Log.open(at: store, options: writing)
        for index in 0..<frames { try await log.append(payload(index, size: 200 + index % 50)) }
        try await log.close()
        let segments = try segmentFiles(store)
        try #require(segments.count >= 2)
        let sealed = segments[0]
        let original = try contents(sealed)
        var options = LogOptions()
        options.readOnly = true
        var detected = 0
        let chosen = bits(original.count * 8)
        for bit in chosen {
            var bytes = original
            bytes[bit / 8] ^= UInt8(1 << (bit % 8))
            try write(bytes, to: sealed)
            do {
                _ = try Log.open(at: store, options: options)
                Issue.record("flip of bit \(bit) (byte \(bit / 8)) was not detected")
            } catch let error as LogError {
                #expect(error.code == .corruption, "bit \(bit): \(error)")
                #expect(error.path == sealed, "bit \(bit): \(error)")
                let offset = try #require(error.offset, "bit \(bit): no offset in \(error)")
                #expect(offset <= UInt64(bit / 8), "bit \(bit): offset \(offset)")
                #expect(error.description.contains(sealed))
                detected += 1
            }
        }
        try write(original, to: sealed)
        #expect(detected == chosen.count)
        #expect(try readAll(store).count == frames)
    }

    @Test func everyBitOfASmallSealedSegment() async throws {
        try await checkFlips(segmentSize: 4096, frames: 40) { Array(0..<$0) }
    }

    @Test func twoThousandRandomBitsOfALargeSealedSegment() async throws {
        var generator = TestSeed.generator()
        try await checkFlips(segmentSize: 1 << 20, frames: 5000) { count in
            (0..<2000).map { _ in Int.random(in: 0..<count, using: &generator) }
        }
    }
}
