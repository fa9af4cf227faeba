import CairnModels
import CairnTestSupport
import Foundation
import Synchronization
import Testing

/// Core Data's semantics under typed objects: one instance per object and context, IDs that
/// cross contexts, unsaved changes, rollback, inverses, delete rules, objects that join a
/// context when linked, Observation after a save merges.
@Suite struct ManagedContextTests {
    func library() async throws -> (Store, ObjectID) {
        let store = try Store(inMemoryFor: [Author.self, Book.self])
        let id = try await store.performBackgroundTask { context in
            let author = Author(name: "Ursula K. Le Guin", born: 1929)
            context.insert(author)
            for title in ["Tehanu", "The Dispossessed"] { Book(title: title).author = author }
            try await context.save()
            return try #require(author.persistentModelID)
        }
        return (store, id)
    }

    @Test func oneInstancePerObjectAndContextAndIDsCrossContexts() async throws {
        let (store, id) = try await library()
        let view = store.viewContext
        let first = try #require(view.model(for: id, as: Author.self))
        let again = try #require(try view.fetch(FetchDescriptor<Author>()).first)
        #expect(first === again)
        #expect(first.books.first?.author === first)
        let background = store.newBackgroundContext()
        let other = try #require(background.model(for: id, as: Author.self))
        #expect(other !== first)
        #expect(other.persistentModelID == first.persistentModelID)
        #expect(view.model(for: id, as: Book.self) == nil)  // not a Book
    }

    @Test func inversesFollowOnBothSides() async throws {
        let (store, id) = try await library()
        let context = store.newBackgroundContext()
        let author = try #require(context.model(for: id, as: Author.self))
        let book = Book(title: "Lavinia", year: 2008)
        book.author = author  // joins author's context
        #expect(book.modelContext === context)
        #expect(Set(author.books.map(\.title)) == ["Tehanu", "The Dispossessed", "Lavinia"])
        let second = Author(name: "Someone Else")
        context.insert(second)
        second.books = [book]
        #expect(book.author === second)
        #expect(!author.books.contains { $0 === book })
        try await context.save()
        let view = store.viewContext
        #expect(try view.fetchCount(FetchDescriptor<Book>(predicate: #Predicate { $0.author?.name == "Someone Else" })) == 1)
    }

    @Test func newObjectsLinkedToEachOtherJoinTogether() async throws {
        let store = try Store(inMemoryFor: [Author.self, Book.self])
        let context = store.newBackgroundContext()
        let author = Author(name: "New")
        let book = Book(title: "Linked")
        book.author = author  // both new: kept by the book
        #expect(book.author === author)
        context.insert(book)  // the author joins with it
        #expect(author.modelContext === context)
        #expect(author.books.map(\.title) == ["Linked"])
        try await context.save()
        #expect(try store.viewContext.fetchCount(FetchDescriptor<Author>()) == 1)
    }

    @Test func unsavedChangesRollbackAndHasChanges() async throws {
        let (store, id) = try await library()
        let context = store.newBackgroundContext()
        let author = try #require(context.model(for: id, as: Author.self))
        #expect(!context.hasChanges && !author.hasChanges)
        author.born = 1930
        #expect(context.hasChanges && author.hasChanges)
        #expect(store.viewContext.model(for: id, as: Author.self)?.born == 1929)  // unsaved: not seen elsewhere
        context.rollback()
        #expect(author.born == 1929)
        #expect(!context.hasChanges)
    }

    @Test func deleteRulesApply() async throws {
        let (store, id) = try await library()
        let context = store.newBackgroundContext()
        let author = try #require(context.model(for: id, as: Author.self))
        let tehanu = try #require(author.books.first { $0.title == "Tehanu" })
        context.delete(tehanu)  // nullify: the author lets go of it
        #expect(author.books.map(\.title) == ["The Dispossessed"])
        #expect(tehanu.isDeleted)
        context.delete(author)  // cascade: its books go too
        try await context.save()
        #expect(try store.viewContext.fetchCount(FetchDescriptor<Book>()) == 0)
        #expect(try store.viewContext.fetchCount(FetchDescriptor<Author>()) == 0)
    }

    @Test func observersOfAViewContextObjectSeeASaveOfAnotherContext() async throws {
        let (store, id) = try await library()
        let author = try #require(store.viewContext.model(for: id, as: Author.self))
        let changed = Atomic(0)
        withObservationTracking {
            _ = author.born
        } onChange: {
            changed.add(1, ordering: .relaxed)
        }
        try await store.performBackgroundTask { context in
            let same = try #require(context.model(for: id, as: Author.self))
            same.born = 1930
            try await context.save()
        }
        #expect(changed.load(ordering: .relaxed) == 1)
        #expect(author.born == 1930)
    }

    @Test func settingAPropertyNotifiesItsObserversBeforeAndAfterInsertion() throws {
        let store = try Store(inMemoryFor: [Author.self, Book.self])
        let context = store.newBackgroundContext()
        let book = Book(title: "Draft")
        let changed = Atomic(0)
        func observeTitle() {
            withObservationTracking {
                _ = book.title
            } onChange: {
                changed.add(1, ordering: .relaxed)
            }
        }
        observeTitle()
        book.title = "Second"
        #expect(changed.load(ordering: .relaxed) == 1)
        observeTitle()  // (each tracking hears one change)
        context.insert(book)  // observed before, still observed after
        book.title = "Final"
        #expect(changed.load(ordering: .relaxed) == 2)
    }
}
