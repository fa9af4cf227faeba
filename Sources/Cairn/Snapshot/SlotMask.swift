/// A set of a chunk's slots (0..<256), one bit each: what a column scan computes for a chunk
/// (the slots a comparison holds for, those it cannot decide) and combines with `&`, `|`, `~`.
struct SlotMask: Equatable, Sendable {
    /// Bit `slot % 64` of word `slot / 64`.
    var words: SIMD4<UInt64>

    /// The slots of a chunk (``Tuning/objectChunkSize``, which an invariant check holds to this).
    static let slots = 256

    static let none = SlotMask(words: .zero)
    static let all = SlotMask(words: SIMD4(repeating: .max))

    /// Whether no slot is in.
    var isEmpty: Bool { words == .zero }

    /// How many slots are in.
    var count: Int {
        words[0].nonzeroBitCount + words[1].nonzeroBitCount + words[2].nonzeroBitCount + words[3].nonzeroBitCount
    }

    @inline(__always)
    func contains(_ slot: Int) -> Bool { words[slot >> 6] & (1 << UInt64(slot & 63)) != 0 }

    @inline(__always)
    mutating func insert(_ slot: Int) { words[slot >> 6] |= 1 << UInt64(slot & 63) }

    /// Calls `body` with each slot in, in increasing order.
    @inline(__always)
    func forEach(_ body: (Int) throws -> Void) rethrows {
        for word in 0..<4 {
            var bits = words[word]
            while bits != 0 {
                try body(word << 6 | bits.trailingZeroBitCount)
                bits &= bits &- 1
            }
        }
    }

    static func & (a: SlotMask, b: SlotMask) -> SlotMask { SlotMask(words: a.words & b.words) }
    static func | (a: SlotMask, b: SlotMask) -> SlotMask { SlotMask(words: a.words | b.words) }
    static prefix func ~ (a: SlotMask) -> SlotMask { SlotMask(words: ~a.words) }
}
