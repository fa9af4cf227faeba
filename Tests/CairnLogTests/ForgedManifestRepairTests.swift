import CairnTestSupport
import Foundation
import Testing
@testable import CairnLog

/// A manifest whose fields were forged smaller than what the segments hold never makes repair or
/// recovery cut acknowledged frames: only a provably torn write is cut.
@Suite struct ForgedManifestRepairTests {
    /// A store of `count` frames in one active segment, its manifest's maximum frame size then
    /// forged down to `forgedLimit`.
    static func storeWithForgedFrameLimit(_ path: String, count: Int = 60, forgedLimit: UInt32 = 16) async throws {
        let log = try Log.open(at: path)
        for index in 0..<count { _ = try await log.append(payload(index)) }
        try await log.close()
        let layout = StoreLayout(directory: path)
        var manifest = try Manifest(decoding: contents(layout.manifest), path: layout.manifest)
        manifest.maximumFrameSize = forgedLimit
        manifest.generation += 1
        try ManifestFile(layout: layout, io: PosixFileIO()).write(manifest)
    }

    @Test func repairRefusesToCutFramesLargerThanAForgedMaximumFrameSize() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        try await Self.storeWithForgedFrameLimit(path)
        let segment = try #require(try segmentFiles(path).last)
        let length = try contents(segment).count

        #expect(throws: LogError.self) { _ = try Log.repairTornTail(directory: path) }
        #expect(try contents(segment).count == length, "nothing was cut")
        #expect(!(try FileManager.default.contentsOfDirectory(atPath: path)).contains { $0.contains(".torn-") })

        // Reported as damage (the manifest is wrong), never as a torn tail a repair would cut.
        let inspection = try LogInspection.inspect(directory: path)
        let status = try #require(inspection.segments.last?.status)
        guard case .damaged(let error) = status else {
            Issue.record("expected damage, got \(status)")
            return
        }
        #expect(error.code == .corruption)
        #expect(error.message.contains("maximum frame size"))

        // A read-only open refuses too, and reports no torn tail.
        var readOnly = LogOptions()
        readOnly.readOnly = true
        #expect(throws: LogError.self) { _ = try Log.open(at: path, options: readOnly) }

        // A writable open (whose own limit is larger) raises the recorded limit first and keeps every frame.
        let reopened = try Log.open(at: path)
        #expect(reopened.recoveryReport.tornTail == nil)
        try await reopened.close()
        #expect(try readAll(path).map(\.payload) == (0..<60).map { payload($0) })
    }

    @Test func aTornLastFrameIsStillCutUnderTheRecordedLimit() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        let log = try Log.open(at: path)
        for index in 0..<10 { _ = try await log.append(payload(index)) }
        try await log.close()
        let segment = try #require(try segmentFiles(path).last)
        let length = try contents(segment).count
        truncateFile(segment, to: length - 5)
        let result = try Log.repairTornTail(directory: path)
        #expect(result.segment != nil)
        #expect(try readAll(path).count == 9)
    }
}
