import CairnModels
import Foundation
import Synchronization
import Testing

/// What a `deinit` of a typed class read, by label.
private let lastWords = Mutex<[String]>([])

/// A class whose `deinit` reads a property: the context must not let go of an instance while
/// it holds its own lock, or the read would wait for that lock forever.
@Managed final class Farewell {
    var label: String
    init(label: String) { self.label = label }
    deinit {
        let label = self.label
        lastWords.withLock { $0.append(label) }
    }
}

/// (A regression would hang on the context's lock: the time limit makes it a failure.)
@Suite(.serialized, .timeLimit(.minutes(1))) struct ManagedDeinitTests {
    func saved(_ labels: [String]) async throws -> Store {
        let store = try Store(inMemoryFor: [Farewell.self])
        try await store.performBackgroundTask { context in
            // By name: no typed object is made (and let go of) here.
            for label in labels { try context.insert("Farewell").setValue(label, forKey: "label") }
            try await context.save()
        }
        return store
    }

    /// Waits until the reads of `count` deinits are in (at most five seconds).
    func words(_ count: Int) async throws -> [String] {
        for _ in 0..<500 {
            let words = lastWords.withLock { $0 }
            if words.count >= count { return words }
            try await Task.sleep(for: .milliseconds(10))
        }
        return lastWords.withLock { $0 }
    }

    @Test func aSweepLetsGoOfObjectsWhoseDeinitReadsAProperty() async throws {
        lastWords.withLock { $0 = [] }
        let store = try await saved(["a", "b", "c"])
        let context = store.newBackgroundContext()
        do {
            let fetched = try context.fetch(FetchDescriptor<Farewell>())
            #expect(fetched.count == 3)
        }
        context.releaseUnusedObjects()
        #expect(try await words(3).sorted() == ["a", "b", "c"])
        withExtendedLifetime(context) {}  // (the deinits read in a context still there)
    }

    @Test func aResetLetsGoOfObjectsWhoseDeinitReadsAProperty() async throws {
        lastWords.withLock { $0 = [] }
        let store = try await saved(["d", "e"])
        let context = store.newBackgroundContext()
        do {
            let fetched = try context.fetch(FetchDescriptor<Farewell>())
            #expect(fetched.map(\.label).sorted() == ["d", "e"])
        }
        context.reset()
        #expect(try await words(2).sorted() == ["d", "e"])
        withExtendedLifetime(context) {}
    }
}
