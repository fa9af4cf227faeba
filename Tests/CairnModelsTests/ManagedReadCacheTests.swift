import CairnModels
import CairnTestSupport
import Foundation
import Testing

/// A typed object keeps its values between reads (its context's ``ViewVersion`` unchanged):
/// every change that alters what the context reads must show at the next read, whoever made it.
/// (A delete and a context that is gone: ManagedMisuseTests.)
@Suite struct ManagedReadCacheTests {
    func library() async throws -> (Store, ObjectID) {
        let store = try Store(inMemoryFor: [Author.self, Book.self])
        let id = try await store.performBackgroundTask { context in
            let book = Book(title: "Tehanu", year: 1990)
            book.author = Author(name: "Ursula K. Le Guin")
            context.insert(book)
            try await context.save()
            return try #require(book.persistentModelID)
        }
        return (store, id)
    }

    @Test func aChangeByNameInTheSameContextShowsAtTheNextRead() async throws {
        let (store, id) = try await library()
        let context = store.newBackgroundContext()
        let book = try #require(context.model(for: id, as: Book.self))
        #expect(book.title == "Tehanu")
        try book.managedObject?.setValue("Tehanu (1990)", forKey: "title")
        #expect(book.title == "Tehanu (1990)")
        // The other object of the same context, by name.
        let author = try #require(book.author)
        #expect(author.name == "Ursula K. Le Guin")
        try context.object(with: try #require(author.persistentModelID))?.setValue("U. K. Le Guin", forKey: "name")
        #expect(author.name == "U. K. Le Guin")
        context.rollback()
        #expect(book.title == "Tehanu")
        #expect(author.name == "Ursula K. Le Guin")
    }

    @Test func aSaveOfAnotherContextShowsInTheViewContext() async throws {
        let (store, id) = try await library()
        let book = try #require(store.viewContext.model(for: id, as: Book.self))
        #expect(book.year == 1990)
        try await store.performBackgroundTask { context in
            context.model(for: id, as: Book.self)?.year = 1991
            try await context.save()
        }
        #expect(book.year == 1991)
    }

    @Test func aParentsChangeShowsInItsChild() async throws {
        let (store, id) = try await library()
        let parent = store.newBackgroundContext()
        let child = parent.newChildContext()
        let inChild = try #require(child.model(for: id, as: Book.self))
        #expect(inChild.year == 1990)
        parent.model(for: id, as: Book.self)?.year = 2000
        #expect(inChild.year == 2000)
        // And the child's save shows in the parent.
        inChild.title = "Changed in the child"
        try await child.save()
        #expect(parent.model(for: id, as: Book.self)?.title == "Changed in the child")
    }

    @Test func aLongRowIsReadValueByValueAndFollowsChangesToo() async throws {
        let store = try Store(inMemoryFor: [Specimen.self])
        let context = store.newBackgroundContext()
        let specimen = Specimen(code: "long")
        let bytes = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0) })
        specimen.bytes = bytes
        specimen.text = "before"
        context.insert(specimen)
        try await context.save()
        let other = store.newBackgroundContext()
        let id = try #require(specimen.persistentModelID)
        let read = try #require(other.model(for: id, as: Specimen.self))
        #expect(read.bytes == bytes)
        #expect(read.text == "before")
        try read.managedObject?.setValue("after", forKey: "text")
        #expect(read.text == "after")
        #expect(read.bytes == bytes)
    }

    @Test func aNewObjectReadsWhatItIsSetToAfterItIsInserted() async throws {
        let (store, _) = try await library()
        let context = store.newBackgroundContext()
        let book = Book(title: "Lavinia")
        context.insert(book)
        #expect(book.title == "Lavinia")
        book.title = "Lavinia (2008)"
        book.year = 2008
        #expect(book.title == "Lavinia (2008)")
        #expect(book.year == 2008)
        try await context.save()
        #expect(book.year == 2008)
    }
}
