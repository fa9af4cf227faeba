import CairnSupport
import CairnTestSupport
import Testing
@testable import Cairn

@Suite struct PostingListTests {
    /// Random inserts and removes, duplicates and absent keys included, against a plain set;
    /// copies taken along the way keep their keys while the list changes.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func randomChangesAgreeWithASetAndLeaveCopiesAlone(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var list = PostingList(sorted: [])
        var reference = Set<UInt64>()
        var copies: [(PostingList, [UInt64])] = []
        for step in 0..<20_000 {
            // Keys from a narrow range (many duplicates and removals that hit) or anywhere.
            let key = random.next() % 3 == 0 ? random.next() : random.next() % 3_000
            if random.next() % 3 == 0 {
                list.remove(key)
                reference.remove(key)
            } else {
                list.insert(key)
                reference.insert(key)
            }
            if step % 2_000 == 0 { copies.append((list, reference.sorted())) }
        }
        #expect(throws: Never.self) { try list.checkInvariants() }
        #expect(list.keys == reference.sorted())
        #expect(list.count == reference.count)
        #expect(list.first == reference.min())
        for (copy, keys) in copies {
            #expect(throws: Never.self) { try copy.checkInvariants() }
            #expect(copy.keys == keys)
        }
        var objects: [ObjectID] = [ObjectID(entity: 1, key: 0)]
        list.appendObjects(of: 3, to: &objects)
        #expect(objects.dropFirst().map(\.key) == reference.sorted())
        #expect(objects.dropFirst().allSatisfy { $0.entity == 3 })
    }

    @Test func aListBuiltFromKeysSplitsIntoRunsAndEmptiesCleanly() {
        var list = PostingList(sorted: Array(0..<2_000).map { UInt64($0) * 2 })
        #expect(throws: Never.self) { try list.checkInvariants() }
        #expect(list.count == 2_000)
        for key in (0..<2_000).map({ UInt64($0) * 2 }).reversed() { list.remove(key) }
        #expect(throws: Never.self) { try list.checkInvariants() }
        #expect(list.count == 0)
        #expect(list.first == nil)
        list.insert(5)
        #expect(list.keys == [5])
    }

    @Test func theInvariantCheckFailsOnADamagedList() {
        var list = PostingList(sorted: Array(0..<2_000))
        #expect(throws: Never.self) { try list.checkInvariants() }
        var unordered = list
        unordered.runs[1].swapAt(3, 4)
        #expect(throws: InvariantViolation.self) { try unordered.checkInvariants() }
        var emptyRun = list
        emptyRun.runs.insert([], at: 1)
        #expect(throws: InvariantViolation.self) { try emptyRun.checkInvariants() }
        list.runs[0].removeLast()
        #expect(throws: InvariantViolation.self) { try list.checkInvariants() }  // the count no longer agrees
    }
}
