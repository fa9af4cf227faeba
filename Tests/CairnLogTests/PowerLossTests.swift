import CairnSupport
import CairnTestSupport
import Foundation
import Testing
@testable import CairnLog

/// A file system that remembers how much of each file has been synced, so that a test can make
/// the copy a power cut would leave: every segment cut to its synced length. It also keeps the
/// truncations and syncs of each file, in order.
final class SyncTrackingFileIO: FileIO, Sendable {
    private let base = PosixFileIO()
    private let synced = Protected<[String: UInt64]>([:])
    /// Per path: each truncation's length, or nil for a sync.
    private let history = Protected<[String: [UInt64?]]>([:])

    /// The synced length of every file synced so far.
    var syncedLengths: [String: UInt64] { synced.withLock { $0 } }

    /// The truncations of the file at `path`, in order: the length it was cut to, and whether
    /// it was synced before the next truncation (or the end).
    func truncations(of path: String) -> [(length: UInt64, synced: Bool)] {
        let events = history.withLock { $0[path] ?? [] }
        return events.indices.compactMap { index in
            guard let length = events[index] else { return nil }
            return (length, index + 1 < events.count && events[index + 1] == nil)
        }
    }

    private func record(_ file: OpenFile) throws {
        let length = try base.size(of: file)
        synced.withLock { $0[file.path] = max($0[file.path] ?? 0, length) }
        history.withLock { $0[file.path, default: []].append(nil) }
    }

    func sync(_ file: OpenFile) throws {
        try base.sync(file)
        try record(file)
    }

    func fullSync(_ file: OpenFile) throws {
        try base.fullSync(file)
        try record(file)
    }

    func truncate(_ file: OpenFile, to length: UInt64) throws {
        try base.truncate(file, to: length)
        synced.withLock { if let old = $0[file.path] { $0[file.path] = min(old, length) } }
        history.withLock { $0[file.path, default: []].append(length) }
    }

    func open(_ path: String, mode: FileOpenMode) throws -> OpenFile { try base.open(path, mode: mode) }
    func close(_ file: OpenFile) { base.close(file) }
    func write(_ file: OpenFile, _ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws -> Int { try base.write(file, bytes, at: offset) }
    func read(_ file: OpenFile, into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int { try base.read(file, into: buffer, at: offset) }
    func size(of file: OpenFile) throws -> UInt64 { try base.size(of: file) }
    func tryLock(_ file: OpenFile) throws -> Bool { try base.tryLock(file) }
    func tryLockShared(_ file: OpenFile) throws -> Bool { try base.tryLockShared(file) }
    func linkCount(of file: OpenFile) throws -> Int { try base.linkCount(of: file) }
    func rename(_ source: String, to destination: String) throws {
        try base.rename(source, to: destination)
        synced.withLock { if let length = $0.removeValue(forKey: source) { $0[destination] = length } }
    }
    func remove(_ path: String) throws { try base.remove(path) }
    func link(_ source: String, to destination: String) throws { try base.link(source, to: destination) }
    func syncDirectory(_ path: String) throws { try base.syncDirectory(path) }
    func contentsOfDirectory(_ path: String) throws -> [String] { try base.contentsOfDirectory(path) }
    func createDirectory(_ path: String) throws { try base.createDirectory(path) }
    func exists(_ path: String) -> Bool { base.exists(path) }
    func availableSpace(at path: String) -> UInt64? { base.availableSpace(at: path) }
}

@Suite struct PowerLossTests {
    /// Writes a power-cut image into a new store folder at `store` and reads its records, then
    /// opens it for writing (which recovers it); an image the open refuses as a damaged segment
    /// (a sector that reached the disk after one that did not, §7) is read in salvage instead
    /// (`salvaged`). Nil, with an issue recorded, for an image that does not open otherwise;
    /// without any acknowledged append, no store yet is a fine outcome (empty records).
    static func records(
        ofImage files: [String: [UInt8]], at store: String, options: LogOptions, anyAcknowledged: Bool, name: String
    ) -> (records: [LogRecord], salvaged: Bool)? {
        do {
            try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: false)
            for (file, bytes) in files { try write(bytes, to: store + "/" + file) }
            let records = try readAll(store)
            _ = try Log.open(at: store, options: options)
            return (records, false)
        } catch let error as LogError where error.code == .corruption && error.path?.hasSuffix(".seg") == true {
            var salvage = LogOptions()
            salvage.recovery = .salvage
            do {
                return (try readAll(store, options: salvage), true)
            } catch {
                Issue.record("\(name) (CAIRN_TEST_SEED=\(TestSeed.base)), salvaged: \(error)")
                return nil
            }
        } catch let error as LogError where !anyAcknowledged {
            #expect(error.code == .notFound || error.code == .corruption, "\(name): \(error)")
            return ([], false)
        } catch {
            Issue.record("\(name) (CAIRN_TEST_SEED=\(TestSeed.base)): \(error)")
            return nil
        }
    }

    /// Runs `appenders` concurrent appenders of `each` payloads (`payload(appender * 1000 + i)`),
    /// recording each acknowledged LSN with its payload's number.
    static func append(to log: Log, appenders: Int, each: Int, acknowledged: Protected<[LSN: Int]>) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for appender in 0..<appenders {
                group.addTask {
                    for index in 0..<each {
                        let id = appender * 1000 + index
                        let lsn = try await log.append(payload(id))
                        acknowledged.withLock { $0[lsn] = id }
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    /// While appenders run, repeatedly copies what a power cut would leave (the manifest and
    /// dictionaries as renamed into place, every segment cut to its synced length) and checks
    /// that the copy opens and holds every append acknowledged before the copy began.
    @Test func aPowerCutKeepsEveryAcknowledgedAppend() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        let io = SyncTrackingFileIO()
        var options = smallSegments(8192)
        options.fileIO = io
        let log = try Log.open(at: store, options: options)
        let acknowledged = Protected<[LSN: Int]>([:])
        let appenders = Task { try await Self.append(to: log, appenders: 8, each: 800, acknowledged: acknowledged) }
        var cuts = 0
        while cuts < 40 {
            try await Task.sleep(for: .milliseconds(5))
            let before = acknowledged.current
            let copy = directory.store("cut-\(cuts)")
            try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: false)
            // Copying races with the manifest's renames: copy again until a MANIFEST came along.
            while !FileManager.default.fileExists(atPath: copy + "/MANIFEST") {
                for name in try FileManager.default.contentsOfDirectory(atPath: store) where name.hasPrefix("MANIFEST") {
                    try? FileManager.default.removeItem(atPath: copy + "/" + name)
                    try? FileManager.default.copyItem(atPath: store + "/" + name, toPath: copy + "/" + name)
                }
            }
            // A dictionary is in place before any manifest names it.
            for name in try FileManager.default.contentsOfDirectory(atPath: store) where name.hasSuffix(".dict") {
                try FileManager.default.copyItem(atPath: store + "/" + name, toPath: copy + "/" + name)
            }
            let lengths = io.syncedLengths
            for name in try FileManager.default.contentsOfDirectory(atPath: store) where name.hasSuffix(".seg") {
                let bytes = try contents(store + "/" + name)
                try write(Array(bytes.prefix(Int(lengths[store + "/" + name] ?? 0))), to: copy + "/" + name)
            }
            let records = try readAll(copy)
            let byLSN = Dictionary(uniqueKeysWithValues: records.map { ($0.lsn, $0.payload) })
            for (lsn, id) in before {
                #expect(byLSN[lsn] == payload(id), "cut \(cuts): acknowledged LSN \(lsn) lost")
            }
            cuts += 1
        }
        try await appenders.value
        try await log.close()
    }

    /// Appenders roll segments and train dictionaries on a file system that, every 11 calls,
    /// says what a power cut would leave when unsynced directory entries may vanish and unsynced
    /// sectors reach the disk in any order. Every such image opens with every append
    /// acknowledged before it; or, where a sector that reached the disk follows one that did
    /// not inside an unsynced batch (docs/FORMAT.md §7), the open refuses it as corruption
    /// naming the segment, and salvage reads every acknowledged append.
    @Test func aPowerCutThatDropsDirectoryEntriesAndReordersSectorsKeepsEveryAcknowledgedAppend() async throws {
        let seed = TestSeed.named()
        let directory = TemporaryDirectory()
        let acknowledged = Protected<[LSN: Int]>([:])
        let images = Protected<[(acknowledged: [LSN: Int], files: [String: [UInt8]])]>([])
        let io = PowerCutFileIO(seed: seed, every: 11) { files in
            let before = acknowledged.current
            images.withLock { if $0.count < 120 { $0.append((before, files)) } }
        }
        var options = smallSegments(8192)
        options.fileIO = io
        options.dictionaryTraining.threshold = 32
        options.dictionaryTraining.retrainingSegmentSize = 4096
        let log = try Log.open(at: directory.store(), options: options)
        try await Self.append(to: log, appenders: 6, each: 120, acknowledged: acknowledged)
        try await log.close()

        var salvaged = 0
        for (number, image) in images.current.enumerated() {
            guard
                let (records, salvage) = Self.records(
                    ofImage: image.files, at: directory.store("cut-\(number)"), options: smallSegments(8192),
                    anyAcknowledged: !image.acknowledged.isEmpty, name: "image \(number)")
            else { continue }
            if salvage { salvaged += 1 }
            let byLSN = Dictionary(records.map { ($0.lsn, $0.payload) }, uniquingKeysWith: { first, _ in first })
            for (lsn, id) in image.acknowledged where byLSN[lsn] != payload(id) {
                Issue.record("image \(number) (CAIRN_TEST_SEED=\(TestSeed.base)): acknowledged LSN \(lsn) lost")
            }
        }
        print("PowerLossTests: \(images.current.count) power-cut images, \(salvaged) needed salvage")
        #expect(images.current.count > 40)
    }
}
