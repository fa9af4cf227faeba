import CairnLog
import CairnSupport
import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// A read replica: a follower opened on a folder that `backup` writes and rsync ships (two local
/// folders stand in for two machines) moves forward as new backups arrive, and waits out a
/// folder caught between two copies, saying why.
@Suite(.serialized) struct ReplicaTests {
    /// `rsync -a --delete from/ to/`, as a replica's shipping job runs it.
    static func rsync(_ from: String, _ to: String) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/rsync") else {
            throw HelperError(message: "rsync is not installed (apt-get install rsync)")
        }
        let process = try ChildProcess("/usr/bin/rsync", ["-a", "--delete", from + "/", to + "/"], includeStandardError: true)
        let status = process.waitUntilExit()
        guard status == 0 else { throw HelperError(message: "rsync failed (\(status)): \(String(decoding: process.outputBytes, as: UTF8.self))") }
    }

    /// Waits (at most ten seconds) until `store` reached `lsn`.
    static func wait(_ store: Store, reaches lsn: LSN) async throws {
        // (Its error is cleared once the step that got there returns.)
        for _ in 0..<30_000 where store.lastSaveLSN < lsn || store.followingError != nil { try await Task.sleep(for: .milliseconds(1)) }
    }

    @Test func aReplicaFollowsTheBackupsRsyncShipsAndWaitsOutAFolderCaughtBetweenTwoCopies() async throws {
        let folder = TemporaryDirectory()
        let (path, backups, replicaPath) = (folder.store("live"), folder.store("backups"), folder.store("replica"))
        let writer = try Store(at: path, model: try CompactionTests.model(), options: HistoryTests.smallSegments)
        let context = writer.newBackgroundContext()
        try await FollowerTests.save(4, from: context, round: 0)
        _ = try await writer.backup(to: backups)
        try Self.rsync(backups, replicaPath)
        let replica = try Store(followingAt: replicaPath, model: writer.model)
        #expect(replica.lastSaveLSN == writer.lastSaveLSN)
        for round in 1...5 {
            try await FollowerTests.save(6, from: context, round: round)
            if round == 3 { _ = try await writer.compact() }
            let backup = try await writer.backup(to: backups)
            try Self.rsync(backups, replicaPath)
            try await Self.wait(replica, reaches: backup.lsn)
            #expect(replica.lastSaveLSN == backup.lsn, "round \(round): \(String(describing: replica.followingError))")
            #expect(try GoldenGraphStoreTests.dump(replica) == GoldenGraphStoreTests.dump(writer), "round \(round)")
        }
        // Caught between two copies: the new manifest arrived before the segments it names.
        // The replica keeps what it shows and says why; the rest of the copy lets it go on.
        try await FollowerTests.save(30, from: context, round: 6)
        let backup = try await writer.backup(to: backups)
        let shown = replica.lastSaveLSN
        // (Renamed into place, as rsync does: a manifest is never seen half written.)
        try FileManager.default.copyItem(atPath: backups + "/MANIFEST", toPath: replicaPath + "/.MANIFEST.copy")
        guard rename(replicaPath + "/.MANIFEST.copy", replicaPath + "/MANIFEST") == 0 else { throw HelperError(message: "rename failed") }
        for _ in 0..<2000 where replica.followingError == nil && replica.lastSaveLSN < backup.lsn { try await Task.sleep(for: .milliseconds(1)) }
        #expect(replica.lastSaveLSN < backup.lsn && replica.lastSaveLSN >= shown)
        let error = try #require(replica.followingError)
        #expect("\(error)".contains(".seg"), "the error names the file the copy has yet to bring: \(error)")
        try Self.rsync(backups, replicaPath)
        try await Self.wait(replica, reaches: backup.lsn)
        #expect(
            replica.lastSaveLSN == backup.lsn && replica.followingError == nil,
            "\(replica.lastSaveLSN) of \(backup.lsn): \(String(describing: replica.followingError))")
        #expect(try GoldenGraphStoreTests.dump(replica) == GoldenGraphStoreTests.dump(writer))
        // A folder caught between two copies does not open: the error names what is missing.
        let partial = folder.store("partial")
        try FileManager.default.createDirectory(atPath: partial, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: backups + "/MANIFEST", toPath: partial + "/MANIFEST")
        #expect { try Store(followingAt: partial) } throws: { error in
            (error as? LogError)?.code == .busy && "\(error)".contains("caught between two copies")
        }
        try await replica.close()
        try await writer.close()
    }
}
