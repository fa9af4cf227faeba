import CairnLog
import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// A reader that read the manifest before another process opened the store for writing with a
/// larger maximum frame size (and wrote a frame above the old limit) reads again with the new
/// limit: it never calls that frame damage.
@Suite struct RaisedFrameLimitTests {
    /// A log of a few small frames, written with a maximum frame size of 4 KiB.
    static func smallLimitLog(_ path: String) async throws {
        var options = LogOptions()
        options.maximumFrameSize = 4096
        let log = try Log.open(at: path, options: options)
        for index in 0..<5 { _ = try await log.append(Array("frame \(index)".utf8)) }
        try await log.close()
    }

    /// A hook that opens the store for writing with a 64 KiB limit and appends a 10 KiB frame
    /// (incompressible), as another process would between a reader's manifest and its frames.
    static func raiseTheLimit(_ path: String) -> @Sendable () -> Void {
        {
            var options = LogOptions()
            options.maximumFrameSize = 64 << 10
            options.compression = .none
            options.durability = .none
            guard let log = try? Log.open(at: path, options: options) else { return }
            _ = try? log.appendNow((0..<(10 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 7919 >> 3) })
            try? log.closeNow()
        }
    }

    @Test func aReadOnlyOpenReadsAgainWhenTheLimitWasRaisedMeanwhile() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        try await Self.smallLimitLog(path)
        let io = ReadDuringCompactionTests.HookBeforeSegmentOpen().arm(Self.raiseTheLimit(path))
        var options = LogOptions()
        options.readOnly = true
        options.fileIO = io
        let opened = try await onOwnThread { [options] () -> Result<Int, LogError> in
            do {
                let log = try Log.open(at: path, options: options)
                defer { try? log.closeNow() }
                return .success(try Self.recordCount(log))
            } catch let error as LogError {
                return .failure(error)
            }
        }
        switch opened {
        case .success: break
        case .failure(let error): #expect(error.code == .busy, "read again (busy), never damage: \(error)")
        }
        // Opened again, it reads every frame with the limit now recorded.
        var plain = LogOptions()
        plain.readOnly = true
        let log = try Log.open(at: path, options: plain)
        #expect(try Self.recordCount(log) == 6)
        try log.closeNow()
    }

    @Test func anInspectionReadsAgainWhenTheLimitWasRaisedMeanwhile() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        try await Self.smallLimitLog(path)
        let io = ReadDuringCompactionTests.HookBeforeSegmentOpen().arm(Self.raiseTheLimit(path))
        let inspection = try await onOwnThread { try LogInspection.inspect(directory: path, io: io) }
        #expect(inspection.isHealthy, "\(inspection.segments.map(\.status))")
        #expect(inspection.frames == 6)
    }

    @Test func aFrameAboveTheLimitThatNoOneRaisedIsStillDamage() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        try await Self.smallLimitLog(path)
        Self.raiseTheLimit(path)()
        // The manifest's limit forged back down: the big frame's header checksum holds.
        var manifest = try #require(try Self.readManifest(path))
        manifest.maximumFrameSize = 4096
        manifest.generation += 1
        try ManifestFile(layout: StoreLayout(directory: path), io: PosixFileIO()).write(manifest)
        let inspection = try LogInspection.inspect(directory: path)
        #expect(!inspection.isHealthy)
    }

    /// The number of records a reader of `log` reads.
    static func recordCount(_ log: Log) throws -> Int {
        var count = 0
        try log.records().forEach { _ in count += 1 }
        return count
    }

    static func readManifest(_ path: String) throws -> Manifest? {
        guard
            case .found(let manifest, _) = try ManifestFile(layout: StoreLayout(directory: path), io: PosixFileIO()).read(segmentsWithFrames: [], repair: false)
        else { return nil }
        return manifest
    }
}
