import CairnTestSupport
import Foundation
import Glibc
import Testing
@testable import CairnLog

/// Stores forged byte by byte with valid checksums (what an attacker, not a crash, makes):
/// LSNs at the top of the range, and store files that are not regular files.
@Suite(.timeLimit(.minutes(10))) struct ForgedStoreTests {
    /// Writes a store of one active segment starting at `firstLSN` (or a sealed one of
    /// `sealedFrameCount` frames before it), holding raw frames with the given LSNs, every
    /// checksum valid.
    static func forge(_ store: String, firstLSN: UInt64, frameLSNs: [UInt64], sealedFrameCount: UInt64? = nil) throws {
        try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
        let storeID = UUID()
        var segments: [Manifest.Segment] = []
        if let sealedFrameCount {
            let header = SegmentHeader(epoch: 7, number: 1, firstLSN: LSN(1), storeID: storeID).encoded()
            try write(header, to: store + "/" + StoreLayout.name(.segment, 1))
            segments.append(
                Manifest.Segment(
                    number: 1, epoch: 7, firstLSN: LSN(1), isSealed: true,
                    length: UInt64(header.count), frameCount: sealedFrameCount))
        }
        let number = UInt64(segments.count + 1)
        var bytes = SegmentHeader(epoch: 9, number: number, firstLSN: LSN(firstLSN), storeID: storeID).encoded()
        for lsn in frameLSNs {
            let body = Array("frame \(lsn)".utf8)
            var header = [UInt8](repeating: 0, count: FrameHeader.size)
            let frame = FrameHeader(
                lsn: LSN(lsn), epoch: 9, storedLength: UInt32(body.count), rawLength: UInt32(body.count),
                dictionaryID: 0, codec: .raw)
            body.withUnsafeBytes { payload in
                header.withUnsafeMutableBytes { frame.write(to: $0, payloadChecksum: CRC32C.checksum(payload)) }
            }
            bytes += header + body
        }
        try write(bytes, to: store + "/" + StoreLayout.name(.segment, number))
        segments.append(Manifest.Segment(number: number, epoch: 9, firstLSN: LSN(firstLSN), isSealed: false, length: 0, frameCount: 0))
        let manifest = Manifest(
            generation: 1, storeID: storeID, segments: segments, dictionaries: [], base: nil,
            maximumFrameSize: 1 << 20)
        try write(manifest.encoded(), to: store + "/MANIFEST")
    }

    /// Every way of reading a store, each expected to refuse it as corruption without trapping.
    static func expectRefusedEverywhere(_ store: String, _ comment: Comment) throws {
        for mode in [RecoveryMode.pointInTime, .absoluteConsistency, .salvage] {
            for readOnly in [false, true] {
                var options = LogOptions()
                options.recovery = mode
                options.readOnly = readOnly
                do {
                    let log = try Log.open(at: store, options: options)
                    // Salvage may open; it must then report the damage and read without trapping.
                    #expect(mode == .salvage, "\(mode) opened a forged store: \(comment)")
                    #expect(!log.recoveryReport.damage.isEmpty || log.recoveryReport.tornTail != nil, "\(comment)")
                    try log.records().forEach { _ in }
                } catch let error as LogError {
                    #expect(error.code == .corruption, "\(mode): \(error) — \(comment)")
                }
            }
        }
        let inspection = try? LogInspection.inspect(directory: store)
        #expect(inspection?.isHealthy != true, "verify does not call it healthy: \(comment)")
        _ = inspection.map { ($0.frames, $0.lsnRange, $0.bytesOnDisk) }
    }

    @Test func lsnsAtTheTopOfTheRangeAreRefusedAsCorruptionWithoutTrapping() throws {
        let directory = TemporaryDirectory()
        let top = UInt64.max
        // Frames up to 2^64 - 1 in a segment the manifest starts there.
        try Self.forge(directory.store("a"), firstLSN: top - 2, frameLSNs: [top - 2, top - 1, top])
        try Self.expectRefusedEverywhere(directory.store("a"), "frames up to 2^64 - 1")
        // A valid first LSN, then frames that run past the largest LSN.
        let largest = LSN.maximum.rawValue
        try Self.forge(directory.store("b"), firstLSN: largest - 1, frameLSNs: [largest - 1, largest, largest + 1])
        try Self.expectRefusedEverywhere(directory.store("b"), "frames past LSN.maximum")
        // A sealed segment whose recorded frame count makes the next LSN wrap.
        try Self.forge(directory.store("c"), firstLSN: 5, frameLSNs: [5], sealedFrameCount: top)
        try Self.expectRefusedEverywhere(directory.store("c"), "a frame count that wraps")
        // Frames up to the largest LSN itself are accepted, and the log is then full.
        try Self.forge(directory.store("d"), firstLSN: largest - 1, frameLSNs: [largest - 1, largest])
        var readOnly = LogOptions()
        readOnly.readOnly = true
        let full = try Log.open(at: directory.store("d"), options: readOnly)
        #expect(full.lastLSN == LSN.maximum)
        let writable = try Log.open(at: directory.store("d"))
        #expect(throws: LogError.self) { try writable.submit(Array("one more".utf8)) }
        try writable.closeNow()
    }

    @Test func aFifoInPlaceOfAnyStoreFileIsRefusedAtOnce() async throws {
        let directory = TemporaryDirectory()
        let original = directory.store("original")
        var options = smallSegments(4096)
        options.dictionaryTraining.threshold = 16
        let log = try Log.open(at: original, options: options)
        for index in 0..<60 { try await log.append(payload(index, size: 150)) }
        try await log.close()
        let names = try FileManager.default.contentsOfDirectory(atPath: original).filter { $0 != "MANIFEST.prev" }.sorted()
        #expect(names.contains { $0.hasSuffix(".dict") } && names.filter { $0.hasSuffix(".seg") }.count > 1)
        let segments = names.filter { $0.hasSuffix(".seg") }
        for name in names {
            // A FIFO in place of every file; a symbolic link and a directory in place of a few.
            let others = ["MANIFEST", segments.first, segments.last].contains(name) ? ["symlink", "directory"] : []
            for replacement in ["fifo"] + others {
                let store = directory.store("damaged")
                try copyDirectory(original, to: store)
                let path = store + "/" + name
                try FileManager.default.removeItem(atPath: path)
                switch replacement {
                case "fifo": #expect(mkfifo(path, 0o600) == 0)
                case "symlink": try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: original + "/" + name)
                default: try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
                }
                var errors: [LogError] = []
                for readOnly in [true, false] {
                    var options = LogOptions()
                    options.readOnly = readOnly
                    do {
                        _ = try Log.open(at: store, options: options)
                    } catch let error as LogError {
                        errors.append(error)
                    }
                }
                // LOCK and ACKNOWLEDGED are only opened by writers (and verify, which reads
                // what a store holds, looks at neither); every other file by every reader too.
                let writersOnly = name == "LOCK" || name == AcknowledgedFile.name
                let readers = writersOnly ? 1 : 2
                if !writersOnly, let inspection = try? LogInspection.inspect(directory: store) {
                    #expect(!inspection.isHealthy, "verify: \(name) as a \(replacement)")
                }
                #expect(errors.count == readers, "\(name) as a \(replacement) is refused by every open")
                for error in errors {
                    #expect(error.path == path, "\(error) names \(name)")
                    #expect(error.code == .corruption, "\(error)")
                }
            }
        }
    }
}
