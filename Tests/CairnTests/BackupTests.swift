import CairnLog
import CairnSupport
import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// Backups: a consistent copy as of one LSN while saves go on, brought up to date
/// incrementally, refused into a directory that is not this store's backup.
@Suite struct BackupTests {
    static func readOnly() -> StoreOptions {
        var options = StoreOptions()
        options.readOnly = true
        return options
    }

    /// The dump of the store in `path`, opened read-only (a backup, restored).
    static func restoredDump(_ path: String, model: Model) async throws -> String {
        let restored = try Store(at: path, model: model, options: readOnly())
        let dump = try GoldenGraphStoreTests.dump(restored)
        try await restored.close()
        return dump
    }

    /// The codes of the items a store holds.
    static func codes(_ store: Store) throws -> Set<String> {
        let context = store.newBackgroundContext()
        return Set(try context.fetch(FetchRequest("Item")).map { try $0.value(forKey: "code", as: String.self) })
    }

    @Test func aBackupTakenWhileSavesGoOnHoldsTheStoreAsOfItsLSN() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        let model = try CompactionTests.model()
        let store = try Store(at: path, model: model, options: CompactionTests.manual(segmentSize: 16 << 10))
        try await CompactionTests.overwriteWorkload(store)
        try await store.compact()
        // Which save inserted which item.
        let savedAt = Protected<[(lsn: LSN, code: String)]>([])
        let before = try Self.codes(store)
        let lastBefore = store.lastSaveLSN
        let saving = Task {
            for index in 0..<300 {
                let context = store.newBackgroundContext()
                let item = try context.insert("Item")
                try item.setValue(.string("during-\(index)"), forKey: "code")
                try item.setValue(.string(String(repeating: "\(index)", count: 100)), forKey: "note")
                try await context.save()
                savedAt.withLock { $0.append((store.lastSaveLSN, "during-\(index)")) }
            }
        }
        try await Task.sleep(for: .milliseconds(20))
        let report = try await store.backup(to: directory.store("backup"))
        try await saving.value
        #expect(report.lsn >= lastBefore)
        #expect(report.linked.contains { $0.hasSuffix(".base") })
        let backup = try Store(at: directory.store("backup"), model: model, options: Self.readOnly())
        #expect(backup.lastSaveLSN == report.lsn)
        let expected = before.union(savedAt.withLock { $0.filter { $0.lsn <= report.lsn }.map(\.code) })
        #expect(try Self.codes(backup) == expected)
        try await backup.close()
        #expect(try LogInspection.inspect(directory: directory.store("backup")).isHealthy)

        // More saves and a compaction: the same directory is brought up to date.
        try await CompactionTests.overwriteWorkloadRound(store, round: 11)
        try await store.compact()
        try await CompactionTests.overwriteWorkloadRound(store, round: 12)
        let again = try await store.backup(to: directory.store("backup"))
        #expect(again.lsn == store.lastSaveLSN)
        #expect(!again.removed.isEmpty, "the old base and segments leave the backup: \(again)")
        let expectedDump = try GoldenGraphStoreTests.dump(store)
        #expect(try await Self.restoredDump(directory.store("backup"), model: model) == expectedDump)
        // Once more with nothing new: nothing is copied.
        let idle = try await store.backup(to: directory.store("backup"))
        #expect(idle.bytesCopied == 0 && idle.linked.isEmpty && idle.removed.isEmpty, "\(idle)")
        try await store.close()

        // Opening the backup is the restore: it takes saves of its own.
        let reopened = try Store(at: directory.store("backup"), model: model)
        #expect(try GoldenGraphStoreTests.dump(reopened) == expectedDump)
        let context = reopened.newBackgroundContext()
        try context.insert("Item").setValue(.string("after restore"), forKey: "code")
        try await context.save()
        try await reopened.close()
    }

    @Test func anActiveSegmentThatGrewIsExtendedNotCopiedAgain() async throws {
        let directory = TemporaryDirectory()
        let model = try CompactionTests.model()
        let store = try Store(at: directory.store(), model: model, options: CompactionTests.manual())
        try await CompactionTests.overwriteWorkload(store)
        let first = try await store.backup(to: directory.store("backup"))
        #expect(first.bytesCopied > 0)
        let context = store.newBackgroundContext()
        try context.insert("Item").setValue(.string("one more"), forKey: "code")
        try await context.save()
        let second = try await store.backup(to: directory.store("backup"))
        #expect(second.copied.count == 1 && second.bytesCopied < first.bytesCopied / 10, "\(second)")
        #expect(try await Self.restoredDump(directory.store("backup"), model: model) == GoldenGraphStoreTests.dump(store))
        try await store.close()
    }

    @Test func filesThatCannotBeLinkedAreCopied() async throws {
        let directory = TemporaryDirectory()
        let io = FaultyFileIO()
        let model = try CompactionTests.model()
        let store = try Store(at: directory.store(), model: model, options: CompactionTests.manual(io: io))
        try await CompactionTests.overwriteWorkload(store)
        try await store.compact()
        io.inject(.rename, onPathEndingIn: ".base")
        let report = try await store.backup(to: directory.store("backup"))
        #expect(report.copied.contains { $0.hasSuffix(".base") }, "\(report)")
        #expect(try await Self.restoredDump(directory.store("backup"), model: model) == GoldenGraphStoreTests.dump(store))
        try await store.close()
    }

    @Test func aDirectoryThatIsNotThisStoresBackupIsRefused() async throws {
        let directory = TemporaryDirectory()
        let model = try CompactionTests.model()
        let one = try Store(at: directory.store("one"), model: model)
        let two = try Store(at: directory.store("two"), model: model)
        try await one.backup(to: directory.store("backup"))
        await #expect { try await two.backup(to: directory.store("backup")) } throws: { ($0 as? LogError)?.code == .invalidArgument }
        // A restored backup (opened for writing) is never written into.
        let restored = try Store(at: directory.store("backup"), model: model)
        try await restored.close()
        await #expect { try await one.backup(to: directory.store("backup")) } throws: { ($0 as? LogError)?.code == .invalidArgument }
        await #expect(throws: StoreError.self) { try await Store(inMemory: model).backup(to: directory.store("memory")) }
        try await one.close()
        try await two.close()
    }
}
