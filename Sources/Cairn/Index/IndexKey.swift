import Foundation

/// The hash an index files a value under: equal values (by the rules of `==` in predicates)
/// hash equally. Strings are hashed in NFC, so canonically equivalent strings collide on
/// purpose; numbers by their numeric value; −0.0 as 0.0. Hash collisions of unequal values are
/// harmless: the objects a hash index returns are checked against the whole predicate.
enum IndexKey {
    static func hash(_ value: Value) -> UInt64 {
        var hasher = FNV64()
        switch QueryValue.normalized(value) {
        case .null: hasher.mix(0)
        case .string(let text), .uri(let text):
            hasher.mix(1)
            let canonical = text.utf8.allSatisfy { $0 < 0x80 } ? text : text.precomposedStringWithCanonicalMapping
            for byte in canonical.utf8 { hasher.mix(UInt64(byte)) }
        // Numbers of every kind meet as doubles (as predicates compare an integer with a
        // double): equal numbers hash equally; integers beyond 2^53 that round alike collide.
        case .integer(let number): hasher.number(Double(number))
        case .double(let number): hasher.number(number)
        case .decimal(let number): hasher.number(QueryValue.double(number))
        case .float(let number): hasher.number(Double(number))
        case .boolean(let flag): hasher.mix(flag ? 3 : 4)
        case .date(let date):
            hasher.mix(5)
            hasher.mix((date.timeIntervalSinceReferenceDate + 0.0).bitPattern)
        case .binary(let bytes):
            hasher.mix(6)
            for byte in bytes { hasher.mix(UInt64(byte)) }
        case .uuid(let id):
            hasher.mix(7)
            withUnsafeBytes(of: id.uuid) { for byte in $0 { hasher.mix(UInt64(byte)) } }
        }
        return hasher.finalized
    }

    /// FNV-1a over 64-bit words, with a final avalanche: FNV only carries bits upward, so the
    /// low bits of numbers stored as doubles (zero in whole numbers) would all agree, and the
    /// hash trie, which places keys by their low bits first, would build long single chains.
    struct FNV64 {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325

        /// The hash with every input bit spread over every output bit (MurmurHash3's fmix64).
        var finalized: UInt64 { avalanche(value) }

        mutating func mix(_ word: UInt64) {
            value ^= word
            value &*= 0x0000_0100_0000_01b3
        }

        /// A number by its double value, −0.0 as 0.0.
        mutating func number(_ number: Double) {
            mix(2)
            mix((number + 0.0).bitPattern)
        }
    }
}
