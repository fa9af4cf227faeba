import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// How a context keeps its updates: one change kept inline (``PropertyChanges``), the updated
/// objects in slots (``UpdatedObjects``), and the updates a save validates
/// (``ContextState/updatesToValidate``).
@Suite struct PendingUpdateTests {
    @Test func propertyChangesActAsADictionaryOfPositions() {
        var changes = PropertyChanges()
        #expect(changes.isEmpty && changes.count == 0 && changes[3] == nil)
        changes[3] = .attribute(.integer(1))
        #expect(changes.count == 1 && changes[3] == .attribute(.integer(1)) && changes[4] == nil)
        changes[3] = .attribute(.integer(2))  // the same position again: still one
        #expect(changes.count == 1 && changes.dictionary == [3: .attribute(.integer(2))])
        changes[5] = .toOne(nil)
        changes[1] = .attribute(.string("a"))
        #expect(changes.count == 3 && Set(changes.positions) == [1, 3, 5])
        #expect(changes.dictionary == [1: .attribute(.string("a")), 3: .attribute(.integer(2)), 5: .toOne(nil)])
        changes[3] = nil
        #expect(changes.count == 2 && changes[3] == nil && changes.containsPosition { $0 == 5 } && !changes.containsPosition { $0 == 3 })
        #expect(changes.filtered { $0.key > 2 }.dictionary == [5: .toOne(nil)])

        var one = PropertyChanges([7: .attribute(.null)])
        one[7] = nil
        #expect(one.isEmpty && Array(one).isEmpty)
        one[2] = .attribute(.boolean(true))
        #expect(one.filtered { $0.key == 2 }.count == 1 && one.filtered { $0.key != 2 }.isEmpty)
        one.merge(PropertyChanges([2: .attribute(.boolean(false)), 9: .toMany([])]))
        #expect(one.dictionary == [2: .attribute(.boolean(false)), 9: .toMany([])])
        #expect(PropertyChanges([:]).isEmpty && PropertyChanges([1: .toOne(nil)]).count == 1)
    }

    @Test func updatedObjectsAreTakenInIDOrderHoweverTheyWereAdded() throws {
        func id(_ key: UInt64) -> ObjectID { ObjectID(entity: 0, key: key) }
        var updates = UpdatedObjects()
        for key: UInt64 in [5, 9, 2, 7] {
            updates.change(id(key), orAdd: { PendingUpdate() }) { $0.set(0, .attribute(.integer(Int64(key)))) }
        }
        updates.change(id(9), orAdd: { PendingUpdate() }) { $0.set(1, .attribute(.null)) }  // in place: no second entry
        #expect(updates.count == 4 && updates[id(9)]?.values.count == 2)
        var seen: [UInt64] = []
        updates.forEachInIDOrder { objectID, update in
            seen.append(objectID.key)
            #expect(update.values[0] == .attribute(.integer(Int64(objectID.key))))
        }
        #expect(seen == [2, 5, 7, 9] && updates.inIDOrder.map(\.key.key) == [2, 5, 7, 9])
        updates[id(5)] = nil
        #expect(updates.keys == [id(9), id(2), id(7)] && !updates.contains(id(5)))
        try updates.checkInvariants()

        var ordered = UpdatedObjects()
        for key: UInt64 in [1, 2, 3] { ordered[id(key)] = PendingUpdate() }
        var inOrder: [UInt64] = []
        ordered.forEachInIDOrder { objectID, _ in inOrder.append(objectID.key) }
        #expect(inOrder == [1, 2, 3])
    }

    /// Only changes to a required attribute or a relationship are among the updates a root
    /// context's save validates, whether made there or saved into it by a child.
    @Test func updatesToValidateAreThoseThatCanBreakARule() async throws {
        let store = Store(inMemory: try libraryModel())
        let setup = store.newBackgroundContext()
        let authors = try (0..<3).map { try setup.make("Author", ["name": .string("Author \($0)"), "born": 1900]) }
        let book = try setup.make("Book", ["code": "B1", "title": "One"])
        try await setup.save()

        let root = store.newBackgroundContext()
        func toValidate() -> Set<ObjectID> { root.state.withLock { $0.updatesToValidate } }
        try #require(root.object(with: authors[0].objectID)).setValue(1901, forKey: "born")  // optional
        try #require(root.object(with: authors[1].objectID)).setValue("Renamed", forKey: "name")  // required
        #expect(toValidate() == [authors[1].objectID])
        let child = root.newChildContext()
        let third = try #require(child.object(with: authors[2].objectID))
        try #require(child.object(with: book.objectID)).setObject(third, forKey: "author")
        try await child.save()
        #expect(toValidate() == [authors[1].objectID, authors[2].objectID, book.objectID])
        try await root.save()
        #expect(toValidate().isEmpty)
        let saved = try #require(store.viewContext.object(with: book.objectID))
        #expect(try saved.object(forKey: "author")?.objectID == authors[2].objectID)
        #expect(try store.viewContext.object(with: authors[0].objectID)?.value(forKey: "born", as: Int.self) == 1901)
    }

    /// A value set back to what the object held is not saved, whether the context compared it
    /// when it was set (no other save since) or the save reads the row (another save changed
    /// the object meanwhile: what the context compared no longer holds).
    @Test func unchangedValuesAreLeftOutWhetherComparedWhenSetOrAtTheSave() async throws {
        let (store, author) = try await libraryStore(withAuthor: "Octavia Butler", born: 1947)
        let before = store.snapshot.lsn

        // Set to the same value, and changed and changed back: nothing to save.
        let same = store.newBackgroundContext()
        let object = try #require(same.object(with: author))
        try object.setValue(1947, forKey: "born")
        try object.setValue(1950, forKey: "rating")
        try object.setValue(0.0, forKey: "rating")
        #expect(same.hasChanges)
        let entity = try #require(store.model.entity(named: "Author"))
        let born = try #require(entity.attributePosition("born")), rating = try #require(entity.attributePosition("rating"))
        let compared = same.state.withLock { state in
            [born, rating].map { state.updated[author]?.equalsOriginal(at: $0) }
        }
        #expect(compared == [true, true], "both compared with the stored values as they were set")
        try await same.save()
        #expect(store.snapshot.lsn == before, "no change record for values that did not change")

        // Another save changes the object after this context set a value back to what it read:
        // the value is saved (the row is read, not what was compared when it was set).
        let context = store.newBackgroundContext()
        context.mergePolicy = .mergeByPropertyObjectTrump
        let mine = try #require(context.object(with: author))
        try mine.setValue(1947, forKey: "born")
        let other = store.newBackgroundContext()
        try #require(other.object(with: author)).setValue(1900, forKey: "born")
        try await other.save()
        try await context.save()
        #expect(try store.viewContext.object(with: author)?.value(forKey: "born", as: Int.self) == 1947)

        // A value that differs when set, but equals what another save wrote since: left out.
        let third = store.newBackgroundContext()
        third.mergePolicy = .mergeByPropertyObjectTrump
        try #require(third.object(with: author)).setValue(2000, forKey: "born")
        let fourth = store.newBackgroundContext()
        try #require(fourth.object(with: author)).setValue(2000, forKey: "born")
        try await fourth.save()
        let afterFourth = store.snapshot.lsn
        try await third.save()
        #expect(store.snapshot.lsn == afterFourth)
    }

    /// A child's change saved into its parent was not compared with the stored value: a value
    /// the parent had set back to the stored one, then changed by the child, is saved.
    @Test func aChildsChangeSavedIntoItsParentIsNeverTakenForUnchanged() async throws {
        let (store, author) = try await libraryStore(withAuthor: "Octavia Butler", born: 1947)
        let root = store.newBackgroundContext()
        try #require(root.object(with: author)).setValue(1947, forKey: "born")  // equal: compared
        let child = root.newChildContext()
        try #require(child.object(with: author)).setValue(2000, forKey: "born")
        try await child.save()
        try await root.save()
        #expect(try store.viewContext.object(with: author)?.value(forKey: "born", as: Int.self) == 2000)
    }

    /// Changes made while a save ran are kept for the next one, and validated there whatever
    /// they changed; objects whose changes were all saved leave the updates to validate.
    @Test func changesKeptAfterASaveAreValidatedAtTheNext() throws {
        let a = ObjectID(entity: 0, key: 1), b = ObjectID(entity: 0, key: 2)
        var state = ContextState()
        state.update(a, 0, .attribute(.string("x")), validated: true, original: nil)
        state.update(b, 1, .attribute(.integer(1)), validated: false, original: nil)
        let saved = state.pendingChanges
        #expect(saved.updatesToValidate == [a])
        state.update(a, 0, .attribute(.string("y")), validated: true, original: nil)  // while the save runs
        state.update(b, 2, .attribute(.integer(2)), validated: false, original: nil)
        state.removeSaved(saved) { _ in nil }
        #expect(state.updated.keys.sorted() == [a, b])
        #expect(state.updatesToValidate == [a, b], "kept changes are validated at the next save")
        let next = state.pendingChanges
        state.removeSaved(next) { _ in nil }
        #expect(state.updated.isEmpty && state.updatesToValidate.isEmpty)
    }

    /// Removals pack the slots; objects added again, out of ID order, are still taken in ID order.
    @Test func updatedObjectsPackedAndAddedAgainKeepTheirOrder() throws {
        func id(_ key: UInt64) -> ObjectID { ObjectID(entity: 0, key: key) }
        var updates = UpdatedObjects()
        for key: UInt64 in 1...8 { updates[id(key)] = PendingUpdate(values: PropertyChanges([0: .attribute(.integer(Int64(key)))])) }
        for key: UInt64 in [2, 4, 6, 8, 1] { updates[id(key)] = nil }  // packed on the way
        try updates.checkInvariants()
        updates[id(2)] = PendingUpdate(values: PropertyChanges([0: .attribute(.integer(20))]))
        updates[id(3)] = nil
        updates[id(3)] = PendingUpdate(values: PropertyChanges([0: .attribute(.integer(30))]))
        try updates.checkInvariants()
        var seen: [(UInt64, PropertyValue?)] = []
        updates.forEachSlotInIDOrder { objectID, slot in seen.append((objectID.key, updates[slot: slot]?.values[0])) }
        #expect(seen.map(\.0) == [2, 3, 5, 7])
        #expect(seen.map(\.1) == [.attribute(.integer(20)), .attribute(.integer(30)), .attribute(.integer(5)), .attribute(.integer(7))])
        #expect(updates.keys.sorted() == [id(2), id(3), id(5), id(7)] && updates.count == 4)
    }

    /// An update of an object whose row is long (kept in a buffer of its own) is built and
    /// stored like any other, and reads back after a reopen.
    @Test func anUpdateOfALongRowKeepsEveryValue() async throws {
        let folder = TemporaryDirectory()
        let long = String(repeating: "ab", count: Tuning.largeRow / 2 + 10)
        let id: ObjectID
        do {
            let store = try Store(at: folder.store(), model: try libraryModel())
            let setup = store.newBackgroundContext()
            id = try setup.make("Book", ["code": "L1", "title": .string(long), "year": 1999]).objectID
            try await setup.save()
            let context = store.newBackgroundContext()
            try #require(context.object(with: id)).setValue(2001, forKey: "year")
            try await context.save()
            let saved = try #require(store.viewContext.object(with: id))
            #expect(try saved.value(forKey: "year", as: Int.self) == 2001 && saved.value(forKey: "title", as: String.self) == long)
            try await store.close()
        }
        let reopened = try Store(at: folder.store(), model: try libraryModel())
        let book = try #require(reopened.viewContext.object(with: id))
        #expect(try book.value(forKey: "year", as: Int.self) == 2001 && book.value(forKey: "title", as: String.self) == long)
        try await reopened.close()
    }
}
