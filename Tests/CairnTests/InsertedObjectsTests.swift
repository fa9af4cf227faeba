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
        #expect(parent.keys.map(\.key) == [20, 5])           // keys: insertion order
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
        let set2 = list.setValue(.attribute(.null), at: 1, slot: slot, of: first)       // another object's slot
        #expect(!set2)
        let set3 = list.setValue(.attribute(.null), at: 1, slot: 99, of: second)        // past the end
        #expect(!set3)
        let set4 = list.setValue(.attribute(.null), at: 1, slot: -1, of: second)
        #expect(!set4)
        let set5 = list.setValue(.attribute(.null), at: 1, of: second)                   // by ID
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
        #expect(list.nextSlot < ids.count)                  // packed
        #expect(list.keys == kept)
        #expect(kept.allSatisfy { list[$0] == values(Int($0.key)) })
        let again = list.removeValue(forKey: ids[0])
        #expect(again == nil)
        list[kept[0]] = nil
        #expect(list.count == kept.count - 1 && list.isEmpty == false)
    }
}
