import CairnLog
import CairnSupport
import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// Readers of a store that compacts over and over: a read-only open (now or as of a past LSN),
/// the stored models, an inspection, a reader of records and a backup each either read a
/// consistent set of files or fail with `busy`, never with an error that calls the store damaged;
/// and the `cairn` commands retry `busy` themselves.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ReadDuringCompactionTests {
    /// A store of many small segments, and a task that saves and compacts until `stop` is set.
    struct Compacting {
        let directory = TemporaryDirectory()
        let model: Model
        let store: Store
        let stop = Protected(false)
        let rounds = Protected(0)
        let task: Task<Void, any Error>

        init() async throws {
            model = try CompactionTests.model()
            store = try Store(at: directory.store(), model: model, options: CompactionTests.manual(segmentSize: 8 << 10))
            try await CompactionTests.overwriteWorkload(store)
            let (store, stop, rounds) = (store, stop, rounds)
            task = Task {
                var round = 20
                while !stop.withLock({ $0 }) {
                    try await CompactionTests.overwriteWorkloadRound(store, round: round)
                    try await store.compact()
                    rounds.withLock { $0 += 1 }
                    round += 1
                }
            }
        }

        var path: String { directory.store() }

        func finish() async throws {
            stop.withLock { $0 = true }
            try await task.value
            try await store.close()
        }
    }

    /// An inspection that called the store damaged.
    struct CalledDamaged: Error, CustomStringConvertible {
        var description: String
    }

    static func readOnly(asOf: LSN? = nil) -> StoreOptions {
        var options = StoreOptions()
        options.readOnly = true
        options.asOf = asOf
        return options
    }

    /// Runs `body`; an error other than `busy` is recorded as a failure, with what was running.
    static func expectSuccessOrBusy(_ what: String, _ failures: inout [String], _ body: () async throws -> Void) async {
        do {
            try await body()
        } catch let error as LogError where error.code == .busy {
            return
        } catch {
            failures.append("\(what): \(error)")
        }
    }

    @Test func readOnlyReadersNeverFailOtherwiseThanBusyWhileCompactionsRun() async throws {
        let running = try await Compacting()
        var failures: [String] = []
        var succeeded = 0
        for iteration in 0..<6 {
            // Each round of reads meets a new compaction: wait for the next one to end (the
            // compacting task may wait for a pool thread while the parallel suite runs).
            let before = running.rounds.withLock { $0 }
            let deadline = ContinuousClock.now + .seconds(60)
            while running.rounds.withLock({ $0 }) == before && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(2)) }
            let path = running.path
            let model = running.model
            await Self.expectSuccessOrBusy("read-only open", &failures) {
                let opened = try Store(at: path, model: model, options: Self.readOnly())
                let count = try opened.newBackgroundContext().count(FetchRequest("Item"))
                #expect(count == 200)
                try await opened.close()
                succeeded += 1
            }
            await Self.expectSuccessOrBusy("stored models", &failures) {
                let models = try Store.storedModels(at: path)
                #expect(models.last == model)
            }
            await Self.expectSuccessOrBusy("inspection", &failures) {
                let inspection = try LogInspection.inspect(directory: path)
                if !inspection.isHealthy {
                    throw CalledDamaged(description: "\(inspection.segments.map(\.status)) \(inspection.otherProblems)")
                }
            }
            await Self.expectSuccessOrBusy("records", &failures) {
                var options = LogOptions()
                options.readOnly = true
                let log = try Log.open(at: path, options: options)
                defer { try? log.closeNow() }
                try log.records().forEach { _ in }
            }
            await Self.expectSuccessOrBusy("as of", &failures) {
                let lsn = running.store.lastSaveLSN
                do {
                    let past = try Store(at: path, model: model, options: Self.readOnly(asOf: lsn))
                    try await past.close()
                } catch let error as StoreError where error.code == .historyUnavailable {
                    // A compaction since `lastSaveLSN` was read wrote a base past it: a correct
                    // answer, when the base's LSN is past the one asked for.
                    let oldest = try #require(error.lsn, "names the oldest LSN kept: \(error)")
                    #expect(oldest > lsn, "\(error)")
                }
            }
            if iteration % 3 == 0 {
                await Self.expectSuccessOrBusy("backup", &failures) {
                    var options = LogOptions()
                    options.readOnly = true
                    let log = try Log.open(at: path, options: options)
                    defer { try? log.closeNow() }
                    _ = try log.backup(to: running.directory.store("backup-\(iteration)"))
                }
            }
        }
        let rounds = running.rounds.withLock { $0 }
        try await running.finish()
        #expect(failures.isEmpty, "\(failures.count) failures, e.g. \(failures.prefix(3))")
        #expect(succeeded > 0)
        #expect(rounds > 3, "compactions ran meanwhile: \(rounds)")
    }

    /// The file system, with a hook run once, when armed, just before the first segment is
    /// opened for reading after the manifest was: between a reader's reading of the manifest
    /// and of the files it names.
    final class HookBeforeSegmentOpen: Sendable {
        /// The hook, and whether the manifest has been read since it was armed.
        let hook: Protected<(body: (@Sendable () -> Void)?, manifestRead: Bool)>
        let io: OpenHookFileIO

        init() {
            let hook = Protected<(body: (@Sendable () -> Void)?, manifestRead: Bool)>((nil, false))
            self.hook = hook
            io = OpenHookFileIO { path, mode in
                let body = hook.withLock { state -> (@Sendable () -> Void)? in
                    if path.hasSuffix("/MANIFEST") { state.manifestRead = state.body != nil }
                    guard mode == .readOnly, path.hasSuffix(".seg"), state.manifestRead, let body = state.body else { return nil }
                    state = (nil, false)
                    return body
                }
                body?()
            }
        }

        /// The file system, with `body` run before the next segment opened after the manifest.
        func arm(_ body: @escaping @Sendable () -> Void) -> OpenHookFileIO {
            hook.withLock { $0 = (body, false) }
            return io
        }
    }

    /// A hook that saves a round and compacts `store` (waiting for it): the segments the
    /// reader's manifest names are then unlinked before it opens them.
    static func compactNow(_ store: Store, round: Int) -> @Sendable () -> Void {
        {
            let done = DispatchSemaphore(value: 0)
            Task.detached {
                try? await CompactionTests.overwriteWorkloadRound(store, round: round)
                _ = try? await store.compact()
                done.signal()
            }
            done.wait()
        }
    }

    @Test func aCompactionBetweenReadingTheManifestAndOpeningTheFilesIsReadAgain() async throws {
        let directory = TemporaryDirectory()
        let model = try CompactionTests.model()
        let store = try Store(at: directory.store(), model: model, options: CompactionTests.manual(segmentSize: 8 << 10))
        try await CompactionTests.overwriteWorkload(store)
        let path = directory.store()
        let io = HookBeforeSegmentOpen()
        var round = 30
        func armed() -> OpenHookFileIO {
            round += 1
            // New segments for the next compaction to replace.
            return io.arm(Self.compactNow(store, round: round))
        }
        try await CompactionTests.overwriteWorkloadRound(store, round: 29)

        // Each open runs on a thread of its own: the hook blocks it until the compaction ends.
        var options = Self.readOnly()
        options.fileIO = armed()
        let opened = try await onOwnThread { [options] in try Store(at: path, model: model, options: options) }
        #expect(try opened.newBackgroundContext().count(FetchRequest("Item")) == 200)
        try await opened.close()

        try await CompactionTests.overwriteWorkloadRound(store, round: 100)
        let hooked = armed()
        let inspection = try await onOwnThread { try LogInspection.inspect(directory: path, io: hooked) }
        #expect(inspection.isHealthy, "\(inspection.segments.map(\.status))")

        try await CompactionTests.overwriteWorkloadRound(store, round: 101)
        var logOptions = LogOptions()
        logOptions.readOnly = true
        logOptions.fileIO = armed()
        let log = try await onOwnThread { [logOptions] in try Log.open(at: path, options: logOptions) }
        try log.closeNow()

        // A reader of records whose next segment a compaction replaced meanwhile: busy.
        try await CompactionTests.overwriteWorkloadRound(store, round: 102)
        logOptions.fileIO = PosixFileIO()
        let reading = try Log.open(at: path, options: logOptions)
        let reader = reading.records()
        try await CompactionTests.overwriteWorkloadRound(store, round: 103)
        try await store.compact()
        #expect { try reader.forEach { _ in } } throws: { ($0 as? LogError)?.code == .busy }
        try reading.closeNow()
        try await store.close()
    }

    @Test func cairnVerifyAndQueryNeverCallACompactingStoreDamaged() async throws {
        let running = try await Compacting()
        var failures: [String] = []
        for _ in 0..<4 {
            for arguments in [["verify", running.path], ["query", running.path, "--entity", "Item", "--count"], ["stats", running.path]] {
                let result = try await runCairn(arguments)
                if result.status != 0 { failures.append("cairn \(arguments[0]): \(result.output)") }
            }
        }
        try await running.finish()
        #expect(failures.isEmpty, "\(failures.count) failures, e.g. \(failures.prefix(2))")
    }
}
