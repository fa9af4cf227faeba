import Cairn
import CairnModels
import Foundation
import Testing

@Managed final class Preference {
    var `default`: Bool
    var `class`: String?
    init(default: Bool) { self.default = `default` }
}

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

    @Test func aPropertyNamedByAKeywordIsStoredUnderItsName() async throws {
        let model = try Model(for: [Preference.self])
        #expect(model.entities.first?.attributes.map(\.name) == ["class", "default"])
        let store = try Store(inMemoryFor: [Preference.self])
        let context = store.newBackgroundContext()
        let preference = Preference(default: true)
        preference.class = "A"
        context.insert(preference)
        try await context.save()
        #expect(try preference.managedObject?.value(forKey: "default") as Bool? == true)
        let fetched = try store.viewContext.fetch(FetchDescriptor<Preference>())
        #expect(fetched.first?.default == true && fetched.first?.class == "A")
    }
}
