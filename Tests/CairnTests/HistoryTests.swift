import CairnLog
import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// Reading the past: a store opened as of an LSN equals the store as it was after that save,
/// within the history compaction kept; older LSNs are refused naming the oldest kept.
@Suite struct HistoryTests {
    static func asOf(_ lsn: LSN) -> StoreOptions {
        var options = StoreOptions()
        options.readOnly = true
        options.asOf = lsn
        return options
    }

    /// Segments of 4 KiB (the history spans several), compacted only when asked.
    static var smallSegments: StoreOptions { CompactionTests.manual(segmentSize: 4096) }

    /// A store in small segments holding the 40 saves of ``history(_:)``, and their dumps.
    static func storeWithHistory(at path: String, model: Model) async throws -> (Store, [LSN: String]) {
        let store = try Store(at: path, model: model, options: smallSegments)
        return (store, try await history(store))
    }

    /// 40 saves, each inserting an item and changing or deleting an earlier one; the dump after
    /// each, by LSN.
    static func history(_ store: Store) async throws -> [LSN: String] {
        var dumps: [LSN: String] = [store.lastSaveLSN: try GoldenGraphStoreTests.dump(store)]
        let context = store.newBackgroundContext()
        var items: [ManagedObject] = []
        for index in 0..<40 {
            let item = try context.insert("Item")
            try item.setValue(.string("code-\(index)"), forKey: "code")
            try item.setValue(.integer(Int64(index)), forKey: "round")
            try item.setValue(.binary((0..<300).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index &* 13) }), forKey: "blob")
            items.append(item)
            if index >= 3 {
                if index % 4 == 0 {
                    try items[index - 3].delete()
                } else {
                    try items[index - 3].setValue(.string("changed at \(index)"), forKey: "note")
                }
            }
            try await context.save()
            dumps[store.lastSaveLSN] = try GoldenGraphStoreTests.dump(store)
        }
        return dumps
    }

    @Test func aStoreOpenedAsOfAnLSNIsTheStoreAfterThatSave() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        let model = try CompactionTests.model()
        let store = try Store(at: path, model: model)
        let dumps = try await Self.history(store)
        try await store.close()
        for (lsn, dump) in dumps {
            let past = try Store(at: path, model: model, options: Self.asOf(lsn))
            #expect(past.lastSaveLSN == lsn)
            #expect(try GoldenGraphStoreTests.dump(past) == dump, "as of \(lsn)")
            let context = past.newBackgroundContext()
            try context.insert("Tag").setValue(.string("new"), forKey: "name")
            await #expect(throws: StoreError.self) { try await context.save() }
            try await past.close()
        }
        let last = try #require(dumps.keys.max())
        #expect { try Store(at: path, model: model, options: Self.asOf(last.next)) } throws: {
            ($0 as? StoreError)?.code == .historyUnavailable
        }
        var writable = Self.asOf(last)
        writable.readOnly = false
        #expect { try Store(at: path, model: model, options: writable) } throws: { ($0 as? StoreError)?.code == .invalidArgument }
    }

    @Test(arguments: [HistoryRetention.transactions(15), .since(LSN(20))])
    func compactionKeepsTheHistoryAskedFor(retention: HistoryRetention) async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        let model = try CompactionTests.model()
        let (store, dumps) = try await Self.storeWithHistory(at: path, model: model)
        let last = store.lastSaveLSN
        let report = try await store.compact(retainHistory: retention)
        let kept: LSN
        switch retention {
        case .transactions(let count): kept = LSN(last.rawValue - count)
        case .since(let lsn): kept = lsn
        case .duration: kept = .zero
        }
        #expect(report.lsn == kept)
        #expect(!report.removedFiles.isEmpty)
        #expect(try GoldenGraphStoreTests.dump(store) == dumps[last])
        try await store.close()
        // Every state from the kept LSN on opens; the one before is refused, naming it.
        for lsn in kept.rawValue...last.rawValue {
            let past = try Store(at: path, model: model, options: Self.asOf(LSN(lsn)))
            #expect(try GoldenGraphStoreTests.dump(past) == dumps[LSN(lsn)], "as of \(lsn)")
            try await past.close()
        }
        #expect { try Store(at: path, model: model, options: Self.asOf(kept.previous)) } throws: { error in
            guard let error = error as? StoreError else { return false }
            return error.code == .historyUnavailable && error.lsn == kept && error.message.contains("LSN \(kept)")
        }
        // The store opens to its latest state, and a later compaction without history drops it.
        let reopened = try Store(at: path, model: model, options: Self.smallSegments)
        #expect(try GoldenGraphStoreTests.dump(reopened) == dumps[last])
        let full = try await reopened.compact()
        #expect(full.lsn == last)
        try await reopened.close()
        #expect { try Store(at: path, model: model, options: Self.asOf(last.previous)) } throws: {
            ($0 as? StoreError)?.code == .historyUnavailable
        }
    }

    @Test func aDurationKeepsTheSegmentsWrittenSinceThen() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        let model = try CompactionTests.model()
        let (store, dumps) = try await Self.storeWithHistory(at: path, model: model)
        // An hour: every segment is younger, so the whole log stays and the base is the first state.
        let report = try await store.compact(retainHistory: .duration(.seconds(3600)))
        #expect(report.removedFiles.isEmpty)
        let first = try #require(dumps.keys.min())
        try await store.close()
        let past = try Store(at: path, model: model, options: Self.asOf(first.next))
        #expect(try GoldenGraphStoreTests.dump(past) == dumps[first.next])
        try await past.close()
    }
}
