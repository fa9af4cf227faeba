import CairnTestSupport
import CairnLog
import Synchronization
import Testing
@testable import Cairn

/// The uniqueness index files objects by key hash, several under one hash when they collide;
/// every snapshot reads it as of its own LSN, so an older snapshot never sees a later save, a
/// refused save leaves no trace, and a branch off an older state gets a copy of its own.
@Suite struct UniqueIndexTests {
    private typealias Reference = [UInt64: Set<ObjectID>]

    /// Random adds and removes, a few dozen per save, against a reference kept per LSN.
    private struct Workload {
        var generator = TestSeed.generator()
        // Few distinct hashes, so that collisions and repeated adds and removes are common.
        let hashes: [UInt64]

        init() {
            var generator = TestSeed.generator()
            hashes = (0..<300).map { _ in UInt64.random(in: 0...UInt64.max, using: &generator) }
        }

        mutating func save(_ index: UniqueIndex, at lsn: LSN, _ reference: inout Reference, changes: Int = 40) {
            for _ in 0..<changes {
                let hash = hashes[Int.random(in: 0..<hashes.count, using: &generator)]
                let id = ObjectID(entity: Int.random(in: 0..<2, using: &generator), key: UInt64.random(in: 1...40, using: &generator))
                if Bool.random(using: &generator) {
                    index.add(hash, id, at: lsn)
                    reference[hash, default: []].insert(id)
                } else {
                    index.remove(hash, id, at: lsn)
                    reference[hash]?.remove(id)
                    if reference[hash]?.isEmpty == true { reference[hash] = nil }
                }
            }
        }
    }

    private func check(_ index: UniqueIndex, at lsn: LSN, equals reference: Reference, _ hashes: [UInt64], _ comment: Comment) {
        for hash in hashes {
            #expect(Set(index.holders(hash, at: lsn)) == reference[hash] ?? [], comment)
        }
    }

    @Test func everyLSNSeesItsOwnState() throws {
        var workload = Workload()
        let index = UniqueIndex()
        var reference: Reference = [:]
        var states: [(LSN, Reference)] = []
        for number in 1...400 {
            let lsn = LSN(UInt64(number))
            index.register(lsn)
            index.begin(lsn)
            workload.save(index, at: lsn, &reference)
            states.append((lsn, reference))
        }
        for (lsn, expected) in states { check(index, at: lsn, equals: expected, workload.hashes, "as of \(lsn)") }
        #expect(index.count == reference.values.reduce(0) { $0 + $1.count })
        #expect(index.holders(12345, at: LSN(400)).isEmpty)
        // A lookup that tests rows finds the first holder that passes.
        let hash = try #require(workload.hashes.first { reference[$0]?.isEmpty == false })
        let wanted = try #require(reference[hash]?.max())
        #expect(index.firstHolder(hash, at: LSN(400)) { $0 == wanted } == wanted)
        #expect(index.firstHolder(hash, at: LSN(400)) { _ in false } == nil)
    }

    @Test func anAddSaysWhenAnotherObjectSharesTheHash() {
        let index = UniqueIndex()
        index.begin(LSN(1))
        #expect(!index.add(7, ObjectID(entity: 0, key: 1), at: LSN(1)))
        #expect(index.add(7, ObjectID(entity: 0, key: 2), at: LSN(1)), "a second object under the hash")
        #expect(!index.add(8, ObjectID(entity: 0, key: 3), at: LSN(1)))
        index.begin(LSN(2))
        index.remove(7, ObjectID(entity: 0, key: 1), at: LSN(2))
        index.remove(7, ObjectID(entity: 0, key: 2), at: LSN(2))
        #expect(!index.add(7, ObjectID(entity: 1, key: 1), at: LSN(2)), "removed entries share nothing")
        // Many at once: the objects whose hash is shared, whatever their order.
        index.begin(LSN(3))
        let keys = (10..<1010 as Range<UInt64>).map { UniqueIndex.Key(hash: $0 % 500 == 0 ? 8 : $0 &* 0x9E37_79B9, id: ObjectID(entity: 2, key: $0)) }
        let shared = index.add(keys.reversed(), at: LSN(3))
        #expect(Set(shared) == [ObjectID(entity: 2, key: 500), ObjectID(entity: 2, key: 1000)], "both share hash 8 with object 0:3")
        #expect(index.holders(8, at: LSN(3)).count == 3)
        #expect(index.count == 2 + 1000)
        for key in keys { #expect(index.holders(key.hash, at: LSN(3)).contains(key.id)) }
        #expect(index.holders(8, at: LSN(2)) == [ObjectID(entity: 0, key: 3)], "not before their save")
    }

    @Test func aRolledBackSaveLeavesNoTrace() {
        var workload = Workload()
        let index = UniqueIndex()
        var reference: Reference = [:]
        for number in 1...50 {
            let lsn = LSN(UInt64(number))
            index.register(lsn)
            index.begin(lsn)
            workload.save(index, at: lsn, &reference)
        }
        var refused = reference
        index.begin(LSN(51))
        workload.save(index, at: LSN(51), &refused, changes: 400)
        #expect(!index.canApply(after: LSN(50)))
        index.rollback(LSN(51))
        #expect(index.canApply(after: LSN(50)))
        check(index, at: LSN(51), equals: reference, workload.hashes, "a refused save is undone")
        #expect(index.count == reference.values.reduce(0) { $0 + $1.count })
        // The next save takes the refused one's LSN.
        index.begin(LSN(51))
        workload.save(index, at: LSN(51), &reference)
        check(index, at: LSN(51), equals: reference, workload.hashes, "the save after a refused one")
    }

    @Test func aBranchGetsACopyAsOfItsLSN() {
        var workload = Workload()
        let index = UniqueIndex()
        var reference: Reference = [:]
        for number in 1...30 {
            index.begin(LSN(UInt64(number)))
            workload.save(index, at: LSN(UInt64(number)), &reference)
        }
        var atTwenty: Reference = [:]
        // What LSN 20 sees (checked against the reference by everyLSNSeesItsOwnState), then a
        // branch there.
        for hash in workload.hashes {
            let holders = Set(index.holders(hash, at: LSN(20)))
            if !holders.isEmpty { atTwenty[hash] = holders }
        }
        #expect(!index.canApply(after: LSN(20)), "LSN 30 was applied after 20")
        let branch = index.copy(asOf: LSN(20))
        #expect(branch.canApply(after: LSN(20)))
        var branchReference = atTwenty
        branch.begin(LSN(21))
        workload.save(branch, at: LSN(21), &branchReference)
        check(branch, at: LSN(21), equals: branchReference, workload.hashes, "the branch's own save")
        check(index, at: LSN(30), equals: reference, workload.hashes, "the line is untouched by the branch")
        check(index, at: LSN(20), equals: atTwenty, workload.hashes, "older states too")
    }

    @Test func removedEntriesStayWhileASnapshotCanReadThem() {
        let index = UniqueIndex()
        let hash: UInt64 = 42
        index.register(LSN(1))
        index.begin(LSN(1))
        for key in 1...6000 as ClosedRange<UInt64> { index.add(hash &+ key, ObjectID(entity: 0, key: key), at: LSN(1)) }
        // Saves 2 and 3 remove every key; a snapshot at 1 is still registered, so the entries stay.
        index.begin(LSN(2))
        for key in 1...3000 as ClosedRange<UInt64> { index.remove(hash &+ key, ObjectID(entity: 0, key: key), at: LSN(2)) }
        index.begin(LSN(3))
        for key in 3001...6000 as ClosedRange<UInt64> { index.remove(hash &+ key, ObjectID(entity: 0, key: key), at: LSN(3)) }
        index.register(LSN(3))
        index.begin(LSN(4))
        #expect(index.holders(hash &+ 10, at: LSN(1)) == [ObjectID(entity: 0, key: 10)], "kept for the snapshot at 1")
        #expect(index.holders(hash &+ 10, at: LSN(3)).isEmpty)
        // While it stays, saves do not pass over the index again and again for nothing.
        let passes = index.dropPasses
        for number in 5...50 as ClosedRange<UInt64> {
            index.begin(LSN(number))
            index.add(hash &+ 100_000 &+ number, ObjectID(entity: 1, key: number), at: LSN(number))
            index.remove(hash &+ 100_000 &+ number, ObjectID(entity: 1, key: number), at: LSN(number))
        }
        #expect(index.dropPasses == passes, "no pass until as many more entries were removed")
        #expect(index.holders(hash &+ 10, at: LSN(1)) == [ObjectID(entity: 0, key: 10)])
        // Once the snapshot at 1 is gone, the next pass drops them.
        index.unregister(LSN(1))
        index.begin(LSN(51))
        for key in 6001...10_200 as ClosedRange<UInt64> {
            index.add(hash &+ key, ObjectID(entity: 0, key: key), at: LSN(51))
        }
        index.begin(LSN(52))
        for key in 6001...10_200 as ClosedRange<UInt64> { index.remove(hash &+ key, ObjectID(entity: 0, key: key), at: LSN(52)) }
        index.begin(LSN(53))
        #expect(index.dropPasses == passes + 1)
        #expect(index.holders(hash &+ 10, at: LSN(1)).isEmpty, "dropped: no snapshot reads them")
        #expect(index.count == 0)
    }

    /// Replay: changes are queued and applied at the end, bucket after bucket.
    @Test func aBulkBuildEndsAsTheChangesInOrderWould() {
        var workload = Workload()
        let index = UniqueIndex()
        index.startBulkBuild()
        var reference: Reference = [:]
        for number in 1...300 {
            workload.save(index, at: LSN(UInt64(number)), &reference)
            if number % 100 == 0 {
                check(index, at: LSN(UInt64(number)), equals: reference, Array(workload.hashes.prefix(20)), "during the bulk build")
            }
        }
        index.finishBulkBuild()
        #expect(index.canApply(after: LSN(300)))
        check(index, at: LSN(300), equals: reference, workload.hashes, "after the bulk build")
        #expect(index.count == reference.values.reduce(0) { $0 + $1.count })
    }

    /// A bulk build large enough to be applied on two cores (its groups of buckets split in
    /// two): every key of every group filed once, a removed one gone, one removed and filed
    /// again present, as an index changed key by key has them.
    @Test func aLargeBulkBuildFilesWhatOneChangeAtATimeWould() {
        var generator = TestSeed.generator()
        let keys = (1...20_000).map { key in
            UniqueIndex.Key(hash: UInt64.random(in: 0...UInt64.max, using: &generator), id: ObjectID(entity: key % 3, key: UInt64(key)))
        }
        #expect(keys.count >= 2 * Tuning.concurrentKeys, "enough keys for the build on two cores")
        let bulk = UniqueIndex()
        let direct = UniqueIndex()
        bulk.startBulkBuild()
        for (number, batch) in stride(from: 0, to: keys.count, by: 1000).map({ keys[$0..<$0 + 1000] }).enumerated() {
            let lsn = LSN(UInt64(number + 1))
            direct.begin(lsn)
            _ = bulk.add(Array(batch), at: lsn)
            _ = direct.add(Array(batch), at: lsn)
        }
        let last = LSN(21)
        direct.begin(last)
        for (offset, key) in keys.enumerated() where offset % 10 == 0 {
            bulk.remove(key.hash, key.id, at: last)
            direct.remove(key.hash, key.id, at: last)
            if offset % 20 == 0 {
                bulk.add(key.hash, key.id, at: last)
                direct.add(key.hash, key.id, at: last)
            }
        }
        #expect(bulk.count == direct.count)
        bulk.finishBulkBuild()
        #expect(bulk.count == 19_000)
        #expect(bulk.count == direct.count)
        for key in keys {
            #expect(Set(bulk.holders(key.hash, at: last)) == Set(direct.holders(key.hash, at: last)), "hash \(key.hash)")
        }
    }
    /// The buckets grow with the index, four times as many at a time: during a save, during
    /// a save then refused, and at the end of a bulk build. Every LSN still sees its keys, and
    /// the invariant check finds each entry in the bucket its probe chooses.
    @Test func theBucketsGrowWithTheIndex() throws {
        var generator = TestSeed.generator()
        let keys = (0..<300_000).map { key in
            UniqueIndex.Key(hash: UInt64.random(in: 0...UInt64.max, using: &generator), id: ObjectID(entity: key % 2, key: UInt64(key)))
        }
        let firstTable = 1 << Tuning.uniqueMinimumBucketBits * Tuning.uniqueEntriesPerBucket
        #expect(firstTable == 65_536, "the sizes below cross the first table's limit, then the second's")
        let index = UniqueIndex()
        let first = index.bucketBits
        index.register(LSN(1))
        index.begin(LSN(1))
        _ = index.add(Array(keys[..<40_000]), at: LSN(1))
        #expect(index.bucketBits == first)
        // Save 2 removes 10,000 keys (kept for the snapshot at 1) and files 40,000 more.
        index.register(LSN(2))
        index.begin(LSN(2))
        for key in keys[..<10_000] { index.remove(key.hash, key.id, at: LSN(2)) }
        _ = index.add(Array(keys[40_000..<80_000]), at: LSN(2))
        #expect(index.bucketBits == first + 2, "grown during the save")
        try index.checkInvariants()
        // A branch off the state at 1, copied from the grown table.
        let branch = index.copy(asOf: LSN(1))
        #expect(branch.count == 40_000)
        try branch.checkInvariants()
        // Save 3 removes 5,000 keys, files the rest one key at a time and grows the buckets
        // again; then it is refused.
        index.begin(LSN(3))
        for key in keys[10_000..<15_000] { index.remove(key.hash, key.id, at: LSN(3)) }
        for key in keys[80_000...] { index.add(key.hash, key.id, at: LSN(3)) }
        #expect(index.bucketBits == first + 4)
        #expect(index.holders(keys[10_000].hash, at: LSN(3)).isEmpty)
        index.rollback(LSN(3))
        try index.checkInvariants()
        #expect(index.count == 70_000)
        for (offset, key) in keys.enumerated() where offset % 3 == 0 || offset % 10_000 < 10 {
            let holders = (index.holders(key.hash, at: LSN(1)), index.holders(key.hash, at: LSN(2)), index.holders(key.hash, at: LSN(3)))
            #expect(holders.0 == (offset < 40_000 ? [key.id] : []), "as of 1: key \(offset)")
            #expect(holders.1 == (10_000..<80_000 ~= offset ? [key.id] : []), "as of 2: key \(offset)")
            #expect(holders.2 == holders.1, "the refused save left nothing: key \(offset)")
            if offset < 80_000 { #expect(branch.holders(key.hash, at: LSN(1)) == holders.0, "the branch: key \(offset)") }
        }
        // A bulk build sizes the buckets for the entries it ends with before filing them:
        // 300,000 adds and 100,000 removes fit the second table (up to 262,144 entries).
        let bulk = UniqueIndex()
        bulk.startBulkBuild()
        _ = bulk.add(keys, at: LSN(1))
        for key in keys where key.id.key % 3 == 0 { bulk.remove(key.hash, key.id, at: LSN(2)) }
        #expect(bulk.bucketBits == first)
        bulk.finishBulkBuild()
        #expect(bulk.bucketBits == first + 2)
        try bulk.checkInvariants()
        #expect(bulk.count == 200_000)
        for key in keys where key.id.key % 5 < 2 { #expect(bulk.holders(key.hash, at: LSN(2)) == (key.id.key % 3 == 0 ? [] : [key.id])) }
    }

    /// Readers on other threads while a save's keys grow the buckets (a larger table built
    /// without the lock, put in place under it): every key filed before the save is found as
    /// of its LSN throughout, and none of the save's keys is seen as of that LSN.
    @Test func readersSeeTheirStateWhileTheBucketsGrow() async throws {
        var generator = TestSeed.generator()
        let keys = (0..<140_000).map { key in
            UniqueIndex.Key(hash: UInt64.random(in: 0...UInt64.max, using: &generator), id: ObjectID(entity: 0, key: UInt64(key)))
        }
        let index = UniqueIndex()
        index.register(LSN(1))
        index.begin(LSN(1))
        _ = index.add(Array(keys[..<60_000]), at: LSN(1))
        let first = index.bucketBits
        let stop = StopFlag()
        let readers = (0..<2).map { reader in
            Task.detached { () -> Int in
                var misses = 0
                var round = 0
                repeat {
                    for key in keys[(reader * 30_000)..<(reader * 30_000 + 30_000)] where key.id.key % 97 == UInt64(round % 97) {
                        if index.holders(key.hash, at: LSN(1)) != [key.id] { misses += 1 }
                        if index.firstHolder(key.hash, at: LSN(1), where: { _ in true }) != key.id { misses += 1 }
                    }
                    let later = Array(keys[(60_000 + round % 80_000)...].prefix(16).map(\.hash))
                    let holdings = later.withUnsafeBufferPointer { index.holdings($0, at: LSN(1)) }
                    misses += holdings.filter { $0 != .none }.count
                    round += 1
                } while !stop.value.load(ordering: .relaxed)
                return misses
            }
        }
        index.begin(LSN(2))
        _ = index.add(Array(keys[60_000...]), at: LSN(2))
        stop.value.store(true, ordering: .relaxed)
        var misses = 0
        for reader in readers { misses += await reader.value }
        #expect(index.bucketBits == first + 2, "grown while the readers read")
        #expect(misses == 0)
        try index.checkInvariants()
    }
}

/// A flag one thread sets and others read.
private final class StopFlag: Sendable {
    let value = Atomic(false)
}
