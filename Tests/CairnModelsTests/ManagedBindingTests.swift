import Cairn
import CairnModels
import Foundation
import Testing

/// A class's binding to its entity, store by store: the memo of the last store a class was bound
/// in must never answer for another.
@Suite struct ManagedBindingTests {
    @Test func aClassUsedInTwoStoresInTurnBindsToEachStoresEntity() async throws {
        // `Tally` is entity 0 of the first store's model and entity 1 of the second's.
        let first = try Store(inMemoryFor: [Tally.self])
        let second = try Store(inMemoryFor: [Stray.self, Tally.self])
        #expect(first.model.entity(named: "Tally")?.index != second.model.entity(named: "Tally")?.index)
        for round in 0..<3 {
            for store in [first, second] {
                let context = store.newBackgroundContext()
                let tally = Tally()
                tally.count = Int16(round)
                context.insert(tally)
                try await context.save()
                #expect(tally.managedObject?.entity.name == "Tally")
                let fetched = try store.viewContext.fetch(FetchDescriptor<Tally>(sortBy: [SortDescriptor(\.count)]))
                #expect(fetched.map(\.count) == (0...round).map { Int16($0) })
            }
        }
        #expect(try second.viewContext.fetchCount(FetchDescriptor<Stray>()) == 0)
    }
}
