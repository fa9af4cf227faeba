import CairnModels
import Foundation
import Synchronization
import Testing

/// Fetched results over a typed `FetchDescriptor`: sections by a key path, typed objects out,
/// and the same change sets as by name.
@Suite struct ManagedFetchedResultsTests {
    @Test func aTypedDescriptorsResultsFollowSavesInSections() async throws {
        let store = try Store(inMemoryFor: [Author.self, Book.self])
        let view = store.viewContext
        for (title, year) in [("Tehanu", 1990), ("The Dispossessed", 1974), ("Lathe", 1971), ("Always Coming Home", 1985)] {
            view.insert(Book(title: title, year: year))
        }
        try await view.save()
        let controller = try FetchedResultsController(
            FetchDescriptor<Book>(predicate: #Predicate { $0.year ?? 0 > 1972 }, sortBy: [SortDescriptor(\.year), SortDescriptor(\.title)]),
            in: store, sectionKey: \Book.year)
        #expect(controller.results.sections.map(\.name) == ["1974", "1985", "1990"])
        #expect(controller.results.models(Book.self, in: view).map(\.title) == ["The Dispossessed", "Always Coming Home", "Tehanu"])
        let updates = Mutex<[FetchedResultsUpdate]>([])
        let observation = controller.observe { update in if !update.isInitial { updates.withLock { $0.append(update) } } }
        let before = controller.results.sectionedObjectIDs

        let lathe = try #require(try view.fetch(FetchDescriptor<Book>(predicate: #Predicate { $0.title == "Lathe" })).first)
        lathe.year = 1990
        try await view.save()
        for _ in 0..<10_000 where updates.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(1)) }
        let update = try #require(updates.withLock { $0.first })
        #expect(update.changes.inserted.map(\.place) == [FetchedIndexPath(item: 0, section: 2)], "Lathe joins 1990, before Tehanu")
        #expect(update.changes.apply(to: before) == controller.results.sectionedObjectIDs)
        #expect(controller.results.models(Book.self, inSection: 2, in: view).map(\.title) == ["Lathe", "Tehanu"])
        #expect(throws: StoreError.self) {
            try FetchedResultsController(FetchDescriptor<Book>(sortBy: [SortDescriptor(\.title)]), in: store, sectionKey: \Book.year)
        }
        #expect(throws: StoreError.self) {
            try FetchedResultsController(FetchDescriptor<Book>(sortBy: [SortDescriptor(\.title)]), in: store, sectionKey: \Book.author)
        }
        observation.cancel()
    }
}
