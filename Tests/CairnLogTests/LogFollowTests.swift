import CairnSupport
import CairnTestSupport
import Foundation
import Testing
@testable import CairnLog

/// A read-only log following a writer frame by frame (``Log/followWriter(byteLimit:)``).
@Suite struct LogFollowTests {
    static func following(_ store: String, io: (any FileIO)? = nil) throws -> Log {
        var options = LogOptions()
        if let io { options.fileIO = io }
        options.readOnly = true
        options.readsAcknowledgedOnly = true
        return try Log.open(at: store, options: options)
    }

    /// Every record a follower gets, step by step, until a step gets none.
    static func follow(_ log: Log, byteLimit: Int = LogTuning.followBatchBytes) throws -> [LogRecord] {
        var records: [LogRecord] = []
        while true {
            guard case .records(let step) = try log.followWriter(byteLimit: byteLimit) else {
                Issue.record("the follower was told to reopen")
                return records
            }
            if step.isEmpty { return records }
            records += step
        }
    }

    @Test func aFollowerTakesUpDictionariesTheWriterTrainsAsItFollows() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        let writer = try Log.open(at: store, options: retrainingDictionaries())
        try await writer.append(payload(0, size: 150))
        let follower = try Self.following(store)
        #expect(follower.lastLSN == LSN(1))
        var read: [LogRecord] = []
        for index in 1..<120 {
            try await writer.append(payload(index, size: 150))
            // A few frames at a time: dictionaries trained between two steps are met mid-scan.
            if index % 7 == 0 { read += try Self.follow(follower, byteLimit: 300) }
        }
        read += try Self.follow(follower)
        guard
            case .found(let manifest, _) = try ManifestFile(layout: StoreLayout(directory: store), io: PosixFileIO()).read(
                segmentsWithFrames: [], repair: false)
        else {
            Issue.record("no manifest")
            return
        }
        #expect(manifest.dictionaries.count >= 2, "dictionaries were trained while it followed")
        #expect(read.map(\.lsn) == (2...120).map { LSN(UInt64($0)) })
        #expect(read.map(\.payload) == (1..<120).map { payload($0, size: 150) })
        try? follower.closeNow()
        try await writer.close()
    }

    @Test func framesReadBeforeAStepFailsAreHandedOutAndTheNextStepGoesOnAfterThem() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        let writer = try Log.open(at: store, options: smallSegments(4096))
        try await writer.append(payload(0, size: 150))
        let failing = Protected(false)
        let follower = try Self.following(
            store,
            io: OpenHookFileIO { path, _ in
                if failing.current && path.hasSuffix("/MANIFEST") { throw LogError(.io, "injected", path: path) }
            })
        for index in 1...60 { try await writer.append(payload(index, size: 150)) }
        // The first segment's frames are read; the manifest that names the next does not open.
        failing.withLock { $0 = true }
        guard case .records(let first) = try follower.followWriter() else {
            Issue.record("the follower was told to reopen")
            return
        }
        #expect(!first.isEmpty && first.first?.lsn == LSN(2))
        #expect(throws: LogError.self) { try follower.followWriter() }
        failing.withLock { $0 = false }
        let rest = try Self.follow(follower)
        #expect((first + rest).map(\.lsn) == (2...61).map { LSN(UInt64($0)) })
        try? follower.closeNow()
        try await writer.close()
    }
}
