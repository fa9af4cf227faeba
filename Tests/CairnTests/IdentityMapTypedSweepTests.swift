import Testing

@testable import Cairn

/// The identity map with typed objects (CairnModels' instances, each holding its managed
/// object): a loop of typed fetches that drops what it fetched keeps the map bounded.
@Suite struct IdentityMapTypedSweepTests {
    /// Stands for a typed object: it holds its managed object, as `ManagedState` does.
    final class TypedStandIn {
        let object: ManagedObject
        init(_ object: ManagedObject) { self.object = object }
    }

    @Test func aLoopOfDroppedTypedFetchesKeepsTheMapBounded() throws {
        let store = Store(inMemory: try Model { Entity("Note") { Attribute("text", .string) } })
        let context = store.newBackgroundContext()
        let entity = store.model.descriptions[0]
        var map = IdentityMap()
        var key: UInt64 = 0
        var largest = 0
        for _ in 0..<300 {
            // A fetch of 1,000 objects not seen before, each made with its typed object, then dropped.
            map.prepare(forAdding: 1_000)
            for _ in 0..<1_000 {
                key += 1
                let id = ObjectID(entity: 0, key: key)
                _ = map.typedObject(id, orMake: { ManagedObject(id: id, entity: entity, context: context) }, typed: { TypedStandIn($0) })
            }
            _ = map.takeSwept()  // freed outside the lock, as the context frees them
            largest = max(largest, map.count)
        }
        // Nothing is held: the map never grows past a few sweeps' worth.
        #expect(largest <= 4 * (Tuning.identityMapMinimumSweep + 1_000), "the map reached \(largest) objects")
    }
}
