import CairnModels
import CairnTestSupport
import Testing

/// README's typed example, as written there (its second block here, its first in Models.swift), run.
@Suite struct ReadmeModelsExampleTests {
    @Test func theExampleRunsAndReadsBack() async throws {
        let folder = TemporaryDirectory()
        let path = folder.path + "/library.store"
        let store = try Store(at: path, for: [Author.self, Book.self])  // the model is derived from the classes
        try await store.performBackgroundTask { context in
            let author = Author(name: "Ursula K. Le Guin")
            context.insert(author)
            let book = Book(title: "The Dispossessed", year: 1974)
            book.author = author  // the book joins the context; author.books follows
            try await context.save()
        }
        let books = try store.viewContext.fetch(
            FetchDescriptor<Book>(
                predicate: #Predicate { $0.year ?? 0 > 1970 && $0.author?.name == "Ursula K. Le Guin" },
                sortBy: [SortDescriptor(\.year, order: .reverse), SortDescriptor(\.title)]))
        print(books.first?.author?.name ?? "")
        #expect(books.first?.author?.name == "Ursula K. Le Guin")
        #expect(books.map(\.title) == ["The Dispossessed"])
        #expect(books.first?.author?.books.map(\.title) == ["The Dispossessed"])
        try await store.close()

        // Reopened, the same.
        let reopened = try Store(at: path, for: [Author.self, Book.self])
        let authors = try reopened.viewContext.fetch(FetchDescriptor<Author>())
        #expect(authors.map(\.name) == ["Ursula K. Le Guin"])
        #expect(authors.first?.books.first?.year == 1974)
        try await reopened.close()
    }
}
