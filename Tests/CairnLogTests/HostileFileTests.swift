import CairnTestSupport
import Foundation
import Testing
@testable import CairnLog

@Suite struct HostileFileTests {
    /// A store with a sealed first segment and an active second one.
    func makeStore(_ store: String) async throws {
        var options = smallSegments(4096)
        options.compression = .none
        let log = try Log.open(at: store, options: options)
        for index in 0..<40 { try await log.append(payload(index, size: 200)) }
        try await log.close()
    }

    /// A manifest's bytes with its trailing checksum recomputed (so that only the edit is wrong).
    func resealed(_ manifest: [UInt8]) -> [UInt8] {
        var bytes = manifest
        let checksum = bytes.withUnsafeBytes { CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<(bytes.count - 4)]))) }
        withUnsafeBytes(of: checksum.littleEndian) { bytes.replaceSubrange((bytes.count - 4)..., with: $0) }
        return bytes
    }

    func openError(_ store: String, options: LogOptions = LogOptions()) -> LogError? {
        do {
            _ = try Log.open(at: store, options: options)
            return nil
        } catch {
            return error as? LogError
        }
    }

    /// Writes a frame header with a valid header checksum that claims `length` bytes.
    func forgedHeader(lsn: UInt64, epoch: UInt32, length: UInt32) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: FrameHeader.size)
        let header = FrameHeader(lsn: LSN(lsn), epoch: epoch, storedLength: length, rawLength: length, dictionaryID: 0, codec: .raw)
        bytes.withUnsafeMutableBytes { header.write(to: $0, payloadChecksum: 0) }
        return bytes
    }

    @Test func aFrameClaimingFourGigabytesIsRefusedBeforeAnyAllocation() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        try await makeStore(store)
        let sealed = try segmentFiles(store)[0]
        var bytes = try contents(sealed)
        let epoch = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 12, as: UInt32.self) }
        bytes.replaceSubrange(
            SegmentHeader.size..<(SegmentHeader.size + FrameHeader.size),
            with: forgedHeader(lsn: 1, epoch: epoch, length: 0xFFFF_FFFF))
        try write(bytes, to: sealed)
        let error = try #require(openError(store))
        #expect(error.code == .corruption)
        #expect(error.offset == UInt64(SegmentHeader.size))
        #expect(error.message.contains("maximum frame size"), "\(error)")

        // At the tail of the active segment too: its header checksum holds, so its length is
        // what was written, and no writer writes over the limit. Damage, never cut.
        try await makeStore(directory.store("tail"))
        let active = try #require(try segmentFiles(directory.store("tail")).last)
        let activeBytes = try contents(active)
        let activeEpoch = activeBytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 12, as: UInt32.self) }
        let log = try Log.open(at: directory.store("tail"))
        let next = log.lastLSN.next.rawValue
        try await log.close()
        try write(activeBytes + forgedHeader(lsn: next, epoch: activeEpoch, length: 0xFFFF_FFFF), to: active)
        let tailError = try #require(openError(directory.store("tail")))
        #expect(tailError.code == .corruption && tailError.offset == UInt64(activeBytes.count), "\(tailError)")
        #expect(try contents(active).count == activeBytes.count + FrameHeader.size, "nothing was cut")
    }

    @Test func zeroFilledSegmentsAreRefused() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        try await makeStore(store)
        for segment in try segmentFiles(store) {
            let original = try contents(segment)
            try write([UInt8](repeating: 0, count: original.count), to: segment)
            let error = try #require(openError(store))
            #expect(error.code == .corruption && error.path == segment, "\(error)")
            try write(original, to: segment)
        }
        #expect(openError(store) == nil)
    }

    @Test func garbageOrTruncatedManifestIsAnErrorWithoutAFallback() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        try await makeStore(store)
        let manifest = store + "/MANIFEST"
        let original = try contents(manifest)
        try FileManager.default.removeItem(atPath: store + "/MANIFEST.prev")

        var generator = TestSeed.generator()
        let garbage: [[UInt8]] = [
            (0..<original.count).map { _ in UInt8.random(in: 0...255, using: &generator) },
            Array(original.prefix(original.count / 2)),
            Array(original.prefix(10)),
            [],
            Array("CAIRNMAN".utf8) + [1, 0, 0, 0] + [0xFF, 0xFF, 0xFF, 0x7F] + [UInt8](repeating: 0xFF, count: 64)
        ]
        for bytes in garbage {
            try write(bytes, to: manifest)
            let error = try #require(openError(store))
            #expect(error.code == .corruption && error.path == manifest, "\(error)")
        }
        // A manifest claiming four billion segments, with a valid checksum.
        var huge = original
        huge.replaceSubrange(44..<48, with: [0xFF, 0xFF, 0xFF, 0xFF])
        try write(resealed(huge), to: manifest)
        #expect(openError(store)?.code == .corruption)

        try write(original, to: manifest)
        #expect(openError(store) == nil)
    }

    @Test func damagedManifestFallsBackToThePreviousGenerationWhenNothingIsLost() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        let log = try Log.open(at: store)
        try await log.append(payload(1))
        try await log.close()
        // No rewrite has happened yet; make MANIFEST.prev a copy of the current generation.
        let manifest = store + "/MANIFEST"
        let previous = store + "/MANIFEST.prev"
        try write(try contents(manifest), to: previous)
        try write([UInt8](repeating: 0x55, count: 80), to: manifest)
        let reopened = try Log.open(at: store)
        #expect(reopened.recoveryReport.manifestNote?.contains("MANIFEST.prev") == true)
        #expect(reopened.lastLSN == LSN(1))
        try await reopened.close()
    }

    @Test func aCrashBetweenTheManifestRenamesIsRecovered() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        try await makeStore(store)
        let count = try readAll(store).count
        // As if the process died after renaming MANIFEST away and before renaming the new one in.
        try FileManager.default.moveItem(atPath: store + "/MANIFEST", toPath: store + "/MANIFEST.tmp")
        let log = try Log.open(at: store, options: smallSegments(4096))
        #expect(log.recoveryReport.manifestNote?.contains("MANIFEST.tmp") == true)
        #expect(log.lastLSN == LSN(UInt64(count)))
        try await log.close()
        #expect(FileManager.default.fileExists(atPath: store + "/MANIFEST"))
    }

    @Test func aSegmentOfAnotherStoreIsRefused() async throws {
        let directory = TemporaryDirectory()
        try await makeStore(directory.store("a"))
        try await makeStore(directory.store("b"))
        let foreign = try segmentFiles(directory.store("b"))[0]
        let mine = try segmentFiles(directory.store("a"))[0]
        try write(try contents(foreign), to: mine)
        let error = try #require(openError(directory.store("a")))
        #expect(error.code == .corruption && error.path == mine, "\(error)")
    }

    @Test func anUnknownFormatVersionIsRefusedClearly() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        try await makeStore(store)
        let manifest = store + "/MANIFEST"
        var bytes = try contents(manifest)
        bytes[8] = 9
        try write(resealed(bytes), to: manifest)
        #expect(openError(store)?.code == .unsupportedFormat)
    }

    @Test func segmentFilesWithoutAnyManifestAreNotSilentlyReplaced() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        try await makeStore(store)
        for name in ["MANIFEST", "MANIFEST.prev"] { try FileManager.default.removeItem(atPath: store + "/" + name) }
        #expect(openError(store)?.code == .corruption)
    }
}
