import CairnLog
import CairnSupport
import Foundation
import Testing
@testable import Cairn

/// Each structure's `checkInvariants()` holds for the structure as Cairn builds it, and fails
/// when the structure is damaged on purpose (so that a check cannot pass by checking nothing).
/// The test command builds with `CAIRN_INTERNAL_CHECKS=1`, which also runs every check after
/// every change in all the other tests.
@Suite struct InvariantCheckTests {
    static func record(_ text: String, entity: Int = 0, version: UInt64 = 1) -> ObjectRecord {
        ObjectRecord(row: ObjectTableTests.row(text), version: LSN(version), entity: entity)
    }

    @Test func theObjectTableAndItsChunksCheckTheirRules() throws {
        var table = ObjectTable(entityCount: 2)
        for key in 1...600 as ClosedRange<UInt64> {
            let inserted = table.insert(Self.record("row \(key)", entity: Int(key % 2)), key: key)
            #expect(inserted)
        }
        table.replace(Self.record("a longer row than before", entity: 1), key: 9)
        _ = table.remove(ObjectID(entity: 0, key: 10))
        #expect(throws: Never.self) { try table.checkInvariants() }

        let chunk = try #require(table.chunks[0])
        chunk.live += 1
        #expect(throws: InvariantViolation.self) { try chunk.checkInvariants() }  // live no longer counts the filled slots
        chunk.live -= 1
        chunk.garbage += 3
        #expect(throws: InvariantViolation.self) { try chunk.checkInvariants() }  // bytes unaccounted for
        chunk.garbage -= 3
        let entry = try #require(chunk.entries[20])
        chunk.entries[21]?.start = entry.start
        #expect(throws: InvariantViolation.self) { try chunk.checkInvariants() }  // two rows overlap

        var other = ObjectTable(entityCount: 2)
        let insertedOne = other.insert(Self.record("x"), key: 1)
        #expect(insertedOne)
        try #require(other.chunks[0]).entries[1]?.entity = 1
        #expect(throws: InvariantViolation.self) { try other.checkInvariants() }  // counts by entity disagree
    }

    @Test func theChunkDirectoryChecksItsLeaves() throws {
        var table = ObjectTable(entityCount: 1)
        let near = table.insert(Self.record("x"), key: 1), far = table.insert(Self.record("far"), key: 1 << 40)
        #expect(near && far)
        var directory = table.chunks
        #expect(throws: Never.self) { try directory.checkInvariants() }
        directory.leaves[0].removeLast()
        #expect(throws: InvariantViolation.self) { try directory.checkInvariants() }
    }

    @Test func theUniquenessIndexChecksItsEntries() throws {
        let index = UniqueIndex()
        index.begin(LSN(1))
        for key in 1...50 as ClosedRange<UInt64> { index.add(key &* 0x9E37_79B9_7F4A_7C15, ObjectID(entity: 0, key: key), at: LSN(1)) }
        index.begin(LSN(2))
        index.remove(7 &* 0x9E37_79B9_7F4A_7C15, ObjectID(entity: 0, key: 7), at: LSN(2))
        #expect(throws: Never.self) { try index.checkInvariants() }

        let bucket = try #require(index.buckets.firstIndex { !$0.isEmpty })
        index.buckets[bucket].append(index.buckets[bucket][0])
        #expect(throws: InvariantViolation.self) { try index.checkInvariants() }  // an object filed twice
        index.buckets[bucket].removeLast()
        index.buckets[bucket][0].added = 99
        #expect(throws: InvariantViolation.self) { try index.checkInvariants() }  // added after the newest save
        index.buckets[bucket][0].added = 1
        index.liveCount += 1
        #expect(throws: InvariantViolation.self) { try index.checkInvariants() }  // the count disagrees
        index.liveCount -= 1
        #expect(throws: Never.self) { try index.checkInvariants() }
        let moved = index.buckets[bucket].removeLast()
        index.buckets[(bucket + 1) % index.buckets.count].append(moved)
        #expect(throws: InvariantViolation.self) { try index.checkInvariants() }  // an entry in another bucket than its probe's
        index.buckets[(bucket + 1) % index.buckets.count].removeLast()
        index.buckets[bucket].append(moved)
        #expect(throws: Never.self) { try index.checkInvariants() }
        index.buckets.append([])
        #expect(throws: InvariantViolation.self) { try index.checkInvariants() }  // not the number of buckets its bits choose
    }

    @Test func anOrderedIndexChecksItsOrder() throws {
        var index = OrderedIndex(kind: .integer)
        for key in 1...(3 * Tuning.orderedChunkLimit) { index.insert(.integer(Int64(key % 97)), ObjectID(entity: 0, key: UInt64(key))) }
        index.remove(.integer(5), ObjectID(entity: 0, key: 5))
        #expect(throws: Never.self) { try index.checkInvariants() }
        #expect(index.contains(.integer(6), ObjectID(entity: 0, key: 6)))
        #expect(!index.contains(.integer(5), ObjectID(entity: 0, key: 5)))
        #expect(!index.contains(.integer(7), ObjectID(entity: 0, key: 6)))  // the key, under another value

        guard case .packed(_, let runs) = index.storage else {
            Issue.record("an integer index is not packed")
            return
        }
        runs.runs[1].entries.swapAt(0, 1)
        #expect(throws: InvariantViolation.self) { try index.checkInvariants() }
        runs.runs[1].entries.swapAt(0, 1)
        runs.runs[1].entries.append(runs.runs[0].entries[0])
        #expect(throws: InvariantViolation.self) { try index.checkInvariants() }  // out of order, and the count disagrees
    }

    @Test func anOrderedIndexOfValuesChecksItsOrderAndItsNils() throws {
        var index = OrderedIndex()
        for key in 1...(3 * Tuning.orderedChunkLimit) { index.insert(.string("v\(key % 97)"), ObjectID(entity: 0, key: UInt64(key))) }
        #expect(throws: Never.self) { try index.checkInvariants() }
        guard case .values(let runs) = index.storage else {
            Issue.record("a text index is packed")
            return
        }
        runs.runs[2].entries.swapAt(3, 4)
        #expect(throws: InvariantViolation.self) { try index.checkInvariants() }
        runs.runs[2].entries.swapAt(3, 4)
        runs.runs[0].entries[0].value = .null  // first: in order, so only the nil check sees it
        #expect(throws: InvariantViolation.self) { try index.checkInvariants() }
    }

    @Test func insertedObjectsCheckTheirSlots() throws {
        var inserted = InsertedObjects()
        for key in 1...40 as ClosedRange<UInt64> { inserted.add(ObjectID(entity: 0, key: key), [.attribute(.integer(Int64(key)))]) }
        inserted.removeValue(forKey: ObjectID(entity: 0, key: 3))
        #expect(throws: Never.self) { try inserted.checkInvariants() }
        inserted.ids[5] = ObjectID(entity: 0, key: 99)
        #expect(throws: InvariantViolation.self) { try inserted.checkInvariants() }
    }

    @Test func theIdentityMapChecksEachObjectsID() throws {
        let store = Store(inMemory: try Model { Entity("Note") { Attribute("text", .string) } })
        let context = store.newBackgroundContext()
        let first = try context.insert("Note"), second = try context.insert("Note")
        var map = IdentityMap()
        map.add(first)
        map.add(second)
        #expect(throws: Never.self) { try map.checkInvariants() }
        map.objects[first.objectID] = IdentityMap.Entry(object: second, typed: nil)
        #expect(throws: InvariantViolation.self) { try map.checkInvariants() }
    }

    @Test func aSnapshotChecksItsObjectsAgainstItsIndexes() async throws {
        let model = try Model {
            Entity("Person") {
                Attribute("name", .string, optional: false)
                Attribute("age", .integer32, indexed: true)
                Unique("name")
            }
        }
        let store = Store(inMemory: model)
        try await store.performBackgroundTask { context in
            for n in 0..<30 {
                let person = try context.insert("Person")
                try person.setValue(Value.string("P\(n)"), forKey: "name")
                try person.setValue(Value.integer(Int64(n % 7)), forKey: "age")
            }
            try await context.save()
        }
        let snapshot = store.snapshot
        #expect(throws: Never.self) { try snapshot.checkInvariants() }

        // A key filed for an object that does not hold it: the index no longer matches the objects.
        snapshot.uniqueIndex.add(12345, ObjectID(entity: 0, key: 1), at: snapshot.lsn)
        #expect(throws: InvariantViolation.self) { try snapshot.checkInvariants() }
    }
}
