import CairnLog
import CairnSupport
import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// Compaction the store starts by itself, and what a failed compaction leaves: the store as it
/// was, a status and an event saying why, and retries that back off.
@Suite struct AutomaticCompactionTests {
    /// Options whose thresholds a small test store reaches.
    static func options(_ configure: (inout AutomaticCompaction) -> Void = { _ in }) -> StoreOptions {
        var options = StoreOptions()
        options.segmentSize = 64 << 10
        options.automaticCompaction.minimumStoreSize = 0
        options.automaticCompaction.minimumLogSize = .max
        configure(&options.automaticCompaction)
        return options
    }

    /// Collects a store's compaction events.
    final class Events: Sendable {
        let events = Protected<[CompactionEvent]>([])
        var finished: [CompactionReport] {
            events.withLock { $0.compactMap { if case .finished(let report) = $0 { report } else { nil } } }
        }
        var failures: [CompactionFailure] {
            events.withLock { $0.compactMap { if case .failed(let failure) = $0 { failure } else { nil } } }
        }
    }

    static func observe(_ store: Store) -> (Events, SaveObservation) {
        let events = Events()
        let observation = store.observeCompactions { event in events.events.withLock { $0.append(event) } }
        return (events, observation)
    }

    /// Waits (up to 120 s: a parallel test run may keep the pool busy) until `condition` holds.
    static func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(120)
        while !condition() {
            try #require(ContinuousClock.now < deadline, "timed out waiting")
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Saves `rounds` rounds of updates to 100 items (each round replaces every note).
    static func overwrite(_ store: Store, rounds: Int) async throws {
        let context = store.newBackgroundContext()
        var items = try context.fetch(FetchRequest("Item"))
        if items.isEmpty {
            for index in 0..<100 {
                let item = try context.insert("Item")
                try item.setValue(.string("code-\(index)"), forKey: "code")
                items.append(item)
            }
        }
        for round in 0..<rounds {
            let token = UUID().uuidString
            for item in items { try item.setValue(.string("round \(round) \(token) " + String(repeating: "n", count: 200)), forKey: "note") }
            try await context.save()
        }
    }

    /// A store that compacts only when asked, on `io`, after three rounds of updates.
    static func overwrittenStore(at path: String, model: Model, io: FaultyFileIO) async throws -> Store {
        let store = try Store(at: path, model: model, options: CompactionTests.manual(segmentSize: 64 << 10, io: io))
        try await Self.overwrite(store, rounds: 3)
        return store
    }

    @Test func aStoreWhoseBytesAreMostlyDeadCompactsItself() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        let model = try CompactionTests.model()
        let store = try Store(at: path, model: model, options: Self.options())
        let (events, observation) = Self.observe(store)
        try await Self.overwrite(store, rounds: 8)
        try await Self.waitUntil { !events.finished.isEmpty && !store.compactionStatus.isRunning }
        let report = try #require(events.finished.first)
        #expect(report.automatic)
        #expect(report.objects == 100)
        #expect(store.compactionStatus.lastReport?.lsn != nil)
        let expected = try GoldenGraphStoreTests.dump(store)
        observation.cancel()
        try await store.close()
        #expect(try LogInspection.inspect(directory: path).base != nil)
        let reopened = try Store(at: path, model: model, options: Self.options())
        #expect(try GoldenGraphStoreTests.dump(reopened) == expected)
        try await reopened.close()
    }

    @Test func aLogThatOutgrowsItsBaseIsCompacted() async throws {
        let directory = TemporaryDirectory()
        let model = try CompactionTests.model()
        // Inserts only: nothing is dead, but the log after the (absent) base passes the minimum.
        let store = try Store(
            at: directory.store(), model: model,
            options: Self.options {
                $0.deadFraction = 2
                $0.minimumLogSize = 32 << 10
            })
        let (events, observation) = Self.observe(store)
        let context = store.newBackgroundContext()
        for index in 0..<1000 {
            let item = try context.insert("Item")
            try item.setValue(.string("code-\(index)"), forKey: "code")
            // Values that compress little, so that the log's bytes on disk grow.
            try item.setValue(.string((0..<4).map { _ in UUID().uuidString }.joined()), forKey: "note")
            if index % 50 == 49 { try await context.save() }
        }
        try await Self.waitUntil { !events.finished.isEmpty && !store.compactionStatus.isRunning }
        #expect(events.finished.first?.automatic == true)
        #expect(try store.count(of: "Item") == 1000)
        observation.cancel()
        try await store.close()
    }

    @Test func switchedOffAStoreNeverCompactsItself() async throws {
        let directory = TemporaryDirectory()
        let store = try Store(at: directory.store(), model: try CompactionTests.model(), options: CompactionTests.manual(segmentSize: 64 << 10))
        let (events, observation) = Self.observe(store)
        try await Self.overwrite(store, rounds: 8)
        try await Task.sleep(for: .milliseconds(50))
        #expect(events.events.withLock { $0.isEmpty })
        #expect(store.compactionStatus.lastReport == nil)
        observation.cancel()
        try await store.close()
    }

    @Test func aDiskWithoutRoomRefusesCompactionAndLeavesTheStoreAsItWas() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        let io = FaultyFileIO()
        let model = try CompactionTests.model()
        let store = try await Self.overwrittenStore(at: path, model: model, io: io)
        let files = try FileManager.default.contentsOfDirectory(atPath: path).sorted()
        let expected = try GoldenGraphStoreTests.dump(store)
        let (events, observation) = Self.observe(store)
        io.reportAvailableSpace(10_000)
        await #expect(throws: LogError.self) {
            do { try await store.compact() } catch let error as LogError {
                #expect(error.code == .diskFull)
                #expect(error.message.contains("free"))
                throw error
            }
        }
        #expect(store.compactionStatus.lastFailure != nil)
        #expect(!store.compactionStatus.isRunning)
        #expect(events.failures.count == 1)
        // Nothing written; the state is unchanged.
        #expect(try FileManager.default.contentsOfDirectory(atPath: path).sorted() == files)
        #expect(try GoldenGraphStoreTests.dump(store) == expected)
        // Room again: it compacts, and the failure is cleared.
        io.reportAvailableSpace(nil)
        try await store.compact()
        #expect(store.compactionStatus.lastFailure == nil)
        observation.cancel()
        try await store.close()
        let reopened = try Store(at: path, model: model)
        #expect(try GoldenGraphStoreTests.dump(reopened) == expected)
        try await reopened.close()
    }

    @Test(arguments: [IOStep.write, .fullSync, .rename])
    func anIOErrorWhileWritingTheBaseLeavesTheStoreAsItWas(step: IOStep) async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        let io = FaultyFileIO()
        let model = try CompactionTests.model()
        let store = try await Self.overwrittenStore(at: path, model: model, io: io)
        let expected = try GoldenGraphStoreTests.dump(store)
        io.inject(step, onPathEndingIn: ".base.tmp")
        await #expect(throws: LogError.self) { try await store.compact() }
        #expect(!(try FileManager.default.contentsOfDirectory(atPath: path)).contains { $0.contains(".base") })
        // Saves go on, and a later compaction succeeds.
        try await Self.overwrite(store, rounds: 1)
        let later = try GoldenGraphStoreTests.dump(store)
        #expect(later != expected)
        try await store.compact()
        try await store.close()
        let reopened = try Store(at: path, model: model)
        #expect(try GoldenGraphStoreTests.dump(reopened) == later)
        try await reopened.close()
    }

    @Test func failedAutomaticCompactionsBackOffAndRecover() async throws {
        let directory = TemporaryDirectory()
        let io = FaultyFileIO()
        var options = Self.options {
            $0.firstRetryDelay = .milliseconds(100)
            $0.maximumRetryDelay = .milliseconds(200)
        }
        options.fileIO = io
        let store = try Store(at: directory.store(), model: try CompactionTests.model(), options: options)
        let (events, observation) = Self.observe(store)
        io.reportAvailableSpace(1)
        // Saves go on; each try after a hold fails again, and the holds double up to the maximum.
        let deadline = ContinuousClock.now + .seconds(480)  // a parallel test run may keep the pool busy for minutes
        while events.failures.count < 3 {
            try #require(ContinuousClock.now < deadline, "timed out waiting: \(events.failures) \(store.compactionStatus)")
            try await Self.overwrite(store, rounds: 1)
        }
        // The event comes just after the status: wait for both.
        try await Self.waitUntil { !store.compactionStatus.isRunning && store.compactionStatus.consecutiveFailures == events.failures.count }
        let failures = events.failures
        #expect(failures.allSatisfy { $0.automatic && "\($0.error)".contains("free") })
        #expect(failures.prefix(3).map(\.retryDelay) == [.milliseconds(100), .milliseconds(200), .milliseconds(200)])
        for (earlier, later) in zip(failures, failures.dropFirst()) {
            let gap = later.date.timeIntervalSince(earlier.date)
            #expect(gap >= 0.9 * (earlier.retryDelay?.inSeconds ?? 0), "a try \(gap) s after the previous failure")
        }
        #expect(store.compactionStatus.consecutiveFailures == failures.count)
        #expect(store.compactionStatus.nextAttempt != nil)
        // Room again: a later save's try succeeds and the count resets.
        io.reportAvailableSpace(nil)
        // A deadline of its own: the first wait may have used most of the other one.
        let recovery = ContinuousClock.now + .seconds(480)
        while events.finished.isEmpty {
            try #require(ContinuousClock.now < recovery, "timed out waiting: \(store.compactionStatus)")
            try await Self.overwrite(store, rounds: 1)
        }
        try await Self.waitUntil { !store.compactionStatus.isRunning }
        #expect(store.compactionStatus.consecutiveFailures == 0)
        #expect(store.compactionStatus.lastFailure == nil)
        #expect(store.compactionStatus.nextAttempt == nil)
        observation.cancel()
        try await store.close()
    }

    @Test func closingDuringACompactionStopsItAndLosesNothing() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        let model = try CompactionTests.model()
        let store = try Store(at: path, model: model, options: CompactionTests.manual(segmentSize: 64 << 10))
        let context = store.newBackgroundContext()
        for index in 0..<20_000 {
            let item = try context.insert("Item")
            try item.setValue(.string("code-\(index)"), forKey: "code")
        }
        try await context.save()
        let expected = try GoldenGraphStoreTests.dump(store)
        let compaction = Task { try await store.compact() }
        try await Task.sleep(for: .milliseconds(1))
        try await store.close()
        // Either it finished before the close, or it stopped: never half of one.
        let result = await compaction.result
        if case .failure(let error) = result { #expect(error is StoreError, "\(error)") }
        #expect(!(try FileManager.default.contentsOfDirectory(atPath: path)).contains { $0.hasSuffix(".tmp") })
        let reopened = try Store(at: path, model: model)
        #expect(try GoldenGraphStoreTests.dump(reopened) == expected)
        await #expect(throws: StoreError.self) { try await store.compact() }
        try await reopened.close()
    }

    @Test func retryDelaysDoubleUpToTheMaximum() {
        var settings = AutomaticCompaction()
        settings.firstRetryDelay = .seconds(1)
        settings.maximumRetryDelay = .seconds(5)
        #expect((1...5).map(settings.retryDelay(after:)) == [.seconds(1), .seconds(2), .seconds(4), .seconds(5), .seconds(5)])
        #expect(settings.retryDelay(after: 10_000) == .seconds(5))
    }
}
