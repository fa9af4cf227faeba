import CairnTestSupport
import Foundation
import Glibc
import Testing
@testable import CairnLog

/// A manifest that does not list every segment holding frames is stale: the open refuses the
/// store, names both files, and removes nothing; only provable left-overs are removed.
@Suite struct StaleManifestTests {
    /// A store of `count` appends in segments of 4 KiB (several rolls); returns the payloads.
    func makeStore(_ store: String, count: Int = 80) async throws -> [[UInt8]] {
        let log = try Log.open(at: store, options: smallSegments(4096))
        var appended: [[UInt8]] = []
        for index in 0..<count {
            let bytes = payload(index, size: 150)
            try await log.append(bytes)
            appended.append(bytes)
        }
        try await log.close()
        return appended
    }

    func openError(_ store: String, options: LogOptions = LogOptions()) -> LogError? {
        do {
            let log = try Log.open(at: store, options: options)
            try log.closeNow()
            return nil
        } catch {
            return error as? LogError
        }
    }

    @Test func anOlderManifestPutBackIsRefusedAndTheNewerSegmentIsKept() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        let appended = try await makeStore(store)
        let newest = try #require(try segmentFiles(store).last)
        let newestBytes = try contents(newest)
        try write(try contents(store + "/MANIFEST.prev"), to: store + "/MANIFEST")

        for readOnly in [false, true] {
            var options = LogOptions()
            options.readOnly = readOnly
            let error = try #require(openError(store, options: options), "readOnly \(readOnly)")
            #expect(error.code == .corruption && error.path == newest, "\(error)")
            #expect(error.message.contains(store + "/MANIFEST") && error.message.contains("stale"), "\(error)")
        }
        #expect(try contents(newest) == newestBytes, "the writable open removed nothing")

        let inspection = try LogInspection.inspect(directory: store)
        #expect(!inspection.isHealthy)
        #expect(inspection.unlistedFiles.contains { $0.holdsUnaccountedFrames && newest.hasSuffix($0.name) })

        // Salvage reads the segment the manifest does not list.
        var salvage = LogOptions()
        salvage.recovery = .salvage
        let salvaged = try Log.open(at: store, options: salvage)
        #expect(salvaged.recoveryReport.unlistedSegmentsRead.map { store + "/" + $0 } == [newest])
        var read: [[UInt8]] = []
        try salvaged.records().forEach { read.append($0.payload) }
        #expect(read == appended)
    }

    @Test func theDamagedManifestFallsBackToThePreviousOneOnlyWhenNothingNewerHoldsFrames() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        _ = try await makeStore(store)
        let manifest = try contents(store + "/MANIFEST")
        // MANIFEST.prev lists one segment fewer; the newest holds frames: refused.
        try write([UInt8](repeating: 0x5A, count: 100), to: store + "/MANIFEST")
        let error = try #require(openError(store))
        #expect(error.code == .corruption && error.path == store + "/MANIFEST", "\(error)")

        // With the newest segment frameless (as after a roll interrupted before its manifest),
        // the previous generation is used and the empty segment removed.
        try write(manifest, to: store + "/MANIFEST")
        let reopened = try Log.open(at: store, options: smallSegments(4096))
        let last = reopened.lastLSN
        try await reopened.close()
        let newest = try #require(try segmentFiles(store).last)
        // Roll once more, then cut the new segment back to its header and damage MANIFEST: as
        // if the roll had died after writing MANIFEST and before its frame, the manifest then
        // damaged. MANIFEST.prev does not name the empty segment, which holds nothing.
        let log = try Log.open(at: store, options: smallSegments(4096))
        var appended = 0
        while try segmentFiles(store).last == newest {
            try await log.append(payload(1000 + appended, size: 150))
            appended += 1
        }
        try await log.close()
        let rolled = try #require(try segmentFiles(store).last)
        truncateFile(rolled, to: SegmentHeader.size)
        try write([UInt8](repeating: 0x5A, count: 100), to: store + "/MANIFEST")
        let fallback = try Log.open(at: store, options: smallSegments(4096))
        #expect(fallback.recoveryReport.manifestNote?.contains("MANIFEST.prev") == true)
        #expect(fallback.recoveryReport.removedFiles.contains(URL(fileURLWithPath: rolled).lastPathComponent))
        #expect(fallback.lastLSN.rawValue == last.rawValue + UInt64(appended) - 1, "every frame before the roll")
        try await fallback.close()
    }

    @Test func leftOversAreRemovedOnlyWhenTheyProvablyHoldNothing() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        let appended = try await makeStore(store, count: 40)
        let segments = try segmentFiles(store)
        let next = segments.count + 1
        let header = Array(try contents(segments[0]).prefix(SegmentHeader.size))
        // An empty segment of an interrupted roll, a temporary file and an unlisted dictionary:
        // left-overs. A side file: kept.
        try write(header, to: store + "/" + StoreLayout.name(.segment, UInt64(next)))
        try write([1, 2, 3], to: store + "/MANIFEST.tmp")
        try write([4, 5, 6], to: store + "/" + StoreLayout.name(.dictionary, 9))
        try write([7, 8], to: store + "/" + StoreLayout.name(.segment, 1) + ".torn-100")
        let inspection = try LogInspection.inspect(directory: store)
        #expect(inspection.isHealthy)
        #expect(Set(inspection.unlistedFiles.map(\.name)).count == 4)
        let log = try Log.open(at: store)
        #expect(Set(log.recoveryReport.removedFiles) == [StoreLayout.name(.segment, UInt64(next)), "MANIFEST.tmp", StoreLayout.name(.dictionary, 9)])
        try await log.close()
        #expect(FileManager.default.fileExists(atPath: store + "/" + StoreLayout.name(.segment, 1) + ".torn-100"))

        // A segment after the active one holding one frame more than the header: refused, kept.
        let extra = store + "/" + StoreLayout.name(.segment, UInt64(next + 3))
        try write(header + [0], to: extra)
        #expect(openError(store)?.path == extra)
        #expect(FileManager.default.fileExists(atPath: extra))
        try FileManager.default.removeItem(atPath: extra)
        #expect(try readAll(store).map(\.payload) == appended)
    }

    @Test func aWipeInterruptedBeforeItsManifestLeavesTheOldStoreAndAfterItTheEmptyOne() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        let appended = try await makeStore(store, count: 40)

        // The new manifest's sync fails (before the renames that replace the manifest): the old
        // store is whole, the wipe's new segment a left-over.
        let io = FaultyFileIO()
        var options = smallSegments(4096)
        options.fileIO = io
        let log = try Log.open(at: store, options: options)
        io.inject(.fullSync, onPathEndingIn: "MANIFEST.tmp")
        #expect(throws: LogError.self) { try log.replaceWithEmptyStoreAndClose() }
        #expect(try readAll(store).map(\.payload) == appended)
        let reopened = try Log.open(at: store)
        #expect(reopened.recoveryReport.removedFiles.count == 1, "the wipe's empty segment: \(reopened.recoveryReport)")
        #expect(reopened.lastLSN == LSN(UInt64(appended.count)))

        // Replaced, then the process dies before the next open: the old segments are older than
        // the new manifest's first, so they go at that open; the store is empty.
        let oldSegments = try segmentFiles(store)
        try reopened.replaceWithEmptyStoreAndClose()
        var readOnly = LogOptions()
        readOnly.readOnly = true
        #expect(try Log.open(at: store, options: readOnly).lastLSN == .zero)
        let emptied = try Log.open(at: store)
        #expect(Set(emptied.recoveryReport.removedFiles).isSuperset(of: oldSegments.map { URL(fileURLWithPath: $0).lastPathComponent }))
        #expect(emptied.lastLSN == .zero)
        try await emptied.close()
    }

    @Test func salvageReadsAnUnlistedSegmentWhoseFramesUseAnUnlistedDictionary() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        let log = try Log.open(at: store, options: retrainingDictionaries())
        var appended: [[UInt8]] = []
        for index in 0..<90 {
            appended.append(payload(index, size: 150))
            try await log.append(appended[index])
        }
        try await log.close()
        // A manifest from before the last roll: without the newest segment and its dictionary.
        var manifest = try Manifest(decoding: contents(store + "/MANIFEST"), path: "MANIFEST")
        let dropped = manifest.segments.removeLast()
        let droppedDictionary = manifest.dictionaries.removeLast()
        #expect(manifest.segments.count >= 2 && !manifest.dictionaries.isEmpty)
        manifest.segments[manifest.segments.count - 1].isSealed = false
        manifest.segments[manifest.segments.count - 1].length = 0
        manifest.segments[manifest.segments.count - 1].frameCount = 0
        try write(manifest.encoded(), to: store + "/MANIFEST")
        let newest = store + "/" + StoreLayout.name(.segment, dropped.number)
        #expect(openError(store)?.path == newest)

        var salvage = LogOptions()
        salvage.recovery = .salvage
        let salvaged = try Log.open(at: store, options: salvage)
        #expect(salvaged.recoveryReport.unlistedSegmentsRead == [StoreLayout.name(.segment, dropped.number)])
        #expect(salvaged.recoveryReport.damage.isEmpty, "\(salvaged.recoveryReport)")
        var read: [[UInt8]] = []
        try salvaged.records().forEach { read.append($0.payload) }
        #expect(read == appended, "dictionary \(droppedDictionary.id), unlisted, decodes the newest frames")
    }
}
