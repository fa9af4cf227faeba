import CairnSupport
import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// Sharing a context between tasks (`perform`) and carrying background results to the view
/// context by ID.
@Suite struct ContextPerformTests {
    static func model() throws -> Model {
        try Model {
            Entity("Counter") {
                Attribute("value", .integer64, default: 0)
            }
        }
    }

    @Test func performRunsOneBlockAtATime() async throws {
        let store = Store(inMemory: try Self.model())
        let context = store.newBackgroundContext()
        let counter = try context.insert("Counter")
        let inside = Protected((now: 0, most: 0))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<40 {
                group.addTask {
                    try await context.perform {
                        inside.withLock {
                            $0.now += 1; $0.most = max($0.most, $0.now)
                        }
                        let value = try counter.value(forKey: "value", as: Int.self)
                        await Task.yield()  // another task would read the same value here
                        try counter.setValue(value + 1, forKey: "value")
                        try await context.save()
                        inside.withLock { $0.now -= 1 }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try counter.value(forKey: "value", as: Int.self) == 40)
        #expect(inside.current.most == 1)
        let viewCounter = try store.viewContext.objects(with: [counter.objectID])
        #expect(try viewCounter.first?.value(forKey: "value", as: Int.self) == 40)
    }

    @Test(.timeLimit(.minutes(1))) func aPerformInsideABlockOfTheSameContextRunsAtOnce() async throws {
        let store = Store(inMemory: try Self.model())
        let context = store.newBackgroundContext()
        let result = try await context.perform {
            try await context.perform {
                try context.insert("Counter").setValue(5, forKey: "value")
                return 5
            }
        }
        #expect(result == 5)
        #expect(context.hasChanges)
    }

    @Test func backgroundResultsReachTheViewContextByID() async throws {
        let store = Store(inMemory: try Self.model())
        let ids = try await store.performBackgroundTask { context in
            let objects = try (0..<3).map { index in
                let counter = try context.insert("Counter")
                try counter.setValue(index, forKey: "value")
                return counter
            }
            try await context.save()
            return objects.map(\.objectID)
        }
        let counters = try store.viewContext.objects(with: ids)
        #expect(try counters.map { try $0.value(forKey: "value", as: Int.self) } == [0, 1, 2])

        // An object carried out of its context says what to do instead.
        let escaped = try await store.performBackgroundTask { context in
            let counter = try context.insert("Counter")
            try await context.save()
            return counter
        }
        #expect {
            try escaped.value(forKey: "value", as: Int?.self)
        } throws: { error in
            let error = error as? StoreError
            return error?.code == .invalidObject && error?.message.contains("objects(with:)") == true
        }
        // IDs that do not exist in the destination are named.
        let unsaved = try store.newBackgroundContext().insert("Counter").objectID
        #expect {
            try store.viewContext.objects(with: [ids[0], unsaved])
        } throws: { error in
            (error as? StoreError)?.objects == [unsaved]
        }
    }
}
