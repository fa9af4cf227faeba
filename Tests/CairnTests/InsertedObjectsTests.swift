import CairnTestSupport
import Testing
@testable import Cairn

/// A context's new objects: lookups by ID and by slot, removal and packing, the order a save
/// writes them in.
@Suite struct InsertedObjectsTests {
    private func values(_ number: Int) -> [PropertyValue] { [.attribute(.integer(Int64(number))), .attribute(.null)] }

    @Test func objectsOfOneEntityComeInInsertionOrder() {
        var list = InsertedObjects()
        for key in [3, 9, 10, 400] as [UInt64] { list.add(ObjectID(entity: 1, key: key), values(Int(key))) }
        #expect(list.inIDOrder.map(\.key.key) == [3, 9, 10, 400])
        #expect(list.keys.map(\.key) == [3, 9, 10, 400])
        #expect(list.count == 4)
    }

    @Test func objectsOfSeveralEntitiesOrOutOfOrderAreSortedByID() {
        var list = InsertedObjects()
        let ids = [ObjectID(entity: 2, key: 1), ObjectID(entity: 0, key: 2), ObjectID(entity: 2, key: 3), ObjectID(entity: 0, key: 4)]
        for id in ids { list.add(id, values(Int(id.key))) }
        #expect(list.inIDOrder.map(\.key) == ids.sorted())
        #expect(list.inIDOrder.allSatisfy { $0.value == values(Int($0.key.key)) })
        // A child's inserts absorbed after the parent's own, with lower keys.
        var parent = InsertedObjects()
        parent.add(ObjectID(entity: 0, key: 20), values(20))
        parent[ObjectID(entity: 0, key: 5)] = values(5)
        #expect(parent.inIDOrder.map(\.key.key) == [5, 20])
        #expect(parent.keys.map(\.key) == [20, 5])  // keys: insertion order
    }

    @Test func aSlotSetsItsObjectUntilTheObjectLeavesIt() {
        var list = InsertedObjects()
        let first = ObjectID(entity: 0, key: 1), second = ObjectID(entity: 0, key: 2)
        list.add(first, values(1))
        let slot = list.nextSlot
        list.add(second, values(2))
        let set1 = list.setValue(.attribute(.string("x")), at: 1, slot: slot, of: second)
        #expect(set1)
        #expect(list[second] == [.attribute(.integer(2)), .attribute(.string("x"))])
        let set2 = list.setValue(.attribute(.null), at: 1, slot: slot, of: first)  // another object's slot
        #expect(!set2)
        let set3 = list.setValue(.attribute(.null), at: 1, slot: 99, of: second)  // past the end
        #expect(!set3)
        let set4 = list.setValue(.attribute(.null), at: 1, slot: -1, of: second)
        #expect(!set4)
        let set5 = list.setValue(.attribute(.null), at: 1, of: second)  // by ID
        #expect(set5)
        list.removeValue(forKey: second)
        let set6 = list.setValue(.attribute(.null), at: 1, slot: slot, of: second)
        #expect(!set6)
        let set7 = list.setValue(.attribute(.null), at: 1, of: second)
        #expect(!set7)
        #expect(list[second] == nil && !list.contains(second) && list.count == 1)
    }

    @Test func removalsPackTheSlotsAndKeepEveryOtherObject() {
        var list = InsertedObjects()
        let ids = (1...1000).map { ObjectID(entity: 0, key: UInt64($0)) }
        for id in ids { list.add(id, values(Int(id.key))) }
        let removed = Set(ids.filter { $0.key % 3 != 0 })
        for id in ids where removed.contains(id) {
            let gone = list.removeValue(forKey: id)
            #expect(gone == values(Int(id.key)))
        }
        let kept = ids.filter { !removed.contains($0) }
        #expect(list.count == kept.count)
        #expect(list.nextSlot < ids.count)  // packed
        #expect(list.keys == kept)
        #expect(kept.allSatisfy { list[$0] == values(Int($0.key)) })
        let again = list.removeValue(forKey: ids[0])
        #expect(again == nil)
        list[kept[0]] = nil
        #expect(list.count == kept.count - 1 && list.isEmpty == false)
    }
}

/// New objects take keys from runs a context reserves from the store: runs that double up to
/// 256, so a context inserting a few objects reserves a few keys, and one importing many takes
/// the store's lock once per run.
@Suite struct ObjectKeyRunTests {
    @Test func contextsReserveKeysInDoublingRuns() async throws {
        let folder = TemporaryDirectory()
        let model = try libraryModel()
        let store = try Store(at: folder.store(), model: model)
        let first = store.newBackgroundContext(name: "first"), second = store.newBackgroundContext(name: "second")
        let a = try (0..<3).map { _ in try first.insert("Author").objectID.key }  // runs of 1 and 2
        let b = try second.insert("Author").objectID.key  // a run of 1 after them
        let c = try first.insert("Author").objectID.key  // a new run of 4
        #expect(a == [a[0], a[0] + 1, a[0] + 2])
        #expect(b == a[0] + 3)
        #expect(c == a[0] + 4)
        // A long import: runs grow to 256 and stay there; keys rise, with no repeat.
        let many = try (0..<2000).map { _ in try first.insert("Author").objectID.key }
        #expect(zip(many, many.dropFirst()).allSatisfy { $0 < $1 })
        #expect(many.last.map { $0 - many[0] } == 1999)  // one context alone: no gap
        for object in first.insertedObjects { try object.setValue(.string("n\(object.objectID.key)"), forKey: "name") }
        for object in second.insertedObjects { try object.setValue(.string("m"), forKey: "name") }
        try await first.save()
        try await second.save()
        // Keys left unused by a run (gaps) do not matter to a reopen or to later inserts.
        let third = store.newBackgroundContext()
        let d = try third.insert("Author")
        try d.setValue(.string("after"), forKey: "name")
        try await third.save()
        #expect(d.objectID.key > many.last ?? 0)
        try await store.close()
        let reopened = try Store(at: folder.store(), model: model)
        #expect(try reopened.count(of: "Author") == 2006)
        let later = try reopened.viewContext.insert("Author")
        #expect(later.objectID.key > d.objectID.key)
        try await reopened.close()
    }
}
