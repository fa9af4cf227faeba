import CairnTestSupport
import Foundation
import Testing
@testable import CairnLog

/// A backup writes only into an empty directory or an earlier backup of the same store, and
/// never removes or replaces a file it did not write.
@Suite struct BackupDestinationTests {
    /// A store of a few segments.
    static func store(_ path: String, frames: Int = 80) async throws -> Log {
        let log = try Log.open(at: path, options: smallSegments())
        for index in 0..<frames { _ = try await log.append(payload(index)) }
        return log
    }

    static func names(_ path: String) throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: path))
    }

    @Test func aDirectoryHoldingFilesThatAreNotABackupIsRefusedAndLeftAsItWas() async throws {
        let directory = TemporaryDirectory()
        let log = try await Self.store(directory.store())
        let target = directory.store("target")
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        let foreign = target + "/000000000005.seg"
        try write(Array("someone else's file".utf8), to: foreign)
        try write(Array("notes".utf8), to: target + "/notes.txt")

        do {
            _ = try log.backup(to: target)
            Issue.record("the backup wrote into a directory that is not a backup")
        } catch let error as LogError {
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains(target), "names the directory: \(error)")
            #expect("\(error)".contains("000000000005.seg") || "\(error)".contains("notes.txt"), "names the file in the way: \(error)")
        }
        #expect(try Self.names(target) == ["000000000005.seg", "notes.txt"])
        #expect(try contents(foreign) == Array("someone else's file".utf8))

        // A file of another name alone is in the way too.
        let other = directory.store("other")
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
        try write(Array("notes".utf8), to: other + "/notes.txt")
        #expect { _ = try log.backup(to: other) } throws: { ($0 as? LogError)?.code == .invalidArgument }
        #expect(try Self.names(other) == ["notes.txt"])
        try await log.close()
    }

    @Test func anEarlierBackupKeepsFilesThatAreNotItsOwn() async throws {
        let directory = TemporaryDirectory()
        let log = try await Self.store(directory.store())
        let target = directory.store("target")
        _ = try log.backup(to: target)
        try write(Array("notes".utf8), to: target + "/notes.txt")
        for index in 100..<140 { _ = try await log.append(payload(index)) }
        let again = try log.backup(to: target)
        #expect(!again.copied.isEmpty)
        #expect(try contents(target + "/notes.txt") == Array("notes".utf8))

        // Another store's segment under a name the backup would use is in the way.
        let other = try Log.open(at: directory.store("other"), options: smallSegments())
        for index in 0..<200 { _ = try await other.append(payload(index)) }
        try await other.close()
        let next = try #require(try segmentFiles(directory.store("other")).last)
        let name = (next as NSString).lastPathComponent
        try #require(!FileManager.default.fileExists(atPath: target + "/" + name), "a name the backup does not hold: \(name)")
        try FileManager.default.copyItem(atPath: next, toPath: target + "/" + name)
        #expect { _ = try log.backup(to: target) } throws: { error in
            (error as? LogError)?.code == .invalidArgument && "\(error)".contains(name)
        }
        #expect(try contents(target + "/" + name) == contents(next), "left as it was")
        try await log.close()
    }

    @Test func aBackupInterruptedBeforeItsManifestIsTakenUpAgain() async throws {
        let directory = TemporaryDirectory()
        let log = try await Self.store(directory.store())
        let target = directory.store("target")
        _ = try log.backup(to: target)
        // As if the first backup had stopped before its manifest: its files alone.
        try FileManager.default.removeItem(atPath: target + "/MANIFEST")
        let report = try log.backup(to: target)
        #expect(report.lsn == log.lastLSN)
        try await log.close()
        #expect(try readAll(target).count == 80)
    }

    @Test func aTemporaryFileAPowerCutLeftBesideTheManifestIsTheBackupsOwn() async throws {
        let directory = TemporaryDirectory()
        let log = try await Self.store(directory.store())
        let target = directory.store("target")
        _ = try log.backup(to: target)
        // A power cut during the copies of a later run: a temporary file whose header is zeros,
        // one cut short within its header.
        try write([UInt8](repeating: 0, count: 4096), to: target + "/000000000099.seg.tmp")
        try write([1, 2, 3], to: target + "/000000000007.base.tmp")
        try write([1, 2, 3], to: target + "/000000000008.dict.tmp")
        for index in 100..<140 { _ = try await log.append(payload(index)) }
        let report = try log.backup(to: target)
        #expect(report.lsn == log.lastLSN)
        for name in ["000000000099.seg.tmp", "000000000007.base.tmp", "000000000008.dict.tmp"] {
            #expect(!FileManager.default.fileExists(atPath: target + "/" + name), "\(name): the backup's own, removed")
        }
        try await log.close()
        #expect(try readAll(target).count == 120)
    }

    @Test func withoutAManifestAnUnreadableTemporaryFileIsNamedForTheOperator() async throws {
        let directory = TemporaryDirectory()
        let log = try await Self.store(directory.store())
        let target = directory.store("target")
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        let temporary = target + "/000000000003.seg.tmp"
        try write([UInt8](repeating: 0, count: 100), to: temporary)
        #expect {
            _ = try log.backup(to: target)
        } throws: { error in
            (error as? LogError)?.code == .invalidArgument && "\(error)".contains("000000000003.seg.tmp")
                && "\(error)".contains("an interrupted temporary file of a backup: remove it")
        }
        #expect(try contents(temporary) == [UInt8](repeating: 0, count: 100), "left as it was")
        try await log.close()
    }

    @Test func anInterruptedBackupsDictionaryThatTheStoreHasSinceDroppedIsItsOwn() async throws {
        let directory = TemporaryDirectory()
        let log = try await Self.store(directory.store())
        let target = directory.store("target")
        _ = try log.backup(to: target)
        // An earlier backup stopped before its manifest, holding a dictionary that a compaction
        // of the store has since dropped.
        try FileManager.default.removeItem(atPath: target + "/MANIFEST")
        let dropped = target + "/000000000009.dict"
        try write(CompressionDictionary(id: 9, bytes: Array(repeating: 7, count: 300)).fileContents(), to: dropped)
        let report = try log.backup(to: target)
        #expect(report.removed.contains("000000000009.dict"), "\(report.removed)")
        #expect(try readAll(target).count == 80)

        // Bytes that are not a dictionary of Cairn's format are in the way.
        try FileManager.default.removeItem(atPath: target + "/MANIFEST")
        let foreign = target + "/000000000010.dict"
        try write(Array("not a dictionary".utf8), to: foreign)
        #expect {
            _ = try log.backup(to: target)
        } throws: { error in
            (error as? LogError)?.code == .invalidArgument && "\(error)".contains("000000000010.dict")
        }
        #expect(try contents(foreign) == Array("not a dictionary".utf8))
        try await log.close()
    }

    @Test func aFreshFileSystemsEmptyLostAndFoundIsNotInTheWay() async throws {
        let directory = TemporaryDirectory()
        let log = try await Self.store(directory.store())
        let target = directory.store("target")
        try FileManager.default.createDirectory(atPath: target + "/lost+found", withIntermediateDirectories: true)
        let report = try log.backup(to: target)
        #expect(report.lsn == log.lastLSN)
        #expect(try Self.names(target).contains("lost+found"), "kept")

        // One that holds something is not an empty directory.
        let other = directory.store("other")
        try FileManager.default.createDirectory(atPath: other + "/lost+found", withIntermediateDirectories: true)
        try write(Array("#1234".utf8), to: other + "/lost+found/#1234")
        #expect { _ = try log.backup(to: other) } throws: { error in
            (error as? LogError)?.code == .invalidArgument && "\(error)".contains("lost+found")
        }
        try await log.close()
    }
}
