import Cairn
import CairnMapping
import Foundation
import Testing

/// A chunked import commits every N records and says how far it got; a cancelled import leaves
/// nothing; progress and hooks are called.
@Suite struct ChunkedImportTests {
    let model: Model
    let mapping: Mapping

    init() throws {
        model = try MapperFixtures.model()
        mapping = try MapperFixtures.mapping(model)
    }

    static func people(_ count: Int, badAt: Int? = nil) -> [UInt8] {
        let records = (0..<count).map { index in
            index == badAt ? #"{"ticket": "x"}"# : #"{"ticket": \#(index), "name": "P\#(index)"}"#
        }
        return Array(("[" + records.joined(separator: ",\n") + "]").utf8)
    }

    @Test func chunksCommitSeparatelyAndAFailureSaysHowFarItGot() async throws {
        let store = Store(inMemory: model)
        var options = ImportOptions()
        options.chunkSize = 10
        let result = try await store.importJSON(Self.people(35), into: "Person", mapping: mapping, options: options)
        #expect(result.saves == 4 && result.inserted == 35 && result.objectIDs.count == 35)

        let other = Store(inMemory: model)
        do {
            _ = try await other.importJSON(Self.people(35, badAt: 23), into: "Person", mapping: mapping, options: options)
            Issue.record("the bad record should fail the import")
        } catch let error as ImportError {
            #expect(error.committedRecords == 20)
            #expect((error.underlying as? MappingError)?.path == "$[23].ticket")
        }
        #expect(try other.viewContext.count(FetchRequest("Person")) == 20, "whole chunks only")
        // Resume where it stopped, with the record fixed.
        options.skipRecords = 20
        let resumed = try await other.importJSON(Self.people(35), into: "Person", mapping: mapping, options: options)
        #expect(resumed.inserted == 15 && resumed.records == 35)
        #expect(try other.viewContext.count(FetchRequest("Person")) == 35)
    }

    @Test func aCancelledImportLeavesNothing() async throws {
        let store = Store(inMemory: model)
        let input = Self.people(50_000)
        let task = Task { try await store.importJSON(input, into: "Person", mapping: mapping) }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(try store.viewContext.count(FetchRequest("Person")) == 0)
    }

    @Test func progressAndTheHookAreCalled() async throws {
        let store = Store(inMemory: model)
        let reports = Counter()
        let hooked = Counter()
        var options = ImportOptions()
        options.progressInterval = 10
        options.progress = { progress in
            reports.add(1)
            #expect(progress.totalBytes != nil && progress.bytes <= progress.totalBytes!)
        }
        options.afterImport = { object in
            hooked.add(1)
            try object.setValue("hooked", forKey: "nickname")
        }
        _ = try await store.importJSON(Self.people(35), into: "Person", mapping: mapping, options: options)
        #expect(reports.value == 4, "every 10 records and at the end")
        #expect(hooked.value == 35)
        #expect(try store.viewContext.one("Person", "ticket", 3)?.value(forKey: "nickname", as: String.self) == "hooked")
    }

    @Test func aFileImportsWithoutBeingReadWhole() async throws {
        let store = Store(inMemory: model)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("cairn-import-\(UUID()).json")
        try Data(Self.people(1000)).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try await store.importJSON(contentsOf: file, into: "Person", mapping: mapping)
        #expect(result.inserted == 1000 && result.bytes == Self.people(1000).count)
        await #expect(throws: MappingError.self) {
            try await store.importJSON(contentsOf: file.appendingPathExtension("missing"), into: "Person", mapping: mapping)
        }
    }
}

/// A count shared with closures.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add(_ amount: Int) { lock.withLock { count += amount } }
    var value: Int { lock.withLock { count } }
}

/// Progress as an async sequence beside the import's task.
@Suite struct ImportProgressStreamTests {
    @Test func progressArrivesAsAnAsyncSequenceThatEndsWithTheImport() async throws {
        let model = try MapperFixtures.model()
        let store = Store(inMemory: model)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("cairn-progress-\(UUID()).json")
        try Data(ChunkedImportTests.people(2500)).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var options = ImportOptions()
        options.progressInterval = 500
        let (progress, task) = store.importJSONWithProgress(contentsOf: file, into: "Person", mapping: try MapperFixtures.mapping(model), options: options)
        var steps: [ImportProgress] = []
        for await step in progress { steps.append(step) }
        let result = try await task.value
        #expect(result.inserted == 2500)
        #expect(steps.count == 6 && steps.last?.records == 2500 && steps.last?.bytes == steps.last?.totalBytes)
        #expect(steps.map(\.records) == steps.map(\.records).sorted())
    }
}
