import CairnSupport
import CairnTestSupport
@testable import CairnLog
import Foundation
import Testing
@testable import Cairn

@Suite struct ContextTests {
    @Test func aParentDoesNotSeeItsChildsUnsavedChanges() async throws {
        let store = Store(inMemory: try libraryModel())
        let parent = store.newBackgroundContext()
        let child = parent.newChildContext()
        try child.make("Author", ["name": "Child's"])
        #expect(try parent.count(FetchRequest("Author")) == 0)
        #expect(try child.count(FetchRequest("Author")) == 1)
        try await child.save()
        #expect(try parent.count(FetchRequest("Author")) == 1, "a child's save reaches its parent")
        #expect(try store.count(of: "Author") == 0, "and not the disk")
        try await parent.save()
        #expect(try store.count(of: "Author") == 1)
    }

    @Test func aNewChildSeesItsParentsUnsavedChanges() throws {
        let store = Store(inMemory: try libraryModel())
        let parent = store.viewContext
        let author = try parent.make("Author", ["name": "Parent's"])
        let child = parent.newChildContext()
        let seen = try #require(child.object(with: author.objectID))
        #expect(seen.string("name") == "Parent's")
        #expect(seen !== author, "each context has its own instance")
    }

    @Test func aGrandchildsSaveReachesDiskThroughTheChain() async throws {
        let folder = TemporaryDirectory()
        let model = try libraryModel()
        let store = try Store(at: folder.store(), model: model)
        let child = store.viewContext.newChildContext()
        let grandchild = child.newChildContext()
        let author = try grandchild.make("Author", ["name": "Deep"])
        try await grandchild.save()
        try await child.save()
        #expect(try store.count(of: "Author") == 0)
        try await store.viewContext.save()
        try await store.close()
        let reopened = try Store(at: folder.store(), model: model)
        #expect(reopened.viewContext.object(with: author.objectID)?.string("name") == "Deep")
        try await reopened.close()
    }

    @Test func siblingsSeeEachOthersSavesOnlyAfterSaving() async throws {
        let store = Store(inMemory: try libraryModel())
        let first = store.newBackgroundContext(name: "first")
        let second = store.newBackgroundContext(name: "second")
        let author = try first.make("Author", ["name": "Sibling"])
        #expect(second.object(with: author.objectID) == nil)
        #expect(store.viewContext.object(with: author.objectID) == nil)
        try await first.save()
        #expect(store.viewContext.object(with: author.objectID)?.string("name") == "Sibling", "the view context follows saves")
        #expect(second.object(with: author.objectID) == nil, "a background context keeps its snapshot")
        second.refresh()
        #expect(second.object(with: author.objectID)?.string("name") == "Sibling")
    }

    @Test func saveCompletesAfterTheViewContextHasTheChanges() async throws {
        let folder = TemporaryDirectory()
        let store = try Store(at: folder.store(), model: try libraryModel())
        let view = store.viewContext
        let author = try view.make("Author", ["name": "Before"])
        try await view.save()
        try await store.performBackgroundTask { context in
            let mine = try #require(context.object(with: author.objectID))
            try mine.setValue("After", forKey: "name")
            try await context.save()
        }
        #expect(author.string("name") == "After")
        try await store.close()
    }

    @Test func oneInstancePerObjectInAContext() throws {
        let store = Store(inMemory: try libraryModel())
        let context = store.viewContext
        let author = try context.make("Author", ["name": "Same"])
        #expect(context.object(with: author.objectID) === author)
        #expect(try context.fetch(FetchRequest("Author")).first === author)
    }

    @Test func flagsChangedValuesRefreshAndRollback() async throws {
        let store = Store(inMemory: try libraryModel())
        let context = store.viewContext
        let author = try context.make("Author", ["name": "Flags"])
        #expect(author.isInserted && !author.isUpdated && !author.isDeleted)
        try await context.save()
        #expect(!author.hasChanges)
        try author.setValue(1950, forKey: "born")
        #expect(author.isUpdated && author.changedValues["born"] == .attribute(.integer(1950)))
        author.refresh()
        #expect(!author.hasChanges && author["born"] == nil)
        try author.delete()
        #expect(author.isDeleted)
        context.rollback()
        #expect(!author.isDeleted && author.string("name") == "Flags")
    }

    @Test func inversesFollowEverySide() throws {
        let store = Store(inMemory: try libraryModel())
        let context = store.viewContext
        let author1 = try context.make("Author", ["name": "One"])
        let author2 = try context.make("Author", ["name": "Two"])
        let book = try context.make("Book", ["code": "B", "title": "T"])
        try book.setObject(author1, forKey: "author")
        #expect(try author1.objects(forKey: "books") == [book])
        try author2.addObject(book, forKey: "books")
        #expect(try book.object(forKey: "author") === author2, "adding to the to-many side moves the to-one side")
        #expect(try author1.objects(forKey: "books").isEmpty, "and takes it from the previous holder")
        try author2.removeObject(book, forKey: "books")
        #expect(try book.object(forKey: "author") == nil)
        // One-to-one: setting a card's member takes the card from the member's previous card.
        let member = try context.make("Member", ["email": "m@example.org"])
        let card1 = try context.insert("Card"), card2 = try context.insert("Card")
        try member.setObject(card1, forKey: "card")
        try card2.setObject(member, forKey: "member")
        #expect(try member.object(forKey: "card") === card2)
        #expect(try card1.object(forKey: "member") == nil)
        // Ordered to-many keeps order.
        let loans = try (0..<3).map { _ in try context.insert("Loan") }
        try book.setObjects(loans.reversed(), forKey: "loans")
        #expect(try book.objects(forKey: "loans") == loans.reversed())
        #expect(try loans.allSatisfy { try $0.object(forKey: "book") === book })
    }

    @Test func deleteRulesCascadeNullifyDenyAndNoAction() async throws {
        let store = Store(inMemory: try libraryModel())
        let context = store.viewContext
        let author = try context.make("Author", ["name": "Rules"])
        let book = try context.make("Book", ["code": "R1", "title": "Rules"])
        try book.setObject(author, forKey: "author")
        let member = try context.make("Member", ["email": "r@example.org"])
        let loan = try context.insert("Loan")
        try loan.setObject(book, forKey: "book")
        try loan.setObject(member, forKey: "member")
        let card = try context.insert("Card")
        try card.setObject(member, forKey: "member")
        try await context.save()

        // deny: a book with loans cannot go (cascade from its author reaches it).
        try author.delete()
        #expect(book.isDeleted, "cascade reached the book")
        await #expect { try await context.save() } throws: { error in
            let error = try #require(error as? StoreError)
            return error.code == .deleteDenied && error.entity == "Book" && error.property == "loans"
        }
        context.rollback()
        // nullify: deleting the loan empties the book's loans.
        try loan.delete()
        #expect(try book.objects(forKey: "loans").isEmpty)
        #expect(try member.objects(forKey: "loans").isEmpty)
        // cascade: deleting the author now deletes the book.
        try author.delete()
        try await context.save()
        #expect(try store.count(of: "Book") == 0 && store.count(of: "Loan") == 0)
        // noAction: deleting a card leaves its member's link alone.
        try card.delete()
        #expect(try member.object(forKey: "card")?.objectID == card.objectID, "noAction leaves the inverse as it was")
        context.rollback()
        // Cascade from the member takes the card.
        try member.delete()
        #expect(card.isDeleted)
        try await context.save()
        #expect(try store.count(of: "Card") == 0)
    }

    @Test func fetchIncludesUnsavedChangesSortsAndPages() async throws {
        let store = Store(inMemory: try libraryModel())
        let context = store.viewContext
        for (index, year) in [1990, 1965, 2001, 1965, 1980].enumerated() {
            try context.make("Book", ["code": .string("F\(index)"), "title": .string("T\(index)"), "year": .integer(Int64(year))])
        }
        try context.make("Magazine", ["code": "M1"])
        try await context.save()
        let unsaved = try context.make("Book", ["code": "F9", "title": "New", "year": 1970])
        let gone = try #require(try context.fetchFirst(FetchRequest("Book", predicate: .equal("code", "F2"))))
        try gone.delete()

        var request = FetchRequest(
            "Book", predicate: .compare("year", .less, 2000),
            sortKeys: [SortKey("year"), SortKey("code", ascending: false)])
        #expect(try context.fetch(request).compactMap { $0.string("code") } == ["F3", "F1", "F9", "F4", "F0"])
        request.fetchOffset = 1
        request.fetchLimit = 2
        #expect(try context.fetch(request).compactMap { $0.string("code") } == ["F1", "F9"])
        #expect(try context.count(FetchRequest("Item")) == 6, "sub-entities are included")
        #expect(try context.count(FetchRequest("Item", includesSubentities: false)) == 0)
        #expect(try context.exists(FetchRequest("Book", predicate: .and([.equal("year", 1970), .not(.equal("title", "Old"))]))))
        #expect(try context.fetch(FetchRequest("Book", predicate: .or([.equal("code", "F9"), .equal("code", "F0")]))).count == 2)
        #expect(unsaved.isInserted)
        #expect { try context.fetch(FetchRequest("Book", predicate: .equal("nope", 1))) } throws: { ($0 as? StoreError)?.property == "nope" }
        #expect { try context.fetch(FetchRequest("Book", predicate: .equal("title", 1))) } throws: { ($0 as? StoreError)?.code == .typeMismatch }
        #expect(try context.deleteAll(FetchRequest("Book", predicate: .compare("year", .less, 1970))) == 2)
        try await context.save()
        #expect(try store.count(of: "Book") == 3)
    }
}

@Suite struct UniqueLookupTests {
    func lookup(_ context: ObjectContext, _ name: String) throws -> ManagedObject? {
        try context.fetchFirst(FetchRequest("Author", predicate: .equal("name", .string(name))))
    }

    @Test func lookupsByUniqueKeySeeUnsavedChanges() async throws {
        let store = Store(inMemory: try libraryModel())
        let context = store.viewContext
        let saved = try context.make("Author", ["name": "Saved"])
        try await context.save()
        #expect(try lookup(context, "Saved") === saved)

        let fresh = try context.make("Author", ["name": "Fresh"])
        #expect(try lookup(context, "Fresh") === fresh, "an inserted object")
        try fresh.setValue("Fresher", forKey: "name")
        #expect(try lookup(context, "Fresh") == nil, "an inserted object's old key is gone")
        #expect(try lookup(context, "Fresher") === fresh, "and its new key found")
        try fresh.setValue("Fresh", forKey: "name")
        try saved.setValue("Renamed", forKey: "name")
        #expect(try lookup(context, "Saved") == nil, "the old key is gone")
        #expect(try lookup(context, "Renamed") === saved, "the new key is found")

        let child = context.newChildContext()
        #expect(try lookup(child, "Renamed")?.objectID == saved.objectID, "a child sees its parent's pending keys")
        #expect(try lookup(child, "Saved") == nil)
        try fresh.delete()
        #expect(try lookup(context, "Fresh") == nil, "a deleted object")

        // A saved holder changed elsewhere keeps its key; deleted, it has none, in the context
        // and in a child (whose own change to the key counts first).
        let kept = try context.make("Author", ["name": "Kept"])
        let gone = try context.make("Author", ["name": "Gone"])
        try await context.save()
        try kept.setValue(1900, forKey: "born")
        #expect(try lookup(context, "Kept") === kept, "a saved holder changed in another attribute")
        try gone.delete()
        #expect(try lookup(context, "Gone") == nil, "a saved holder deleted")
        #expect(try lookup(context.newChildContext(), "Gone") == nil, "a saved holder its parent deleted")
        let renaming = context.newChildContext()
        try renaming.object(with: kept.objectID)?.setValue("Kept elsewhere", forKey: "name")
        #expect(try lookup(renaming, "Kept") == nil && lookup(renaming, "Kept elsewhere")?.objectID == kept.objectID)
        #expect(try lookup(context, "Kept") === kept, "the parent still has the key")
        context.rollback()
        #expect(try lookup(context, "Gone") === gone || lookup(context, "Gone")?.objectID == gone.objectID, "rolled back")

        // A failed save puts the changes back, and their keys.
        try context.make("Author", [:])
        await #expect(throws: StoreError.self) { try await context.save() }
        #expect(try lookup(context, "Renamed") === saved)
        #expect(try context.count(FetchRequest("Author", predicate: .equal("name", "Renamed"))) == 1)
    }

    /// The uniqueness index is shared by every snapshot and read as of each one's LSN.
    @Test func olderSnapshotsFindTheKeysOfTheirOwnState() async throws {
        let folder = TemporaryDirectory()
        let store = try Store(at: folder.store(), model: try libraryModel())
        let first = try await store.batchInsert("Author", columns: ["name"], rows: [["Kept"], ["Moved"], ["Gone"]])
        let before = store.newBackgroundContext()
        // A later save gives "Moved" to another object and frees "Gone".
        let writer = store.newBackgroundContext()
        try #require(writer.object(with: first[1])).setValue("Elsewhere", forKey: "name")
        try #require(writer.object(with: first[2])).delete()
        let newcomer = try writer.make("Author", ["name": "Moved"])
        try await writer.save()
        #expect(try lookup(before, "Moved")?.objectID == first[1], "the older snapshot still sees its own holder")
        #expect(try lookup(before, "Gone")?.objectID == first[2])
        #expect(try lookup(before, "Elsewhere") == nil)
        #expect(try lookup(store.viewContext, "Moved")?.objectID == newcomer.objectID)
        #expect(try lookup(store.viewContext, "Gone") == nil)
        #expect(try lookup(store.viewContext, "Kept")?.objectID == first[0])

        // A save refused for uniqueness leaves none of its keys behind.
        await #expect(throws: StoreError.self) {
            try await store.batchInsert("Author", columns: ["name"], rows: [["Fresh"], ["Kept"]])
        }
        #expect(try lookup(store.viewContext, "Fresh") == nil)
        let fresh = try await store.batchInsert("Author", columns: ["name"], rows: [["Fresh"]])
        #expect(try lookup(store.viewContext, "Fresh")?.objectID == fresh[0])
        // An older context that saves after others did: its save checks against the latest keys.
        try before.make("Author", ["name": "Elsewhere"])
        do {
            try await before.save()
            Issue.record("a save clashing with a later save's key went through")
        } catch {
            #expect((error as? StoreError)?.code == .uniquenessViolation)
        }
        try await store.close()

        // Reopened: the replayed index agrees.
        let reopened = try Store(at: folder.store(), model: try libraryModel())
        #expect(try lookup(reopened.viewContext, "Moved")?.objectID == newcomer.objectID)
        #expect(try lookup(reopened.viewContext, "Elsewhere")?.objectID == first[1])
        #expect(try lookup(reopened.viewContext, "Gone") == nil)
        #expect(try lookup(reopened.viewContext, "Fresh")?.objectID == fresh[0])
        try await reopened.close()
    }
}

@Suite struct SaveEdgeTests {
    @Test func changesMadeWhileASaveRunsAreKeptForTheNextSave() async throws {
        let store = Store(inMemory: try libraryModel())
        let context = store.viewContext
        let author = try context.make("Author", ["name": "During"])
        let child = context.newChildContext()
        let seenByChild = Protected<Bool>(false)
        let observation = store.observeSavesSynchronously { _ in
            // Inside the save, before it returns: the context still shows its changes, and a
            // change made now is not lost.
            seenByChild.withLock { $0 = child.object(with: author.objectID) != nil }
            try? author.setValue(2000, forKey: "born")
        }
        try await context.save()
        observation.cancel()
        #expect(seenByChild.current)
        #expect(context.hasChanges && author["born"] == .integer(2000))
        try await context.save()
        let reader = store.newBackgroundContext()
        #expect(reader.object(with: author.objectID)?["born"] == .integer(2000))
    }

    @Test func extremePagingAndForeignIDsDoNotTrap() throws {
        let store = Store(inMemory: try libraryModel())
        let context = store.viewContext
        for index in 0..<3 { try context.make("Author", ["name": .string("P\(index)")]) }
        var request = FetchRequest("Author", sortKeys: [SortKey("name")], fetchOffset: 1, fetchLimit: Int.max)
        #expect(try context.fetch(request).count == 2)
        request.fetchOffset = Int.max
        #expect(try context.fetch(request).isEmpty)
        request.fetchOffset = -5
        request.fetchLimit = -1
        #expect(try context.fetch(request).isEmpty)
        #expect(store.uri(for: ObjectID(entity: 99, key: 1)).hasSuffix("/entity99/p1"))
        #expect(context.object(with: ObjectID(entity: 99, key: 1)) == nil)
    }

    /// A fetch with no predicate, no sort and nothing unsaved reads the table's IDs alone; it
    /// must page exactly as a fetch whose predicate makes it test every row.
    @Test func anUnfilteredFetchPagesAsAFilteredOne() async throws {
        let store = Store(inMemory: try libraryModel())
        let context = store.newBackgroundContext()
        for index in 0..<7 {
            try context.make("Book", ["code": .string("B\(index)"), "title": "T", "year": .integer(Int64(1900 + index))])
            if index % 3 == 0 { try context.make("Magazine", ["code": .string("M\(index)")]) }
        }
        try await context.save()
        for entity in ["Book", "Item"] {
            for (offset, limit) in [(0, nil), (1, Int.max), (2, 3), (0, 0), (Int.max, 1), (-5, -1), (6, 5), (1, 1)] as [(Int, Int?)] {
                for reversed in [false, true] {
                    var plain = FetchRequest(entity, fetchOffset: offset, fetchLimit: limit)
                    plain.reversesOrder = reversed
                    var filtered = plain
                    filtered.predicate = .not(.equal("code", "none"))
                    #expect(
                        try context.fetchIDs(plain) == context.fetchIDs(filtered),
                        "\(entity) offset \(offset) limit \(String(describing: limit)) reversed \(reversed)")
                }
            }
        }
        #expect(try context.fetchIDs(FetchRequest("Book", fetchOffset: 1, fetchLimit: Int.max)).count == 6)
    }

    @Test func aReadOnlyOpenNeverWipes() async throws {
        let folder = TemporaryDirectory()
        let store = try Store(at: folder.store(), model: try libraryModel())
        try store.viewContext.make("Author", ["name": "Kept"])
        try await store.viewContext.save()
        try await store.close()
        var options = StoreOptions()
        options.readOnly = true
        options.modelMismatch = .wipe
        let other = try Model { Entity("Other") { Attribute("x", .string) } }
        #expect { try Store(at: folder.store(), model: other, options: options) } throws: { ($0 as? StoreError)?.code == .modelMismatch }
        let reopened = try Store(at: folder.store(), model: try libraryModel(), options: options)
        #expect(try reopened.count(of: "Author") == 1)
        try reopened.viewContext.make("Author", ["name": "Refused"])
        await #expect { try await reopened.viewContext.save() } throws: { ($0 as? StoreError)?.code == .readOnly }
    }
}

@Suite struct CanonicalLookupTests {
    @Test func lookupsOnAUniqueAttributeCompareValuesLikeAScan() async throws {
        let store = Store(inMemory: try libraryModel())
        let context = store.viewContext
        let composed = try context.make("Author", ["name": .string("Ren\u{E9}e")])  // é as one scalar
        try await context.save()
        let decomposed = FetchRequest("Author", predicate: .equal("name", .string("Rene\u{301}e")))  // e + combining accent
        #expect(try context.fetchFirst(decomposed) === composed)
        #expect(try context.fetchFirst(FetchRequest("Author", predicate: .equal("name", "Renee"))) == nil)
    }
}
