import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// Random inserts, updates, deletes and saves across several contexts, checked against a plain
/// dictionary model of what the store must hold, and again after reopening.
@Suite struct ModelBasedTests {
    typealias Row = [String: Int64]

    /// The reference: committed rows, and each context's base and pending changes.
    struct Reference {
        var committed: [ObjectID: Row] = [:]
        var bases: [[ObjectID: Row]]
        var inserted: [[ObjectID: Row]]
        var updated: [[ObjectID: Row]]
        var deleted: [Set<ObjectID>]

        init(contexts: Int) {
            bases = Array(repeating: [:], count: contexts)
            inserted = Array(repeating: [:], count: contexts)
            updated = Array(repeating: [:], count: contexts)
            deleted = Array(repeating: [], count: contexts)
        }

        func visible(_ context: Int) -> [ObjectID: Row] {
            var rows = bases[context].merging(inserted[context]) { $1 }
            for (id, changes) in updated[context] where rows[id] != nil { rows[id]?.merge(changes) { $1 } }
            for id in deleted[context] { rows[id] = nil }
            return rows
        }

        /// A save with property-level "object trump" merging; a save with nothing to save does
        /// nothing (the context keeps its snapshot).
        mutating func save(_ context: Int, follows: Bool) {
            guard !inserted[context].isEmpty || !updated[context].isEmpty || !deleted[context].isEmpty else { return }
            for (id, row) in inserted[context] { committed[id] = row }
            for (id, changes) in updated[context] where !deleted[context].contains(id) && inserted[context][id] == nil {
                committed[id]?.merge(changes) { $1 }
            }
            for id in deleted[context] { committed[id] = nil }
            inserted[context] = [:]
            updated[context] = [:]
            deleted[context] = []
            bases[context] = committed
        }
    }

    static let model: Model = {
        do {
            return try Model {
                Entity("Thing") {
                    Attribute("a", .integer64, optional: false); Attribute("b", .integer64)
                }
            }
        } catch { fatalError("\(error)") }
    }()

    @Test(arguments: [1, 2, 3, 4, 5])
    func randomOperationsMatchTheReference(seed: UInt64) async throws {
        var random = SeededRandom(seed: seed)
        let folder = TemporaryDirectory()
        var store = try Store(at: folder.store(), model: Self.model)
        var contexts = [store.viewContext, store.newBackgroundContext(name: "b1"), store.newBackgroundContext(name: "b2")]
        for context in contexts { context.mergePolicy = .mergeByPropertyObjectTrump }
        var reference = Reference(contexts: contexts.count)
        let follows = [true, false, false]

        for step in 0..<400 {
            let c = Int(random.next() % UInt64(contexts.count))
            let context = contexts[c]
            if follows[c] { reference.bases[c] = reference.committed }
            let visible = reference.visible(c)
            switch random.next() % 10 {
            case 0...3:
                let object = try context.insert("Thing")
                let row: Row = ["a": Int64(random.next() % 1000), "b": Int64(random.next() % 1000)]
                for (key, value) in row { try object.setValue(.integer(value), forKey: key) }
                reference.inserted[c][object.objectID] = row
            case 4...6:
                guard let id = visible.keys.sorted().randomElement(using: &random) else { continue }
                let key = random.next() % 2 == 0 ? "a" : "b"
                let value = Int64(random.next() % 1000)
                try #require(context.object(with: id), "step \(step): \(id) visible in \(context.name)").setValue(.integer(value), forKey: key)
                if reference.inserted[c][id] != nil { reference.inserted[c][id]?[key] = value } else { reference.updated[c][id, default: [:]][key] = value }
            case 7:
                guard let id = visible.keys.sorted().randomElement(using: &random) else { continue }
                try context.delete(try #require(context.object(with: id)))
                if reference.inserted[c].removeValue(forKey: id) == nil { reference.deleted[c].insert(id) }
            case 8:
                try await context.save()
                reference.save(c, follows: follows[c])
            default:
                if random.next() % 4 == 0 {
                    // Reopen the store: unsaved changes are lost, as the reference's are.
                    try await store.close()
                    store = try Store(at: folder.store(), model: Self.model)
                    contexts = [store.viewContext, store.newBackgroundContext(name: "b1"), store.newBackgroundContext(name: "b2")]
                    for context in contexts { context.mergePolicy = .mergeByPropertyObjectTrump }
                    let committed = reference.committed
                    reference = Reference(contexts: contexts.count)
                    reference.committed = committed
                    reference.bases = Array(repeating: committed, count: contexts.count)
                }
            }
            let view = try contexts[c].fetch(FetchRequest("Thing"))
            let actual = Dictionary(
                uniqueKeysWithValues: try view.map { object in
                    (
                        object.objectID,
                        try ["a", "b"].reduce(into: Row()) { row, key in
                            if case .integer(let value) = try object.value(forKey: key, as: Value.self) { row[key] = value }
                        }
                    )
                })
            #expect(actual == reference.visible(c), "seed \(seed) step \(step) context \(contexts[c].name)")
        }
        for (c, context) in contexts.enumerated() {
            try await context.save()
            reference.save(c, follows: follows[c])
        }
        try await store.close()
        let reopened = try Store(at: folder.store(), model: Self.model)
        let rows = try reopened.viewContext.fetch(FetchRequest("Thing"))
        let actual = Dictionary(
            uniqueKeysWithValues: try rows.map { object in
                (
                    object.objectID,
                    try ["a", "b"].reduce(into: Row()) { row, key in
                        if case .integer(let value) = try object.value(forKey: key, as: Value.self) { row[key] = value }
                    }
                )
            })
        #expect(actual == reference.committed)
        try await reopened.close()
    }
}

/// A repeatable random number generator (xorshift) for model-based tests.
