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
        let store = Store(inMemory: try libraryModel())
        let setup = store.newBackgroundContext()
        let author = try setup.make("Author", ["name": "Octavia Butler", "born": 1947])
        try await setup.save()
        let before = store.snapshot.lsn

        // Set to the same value, and changed and changed back: nothing to save.
        let same = store.newBackgroundContext()
        let object = try #require(same.object(with: author.objectID))
        try object.setValue(1947, forKey: "born")
        try object.setValue(1950, forKey: "rating")
        try object.setValue(0.0, forKey: "rating")
        #expect(same.hasChanges)
        try await same.save()
        #expect(store.snapshot.lsn == before, "no change record for values that did not change")

        // Another save changes the object after this context set a value back to what it read:
        // the value is saved (the row is read, not what was compared when it was set).
        let context = store.newBackgroundContext()
        context.mergePolicy = .mergeByPropertyObjectTrump
        let mine = try #require(context.object(with: author.objectID))
        try mine.setValue(1947, forKey: "born")
        let other = store.newBackgroundContext()
        try #require(other.object(with: author.objectID)).setValue(1900, forKey: "born")
        try await other.save()
        try await context.save()
        #expect(try store.viewContext.object(with: author.objectID)?.value(forKey: "born", as: Int.self) == 1947)

        // A value that differs when set, but equals what another save wrote since: left out.
        let third = store.newBackgroundContext()
        third.mergePolicy = .mergeByPropertyObjectTrump
        try #require(third.object(with: author.objectID)).setValue(2000, forKey: "born")
        let fourth = store.newBackgroundContext()
        try #require(fourth.object(with: author.objectID)).setValue(2000, forKey: "born")
        try await fourth.save()
        let afterFourth = store.snapshot.lsn
        try await third.save()
        #expect(store.snapshot.lsn == afterFourth)
    }
}
