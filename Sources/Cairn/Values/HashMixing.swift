/// Spreads every bit of a 64-bit word over every bit of the result (MurmurHash3's fmix64), for
/// hashes whose low bits would otherwise agree. One-to-one, so it never adds collisions.
@inline(__always)
func avalanche(_ word: UInt64) -> UInt64 {
    var x = word
    x ^= x >> 33
    x &*= 0xFF51_AFD7_ED55_8CCD
    x ^= x >> 33
    x &*= 0xC4CE_B9FE_1A85_EC53
    x ^= x >> 33
    return x
}
