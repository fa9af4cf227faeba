import CairnSupport
import HashTreeCollections

/// Where the object table's chunks are, by chunk number: a persistent two-level table.
///
/// Object keys come from one counter, so chunk numbers are dense and small: chunk `n` is entry
/// `n % 256` of leaf `n / 256`, two array reads with no hashing (a lookup by key is on the path
/// of every object read). Both levels are copy-on-write arrays, so a copy of the directory
/// shares everything and a change copies the top level (one reference per 65,536 objects) and
/// the leaf it touches. Chunk numbers past ``Tuning/directoryNearLimit`` (keys no counter reaches, as a damaged
/// or forged store may hold) go to a hash trie instead, so that no key can make the table large.
struct ChunkDirectory<Chunk: AnyObject & Sendable>: Sendable {
    private static var leafSize: Int { Tuning.directoryLeafSize }
    private static var nearLimit: UInt64 { Tuning.directoryNearLimit }

    /// Leaves of chunks by number (each empty or ``Tuning/directoryLeafSize`` long). Internal,
    /// not private, only so that the tests can damage it and see ``checkInvariants()`` fail.
    var leaves: [[Chunk?]] = []
    /// Chunks past the near limit, by number.
    private(set) var far: TreeDictionary<TrieKey, Chunk> = [:]

    /// The chunk with this number, if any.
    subscript(number: UInt64) -> Chunk? {
        guard number < Self.nearLimit else { return far[TrieKey(number)] }
        let leaf = Int(number) / Self.leafSize
        guard leaf < leaves.count, !leaves[leaf].isEmpty else { return nil }
        return leaves[leaf][Int(number) % Self.leafSize]
    }

    /// The chunk with this number, this directory's alone: made with `make` when missing, a
    /// copy (`copy`) when another directory shares it.
    mutating func unique(_ number: UInt64, make: () -> Chunk, copy: (Chunk) -> Chunk) -> Chunk {
        guard number < Self.nearLimit else {
            let key = TrieKey(number)
            if far[key] == nil {
                far[key] = make()
            } else if !isKnownUniquelyReferenced(&far[key]) {
                far[key] = far[key].map(copy)
            }
            return far[key] ?? make()
        }
        let leaf = Int(number) / Self.leafSize, slot = Int(number) % Self.leafSize
        if leaf >= leaves.count { leaves.append(contentsOf: repeatElement([], count: leaf + 1 - leaves.count)) }
        if leaves[leaf].isEmpty { leaves[leaf] = Array(repeating: nil, count: Self.leafSize) }
        // The access below copies a shared leaf first, which then shares its chunks: a chunk is
        // unique only when no other directory can reach it.
        if leaves[leaf][slot] == nil {
            leaves[leaf][slot] = make()
        } else if !isKnownUniquelyReferenced(&leaves[leaf][slot]) {
            leaves[leaf][slot] = leaves[leaf][slot].map(copy)
        }
        checkAfterMutation { () throws(InvariantViolation) in try checkInvariants() }
        return leaves[leaf][slot] ?? make()
    }

    /// Removes a chunk.
    mutating func remove(_ number: UInt64) {
        guard number < Self.nearLimit else {
            far[TrieKey(number)] = nil
            return
        }
        let leaf = Int(number) / Self.leafSize
        guard leaf < leaves.count, !leaves[leaf].isEmpty else { return }
        leaves[leaf][Int(number) % Self.leafSize] = nil
        checkAfterMutation { () throws(InvariantViolation) in try checkInvariants() }
    }

    /// Every chunk with its number: the near ones in order of number, then the far ones.
    var all: [(number: UInt64, chunk: Chunk)] {
        var all: [(number: UInt64, chunk: Chunk)] = []
        for (leafIndex, leaf) in leaves.enumerated() {
            for (slot, chunk) in leaf.enumerated() {
                if let chunk { all.append((UInt64(leafIndex * Self.leafSize + slot), chunk)) }
            }
        }
        for (key, chunk) in far.sorted(by: { $0.key.value < $1.key.value }) { all.append((key.value, chunk)) }
        return all
    }
}
