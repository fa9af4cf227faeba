import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

@Suite struct MergePolicyTests {
    struct Outcome: Equatable {
        var name: String?
        var born: Value?
        var rating: Value?
    }

    /// Context X changes name and born; meanwhile another save changes born and rating; then X
    /// saves with `policy`.
    func conflict(_ policy: MergePolicy) async throws -> (error: StoreError?, outcome: Outcome) {
        let store = Store(inMemory: try libraryModel())
        let seed = store.newBackgroundContext()
        let seeded = try seed.make("Author", ["name": "A", "born": 1900, "rating": 1.0])
        try await seed.save()
        let id = seeded.objectID

        let x = store.newBackgroundContext(name: "x")
        x.mergePolicy = policy
        let mine = try #require(x.object(with: id))
        try mine.setValue("AX", forKey: "name")
        try mine.setValue(1950, forKey: "born")

        let y = store.newBackgroundContext(name: "y")
        let theirs = try #require(y.object(with: id))
        try theirs.setValue(1960, forKey: "born")
        try theirs.setValue(5.0, forKey: "rating")
        try await y.save()

        var failure: StoreError?
        do { try await x.save() } catch let error as StoreError { failure = error }
        let reader = store.newBackgroundContext()
        let result = try #require(reader.object(with: id))
        return (failure, Outcome(name: result.string("name"), born: result["born"], rating: result["rating"]))
    }

    @Test func errorPolicyRefusesTheSaveAndListsTheObjects() async throws {
        let (error, outcome) = try await conflict(.error)
        #expect(error?.code == .mergeConflict && error?.objects.count == 1)
        #expect(outcome == Outcome(name: "A", born: 1960, rating: 5.0))
    }

    @Test func objectTrumpKeepsTheContextsChangedPropertiesAndTheStoresOthers() async throws {
        let (error, outcome) = try await conflict(.mergeByPropertyObjectTrump)
        #expect(error == nil)
        #expect(outcome == Outcome(name: "AX", born: 1950, rating: 5.0))
    }

    @Test func storeTrumpKeepsTheStoresValueWhereBothChanged() async throws {
        let (error, outcome) = try await conflict(.mergeByPropertyStoreTrump)
        #expect(error == nil)
        #expect(outcome == Outcome(name: "AX", born: 1960, rating: 5.0))
    }

    @Test func overwriteWritesTheContextsWholeView() async throws {
        let (error, outcome) = try await conflict(.overwrite)
        #expect(error == nil)
        #expect(outcome == Outcome(name: "AX", born: 1950, rating: 1.0))
    }

    @Test func rollbackDropsTheContextsChanges() async throws {
        let (error, outcome) = try await conflict(.rollback)
        #expect(error == nil)
        #expect(outcome == Outcome(name: "A", born: 1960, rating: 5.0))
    }

    @Test func updatingAnObjectAnotherSaveDeletedIsAConflict() async throws {
        let store = Store(inMemory: try libraryModel())
        let seed = store.viewContext
        let author = try seed.make("Author", ["name": "Gone"])
        try await seed.save()
        let x = store.newBackgroundContext()
        try #require(x.object(with: author.objectID)).setValue(2000, forKey: "born")
        try author.delete()
        try await seed.save()
        await #expect { try await x.save() } throws: { ($0 as? StoreError)?.code == .mergeConflict }
        x.mergePolicy = .mergeByPropertyObjectTrump
        try await x.save()
        #expect(try store.count(of: "Author") == 0, "the update of a deleted object is dropped")
    }
}

@Suite struct RelationshipConflictTests {
    @Test(arguments: [MergePolicy.mergeByPropertyObjectTrump, .mergeByPropertyStoreTrump, .overwrite, .rollback])
    func conflictingRelationshipChangesAreRefusedByEveryPolicy(_ policy: MergePolicy) async throws {
        let store = Store(inMemory: try libraryModel())
        let seed = store.newBackgroundContext()
        let book = try seed.make("Book", ["code": "C1", "title": "Contested"])
        let first = try seed.make("Author", ["name": "First"]), second = try seed.make("Author", ["name": "Second"])
        try await seed.save()

        let x = store.newBackgroundContext()
        x.mergePolicy = policy
        let firstInX = try #require(x.object(with: first.objectID))
        try #require(x.object(with: book.objectID)).setObject(firstInX, forKey: "author")
        let y = store.newBackgroundContext()
        let secondInY = try #require(y.object(with: second.objectID))
        try #require(y.object(with: book.objectID)).setObject(secondInY, forKey: "author")
        try await y.save()
        await #expect { try await x.save() } throws: { ($0 as? StoreError)?.code == .mergeConflict }

        let reader = store.newBackgroundContext()
        let saved = try #require(reader.object(with: book.objectID))
        let author = try #require(try saved.object(forKey: "author"))
        #expect(try author.objects(forKey: "books").contains(saved), "both ends agree")
        #expect(try #require(reader.object(with: first.objectID)).objects(forKey: "books").isEmpty)
    }

    @Test func aDeleteThatThePolicyWouldDropIsRefused() async throws {
        let store = Store(inMemory: try libraryModel())
        let seed = store.newBackgroundContext()
        let author = try seed.make("Author", ["name": "Cascading"])
        let book = try seed.make("Book", ["code": "D1", "title": "Cascaded"])
        try book.setObject(author, forKey: "author")
        try await seed.save()
        let x = store.newBackgroundContext()
        x.mergePolicy = .mergeByPropertyStoreTrump
        try x.delete(try #require(x.object(with: author.objectID)))
        try seed.object(with: author.objectID)?.setValue(1900, forKey: "born")
        try await seed.save()
        await #expect { try await x.save() } throws: { ($0 as? StoreError)?.code == .mergeConflict }
        #expect(try store.count(of: "Book") == 1 && store.count(of: "Author") == 1, "nothing half-applied")
    }
}
