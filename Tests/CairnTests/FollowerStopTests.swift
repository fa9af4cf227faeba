import CairnLog
import CairnSupport
import CairnTestSupport
import Foundation
import Testing
@testable import Cairn
@testable import CairnLog

/// What a following store does at the edges: it never shows a frame the writer did not
/// acknowledge, says why when an acknowledged frame does not read, takes up a compaction made
/// while the writer was idle, and stops for good (keeping what it shows) when the store is
/// wiped, restored to an earlier state or migrated by its writer.
@Suite struct FollowerStopTests {
    /// Rewrites `ACKNOWLEDGED` as a writer does after an acknowledgement.
    static func acknowledge(_ lsn: LSN, of store: Store, at path: String) throws {
        let storeID = try #require(store.log?.storeID)
        try Data(AcknowledgedFile.bytes(storeID: storeID, lsn: lsn)).write(to: URL(fileURLWithPath: path + "/" + AcknowledgedFile.name), options: .atomic)
    }

    /// Waits (at most five seconds) until `condition` holds.
    static func wait(until condition: () -> Bool) async throws {
        for _ in 0..<5000 where !condition() { try await Task.sleep(for: .milliseconds(1)) }
    }

    /// Where the frame of each LSN starts, from a read-only log of the store.
    static func frameOffsets(_ path: String) throws -> [LSN: (file: String, offset: UInt64)] {
        var options = LogOptions()
        options.readOnly = true
        let log = try Log.open(at: path, options: options)
        defer { try? log.closeNow() }
        var offsets: [LSN: (file: String, offset: UInt64)] = [:]
        let reader = log.records(from: .first)
        while let record = try reader.next() {
            if let file = record.file, let offset = record.offset { offsets[record.lsn] = (file, offset) }
        }
        return offsets
    }

    @Test func aFollowerNeverShowsAFrameAfterTheWritersAcknowledgement() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        let writer = try Store(at: path, model: try CompactionTests.model())
        try await FollowerTests.save(6, from: writer.newBackgroundContext(), round: 0)
        let last = writer.lastSaveLSN
        // Frames written and not yet acknowledged (a sync under way): neither the open nor a
        // step reads them.
        try Self.acknowledge(LSN(last.rawValue - 3), of: writer, at: path)
        let follower = try Store(followingAt: path)
        #expect(follower.lastSaveLSN == LSN(last.rawValue - 3))
        try follower.followWriter()
        #expect(follower.lastSaveLSN == LSN(last.rawValue - 3))
        try Self.acknowledge(last, of: writer, at: path)
        try await Self.wait { follower.lastSaveLSN == last }
        #expect(follower.lastSaveLSN == last && follower.followingError == nil)
        #expect(try GoldenGraphStoreTests.dump(follower) == GoldenGraphStoreTests.dump(writer))
        try await follower.close()
        try await writer.close()
    }

    @Test(arguments: [false, true])
    func anAcknowledgedFrameThatDoesNotReadIsReportedNotWaitedOnSilently(lastDamaged: Bool) async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        let writer = try Store(at: path, model: try CompactionTests.model())
        try await FollowerTests.save(6, from: writer.newBackgroundContext(), round: 0)
        let last = writer.lastSaveLSN
        try await writer.close()
        let shown = LSN(last.rawValue - 3)
        let storeID = try #require(try AcknowledgedFile.read(StoreLayout(directory: path), PosixFileIO())?.storeID)
        let acknowledge = { (lsn: LSN) in
            try Data(AcknowledgedFile.bytes(storeID: storeID, lsn: lsn)).write(to: URL(fileURLWithPath: path + "/" + AcknowledgedFile.name), options: .atomic)
        }
        try acknowledge(shown)
        let follower = try Store(followingAt: path)
        #expect(follower.lastSaveLSN == shown)
        // The next frame damaged, valid ones after it: corruption, naming file and offset.
        // (The last frame damaged, none after it: damage too, not a copy under way.)
        let damaged = try #require(try Self.frameOffsets(path)[lastDamaged ? last : shown.next])
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: damaged.file))
        try handle.seek(toOffset: damaged.offset + UInt64(FrameHeader.size) + 1)
        let byte = try #require(try handle.read(upToCount: 1)?.first)
        try handle.seek(toOffset: damaged.offset + UInt64(FrameHeader.size) + 1)
        try handle.write(contentsOf: [byte ^ 0xFF])
        try handle.close()
        try acknowledge(last)
        try await Self.wait { follower.followingError != nil }
        let error = try #require(follower.followingError as? LogError)
        #expect(error.code == .corruption && error.path == damaged.file && error.offset == damaged.offset, "\(error)")
        #expect(follower.lastSaveLSN == (lastDamaged ? last.previous : shown))
        try await follower.close()
    }

    @Test func aCompactionWhileTheWriterIsIdleIsTakenUp() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        let writer = try Store(at: path, model: try CompactionTests.model(), options: HistoryTests.smallSegments)
        try await FollowerTests.save(30, from: writer.newBackgroundContext(), round: 0)
        let follower = try Store(followingAt: path)
        #expect(follower.lastSaveLSN == writer.lastSaveLSN)
        _ = try await writer.compact()
        try follower.followWriter()
        // Its backup and history read the files the compaction left.
        let backup = try await follower.backup(to: directory.store("backup"))
        #expect(backup.lsn == writer.lastSaveLSN)
        let history = try follower.historyReader(since: follower.historyHorizon)
        while try history.next() != nil {}
        try await follower.close()
        try await writer.close()
    }

    /// A writer with four saves at `path`, and a store following it.
    static func writerAndFollower(_ path: String) async throws -> (writer: Store, follower: Store) {
        let writer = try Store(at: path, model: try CompactionTests.model())
        try await FollowerTests.save(4, from: writer.newBackgroundContext(), round: 0)
        return (writer, try Store(followingAt: path))
    }

    /// Expects `follower` to stop for good, saying `why`, still showing `shown`, after `more`
    /// (which must not wake it again).
    static func expectStopped(_ follower: Store, saying why: String, shown: LSN, after more: () async throws -> Void = {}) async throws {
        try await wait { follower.followingError != nil }
        let error = try #require(follower.followingError as? StoreError)
        #expect(error.code == .followingStopped && error.message.contains(why), "\(error)")
        try await more()
        try await Task.sleep(for: .milliseconds(100))
        #expect((follower.followingError as? StoreError)?.code == .followingStopped)
        #expect(follower.lastSaveLSN == shown)
    }

    @Test func aWipedStoreEndsFollowingForGoodKeepingWhatItShows() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        let (writer, follower) = try await Self.writerAndFollower(path)
        let dump = try GoldenGraphStoreTests.dump(follower)
        try await writer.close()
        try FileManager.default.removeItem(atPath: path)
        let anew = try Store(at: path, model: writer.model)
        try await FollowerTests.save(8, from: anew.newBackgroundContext(), round: 0)
        try await Self.expectStopped(follower, saying: "replaced by another", shown: writer.lastSaveLSN) {
            try await FollowerTests.save(2, from: anew.newBackgroundContext(), round: 1)
        }
        #expect(try GoldenGraphStoreTests.dump(follower) == dump)
        try await follower.close()
        try await anew.close()
    }

    @Test func aStoreRestoredToAnEarlierStateEndsFollowing() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        let (writer, follower) = try await Self.writerAndFollower(path)
        let shown = follower.lastSaveLSN
        // (What a writer opening a restored backup writes: its last LSN, lower.)
        try Self.acknowledge(LSN(shown.rawValue - 2), of: writer, at: path)
        try await Self.expectStopped(follower, saying: "went back", shown: shown)
        try await follower.close()
        try await writer.close()
    }

    @Test func aMigrationByTheWriterEndsFollowing() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        let (writer, follower) = try await Self.writerAndFollower(path)
        try await writer.close()
        let migrated = try Store(at: path, model: try CompactionTests.model(addingText: true))
        // A compaction after the migration: still stopped, not opening the log again and again.
        try await Self.expectStopped(follower, saying: "migrated", shown: writer.lastSaveLSN) { _ = try await migrated.compact() }
        try await follower.close()
        try await migrated.close()
    }

    /// A read-only store stepped by hand (no thread): a follower whose every step the test makes.
    static func steppedFollower(_ path: String) throws -> Store {
        var options = StoreOptions()
        options.readOnly = true
        options.readsAcknowledgedOnly = true
        return try Store(at: path, options: options)
    }

    /// Expects the next step of `follower` to stop following, saying `why`.
    static func expectStep(of follower: Store, stopsSaying why: String) {
        #expect {
            try follower.followWriter()
        } throws: { error in
            (error as? StoreError)?.code == .followingStopped && "\(error)".contains(why)
        }
    }

    @Test func aMigrationThenACompactionStopsAStepThatOpensTheLogAgain() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        let (writer, threaded) = try await Self.writerAndFollower(path)
        try await threaded.close()
        let follower = try Self.steppedFollower(path)
        try await writer.close()
        let migrated = try Store(at: path, model: try CompactionTests.model(addingText: true))
        try await FollowerTests.save(3, from: migrated.newBackgroundContext(), round: 1)
        _ = try await migrated.compact()
        Self.expectStep(of: follower, stopsSaying: "migrated")
        #expect(follower.lastSaveLSN == writer.lastSaveLSN)
        try await follower.close()
        try await migrated.close()
    }

    @Test func aStoreRestoredFromACopyStopsFollowingRatherThanMixingTwoHistories() async throws {
        let directory = TemporaryDirectory()
        let (path, copy) = (directory.store(), directory.store("copy"))
        let model = try CompactionTests.model()
        var writer = try Store(at: path, model: model)
        try await FollowerTests.save(4, from: writer.newBackgroundContext(), round: 0)
        let follower = try Self.steppedFollower(path)
        try await writer.close()
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        writer = try Store(at: path, model: model)
        try await FollowerTests.save(4, from: writer.newBackgroundContext(), round: 1)
        try follower.followWriter()
        let shown = follower.lastSaveLSN
        #expect(shown == writer.lastSaveLSN)
        try await writer.close()
        // The copy put back (new files), and saved on past what the follower shows.
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: copy, toPath: path)
        writer = try Store(at: path, model: model)
        try await FollowerTests.save(8, from: writer.newBackgroundContext(), round: 2)
        #expect(writer.lastSaveLSN > shown)
        Self.expectStep(of: follower, stopsSaying: "restored")
        #expect(follower.lastSaveLSN == shown)
        try await follower.close()
        try await writer.close()
    }

    @Test func missedSavesComeAfterTheSavesAlreadyQueuedAndNoneIsNothing() throws {
        let feed = SaveFeed(wanted: nil, limit: 10, after: LSN(4), handler: nil)
        let entities = try CompactionTests.model().descriptions
        for lsn in [LSN(5), LSN(6)] {
            let save = EncodedSave(
                bytes: [], inserted: [], updated: [], deleted: [], transaction: TransactionInfo(microseconds: 0, author: nil, contextName: nil))
            feed.put(SaveSummary(lsn: lsn, save: save, entities: entities, snapshot: nil))
        }
        feed.putMissed(through: LSN(6), count: 0)
        #expect(feed.state.current.buffer.map(\.lsn) == [LSN(5), LSN(6)])
        feed.putMissed(through: LSN(9), count: 3)
        let buffered = Array(feed.state.current.buffer)
        #expect(buffered.map(\.lsn) == [LSN(5), LSN(6), LSN(9)])
        guard case .missed(let missed) = buffered.last else {
            Issue.record("no missed entry: \(buffered)")
            return
        }
        #expect(missed == SavesMissed(since: LSN(6), through: LSN(9), count: 3))
    }
}
