import CairnLog
import CairnSupport
import CairnTestSupport
import Foundation
import Testing
@testable import Cairn
@testable import CairnLog

/// Following a store another process writes: a read-only store that moves forward with every
/// acknowledged save, across segment rolls, compactions (reopening when one replaced what it
/// had still to read) and writer restarts, never showing a save the writer did not acknowledge.
@Suite struct FollowerTests {
    static func readOnly() -> StoreOptions {
        var options = HistoryTests.smallSegments
        options.readOnly = true
        return options
    }

    /// Saves `count` items from `context`, changing and deleting some earlier ones.
    static func save(_ count: Int, from context: ObjectContext, round: Int) async throws {
        for index in 0..<count {
            let item = try context.insert("Item")
            try item.setValue(.string("r\(round)-\(index)"), forKey: "code")
            try item.setValue(.binary((0..<200).map { UInt8(truncatingIfNeeded: $0 &* 3 &+ index &+ round) }), forKey: "blob")
            if index % 3 == 0, let earlier = try context.fetchFirst(FetchRequest("Item", predicate: .equal("round", .integer(Int64(round - 1))))) {
                try earlier.delete()
            }
            try item.setValue(.integer(Int64(round)), forKey: "round")
            try await context.save()
        }
    }

    @Test func aFollowerStepByStepEqualsTheWriterAcrossRollsAndCompactions() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        let model = try CompactionTests.model()
        let writer = try Store(at: path, model: model, options: HistoryTests.smallSegments)
        let context = writer.newBackgroundContext()
        try await Self.save(3, from: context, round: 0)
        // Stepped by hand (no thread): a read-only store and its log's followWriter.
        let follower = try Store(at: path, options: Self.readOnly())
        let events = Protected<[SaveEvent]>([])
        let observation = try follower.observeSaves { event in events.withLock { $0.append(event) } }
        let firstLog = try #require(follower.log)
        for round in 1...6 {
            if round == 3 {
                // Compacted at the follower's last save: it goes on from there.
                try follower.followWriter()
                _ = try await writer.compact()
            }
            try await Self.save(8, from: context, round: round)
            try follower.followWriter()
            #expect(follower.lastSaveLSN == writer.lastSaveLSN, "round \(round)")
            #expect(try GoldenGraphStoreTests.dump(follower) == GoldenGraphStoreTests.dump(writer), "round \(round)")
        }
        #expect(follower.log === firstLog, "the compaction kept every save the follower had still to read: no reopen")
        // Its history reads the saves it followed.
        let history = try follower.historyReader(since: HistoryToken(storeID: follower.identifier, lsn: writer.lastSaveLSN.previous))
        #expect(try history.next()?.lsn == writer.lastSaveLSN)
        // Behind a compaction that replaced what it had still to read: it opens the log again
        // and tells observers the saves between as missed.
        let before = follower.lastSaveLSN
        try await Self.save(40, from: context, round: 7)
        _ = try await writer.compact()
        try follower.followWriter()
        #expect(follower.log !== firstLog)
        #expect(follower.lastSaveLSN == writer.lastSaveLSN)
        #expect(try GoldenGraphStoreTests.dump(follower) == GoldenGraphStoreTests.dump(writer))
        for _ in 0..<1000 where events.current.count < Int(before.rawValue - firstLog.firstLSN.rawValue) { try await Task.sleep(for: .milliseconds(2)) }
        try await Task.sleep(for: .milliseconds(50))
        let told = events.current
        let saved = told.compactMap { if case .saved(let save) = $0 { save.lsn } else { nil } }
        #expect(saved == saved.sorted() && Set(saved).count == saved.count)
        guard case .missed(let missed) = told.last else {
            Issue.record("the last event is not the missed saves: \(String(describing: told.last))")
            return
        }
        // (The saves in the segment it was reading were applied one by one first.)
        #expect(missed.since == max(before, saved.last ?? before) && missed.through == writer.lastSaveLSN)
        observation.cancel()
        try await follower.close()
        try await writer.close()
    }

    @Test func aFollowingStoreMovesForwardByItselfAndToldEverySaveInOrder() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        let writer = try Store(at: path, model: try CompactionTests.model(), options: HistoryTests.smallSegments)
        try await Self.save(1, from: writer.newBackgroundContext(), round: 0)
        let follower = try Store(followingAt: path, model: writer.model)
        let start = follower.lastSaveLSN
        let lsns = Protected<[LSN]>([])
        let observation = try follower.observeSaves { event in
            if case .saved(let save) = event { lsns.withLock { $0.append(save.lsn) } }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<2 {
                group.addTask { try await Self.save(20, from: writer.newBackgroundContext(), round: worker + 1) }
            }
            try await group.waitForAll()
        }
        for _ in 0..<5000 where follower.lastSaveLSN < writer.lastSaveLSN { try await Task.sleep(for: .milliseconds(1)) }
        #expect(follower.lastSaveLSN == writer.lastSaveLSN)
        #expect(try GoldenGraphStoreTests.dump(follower) == GoldenGraphStoreTests.dump(writer))
        for _ in 0..<5000 where lsns.current.last != writer.lastSaveLSN { try await Task.sleep(for: .milliseconds(1)) }
        #expect(lsns.current.map(\.rawValue) == Array((start.rawValue + 1)...writer.lastSaveLSN.rawValue))
        #expect(follower.followingError == nil)
        #expect { try Store(followingAt: path, model: try libraryModel()) } throws: { ($0 as? StoreError)?.code == .modelMismatch }
        observation.cancel()
        try await follower.close()
        try await writer.close()
    }

    @Test func aFollowerInAnotherProcessSeesEveryAcknowledgedSaveWhileTheWriterRollsCompactsAndIsKilled() async throws {
        let folder = TemporaryDirectory()
        let path = folder.store()
        let arguments = [path, "--graph", "--appenders", "3", "--segment-size", "16384", "--compact-every", "40"]
        var generator = TestSeed.generator()
        var follower: Store?
        let told = Protected<[SaveEvent]>([])
        var observation: SaveObservation?
        for cycle in 0..<3 {
            let helper = try HelperProcess(arguments)
            if follower == nil {
                _ = try await helper.waitForLine(startingWith: "saved ", timeout: .seconds(30))
                let opened = try Store(followingAt: path)
                observation = try opened.observeSaves(bufferLimit: 100_000) { event in told.withLock { $0.append(event) } }
                follower = opened
            }
            try await Task.sleep(for: .milliseconds(Int.random(in: 300...700, using: &generator)))
            helper.kill()
            let following = try #require(follower)
            // The follower reaches the last save the killed writer acknowledged, and no further.
            let acknowledged = try #require(try AcknowledgedFile.read(StoreLayout(directory: path), PosixFileIO()))
            // (A deadline, not a count of sleeps: under the whole suite's load on two cores the
            // follower may need many seconds to apply thousands of saves.)
            let deadline = ContinuousClock.now + .seconds(90)
            while following.lastSaveLSN < acknowledged.lsn, following.followingError == nil, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }
            #expect(following.lastSaveLSN == acknowledged.lsn, "cycle \(cycle): \(String(describing: following.followingError))")
            // It holds every save the helper printed as acknowledged, whole.
            // (The entries counted by batch in one pass: a fetch per printed line would scan them
            // all thousands of times.)
            var batches: [[Int64]: Int] = [:]
            let context = following.newBackgroundContext()
            for entry in try context.fetch(FetchRequest("Entry")) {
                guard case .integer(let writer) = try entry.value(forKey: "writer", as: Value.self),
                    case .integer(let sequence) = try entry.value(forKey: "sequence", as: Value.self)
                else { continue }
                batches[[writer, sequence], default: 0] += 1
            }
            for line in helper.lines where line.hasPrefix("saved ") {
                let parts = line.split(separator: " ").compactMap { Int64($0) }
                #expect(batches[[parts[0], parts[1]]] == GraphCrashTests.batchSize(parts[1]), "cycle \(cycle): \(line)")
            }
            // Its state is the store's as of its LSN.
            let past = try Store(at: path, options: HistoryTests.asOf(following.lastSaveLSN))
            #expect(try GoldenGraphStoreTests.dump(following) == GoldenGraphStoreTests.dump(past), "cycle \(cycle)")
            try await past.close()
        }
        // Told in LSN order: each save after the one before, or a gap that a missed event covers.
        var last = LSN.zero
        for event in told.current {
            switch event {
            case .saved(let save):
                #expect(last == .zero || save.lsn == last.next, "save \(save.lsn) after \(last)")
                last = save.lsn
            case .missed(let missed):
                #expect(missed.since == last || last == .zero)
                last = missed.through
            }
        }
        #expect(last == follower?.lastSaveLSN)
        observation?.cancel()
        try await follower?.close()
    }
}
