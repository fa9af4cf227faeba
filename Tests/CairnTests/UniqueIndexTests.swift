import Testing
@testable import Cairn

/// The uniqueness index files objects by key hash, several under one hash when they collide, and
/// a copy (an older snapshot's) never sees the changes made to another.
@Suite struct UniqueIndexTests {
    /// `bulk`: the changes are queued and applied at the end, as replay builds the index.
    @Test(arguments: [false, true])
    func holdersFollowAddsAndRemovesAndCopiesStayApart(bulk: Bool) {
        var index = UniqueIndex()
        if bulk { index.startBulkBuild() }
        var reference: [UInt64: Set<ObjectID>] = [:]
        var generator = SystemRandomNumberGenerator()
        var older: [(UniqueIndex, [UInt64: Set<ObjectID>])] = []
        // Few distinct hashes, so that collisions and repeated adds are common.
        let hashes = (0..<300).map { _ in UInt64.random(in: 0...UInt64.max, using: &generator) }
        for step in 0..<20_000 {
            let hash = hashes[Int.random(in: 0..<hashes.count, using: &generator)]
            let id = ObjectID(entity: Int.random(in: 0..<2, using: &generator), key: UInt64.random(in: 1...40, using: &generator))
            if Bool.random(using: &generator) {
                index.add(hash, id)
                reference[hash, default: []].insert(id)
            } else {
                index.remove(hash, id)
                reference[hash]?.remove(id)
            }
            if step % 2500 == 0 { older.append((index, reference)) }
            if bulk, step % 5000 == 0 {
                for hash in hashes.prefix(20) { #expect(Set(index.holders(hash)) == reference[hash] ?? [], "during the bulk build") }
            }
        }
        if bulk { index.finishBulkBuild() }
        for hash in hashes { #expect(Set(index.holders(hash)) == reference[hash] ?? [], "hash \(hash)") }
        #expect(index.count == reference.values.reduce(0) { $0 + $1.count })
        for (var copy, expected) in older {
            if bulk { copy.finishBulkBuild() }
            for hash in hashes { #expect(Set(copy.holders(hash)) == expected[hash] ?? []) }
        }
        #expect(index.holders(12345).isEmpty)
    }
}
