/// A 64-bit key of a persistent hash trie that is already a good hash (an FNV hash of a value,
/// or a dense chunk number): the trie uses it as it is, without hashing it again with SipHash,
/// which cost more than the rest of an index update.
struct TrieKey: Hashable, Sendable {
    let value: UInt64

    init(_ value: UInt64) { self.value = value }

    static func == (lhs: TrieKey, rhs: TrieKey) -> Bool { lhs.value == rhs.value }

    func hash(into hasher: inout Hasher) { hasher.combine(value) }

    // The hash tries of swift-collections place keys by this value.
    func _rawHashValue(seed: Int) -> Int { Int(truncatingIfNeeded: value ^ UInt64(truncatingIfNeeded: seed)) }
}
