import CairnModels
import CairnTestSupport
import Testing

/// README's typed example runs: its second block, compiled from README.md itself
/// (`README_TypedModelClasses.block2` in DocumentationSnippets.swift), then the store it wrote
/// is read back.
@Suite struct ReadmeModelsExampleTests {
    @Test func theExampleRunsAndReadsBack() async throws {
        let folder = TemporaryDirectory()
        let path = folder.path + "/library.store"
        // (The block opens its own store at `path`; the other parameters are for other blocks.)
        let scratch = try Store(inMemoryFor: [README_TypedModelClasses.Author.self, README_TypedModelClasses.Book.self])
        try await README_TypedModelClasses.block2(
            store: scratch, model: scratch.model, context: scratch.viewContext, path: path, data: Data(), url: URL(fileURLWithPath: path))

        let reopened = try Store(at: path, for: [README_TypedModelClasses.Author.self, README_TypedModelClasses.Book.self])
        let books = try reopened.viewContext.fetch(FetchDescriptor<README_TypedModelClasses.Book>())
        #expect(books.map(\.title) == ["The Dispossessed"])
        #expect(books.first?.year == 1974)
        #expect(books.first?.author?.name == "Ursula K. Le Guin")
        #expect(books.first?.author?.books.map(\.title) == ["The Dispossessed"])
        try await reopened.close()
    }
}
