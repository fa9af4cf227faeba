import CairnTestSupport
import Foundation
import Testing
@testable import CairnLog

/// A store written by format version 1 and kept in `Fixtures/Stores/log-v1`: every later build
/// must read it exactly. Regenerate it (only when the format version changes, next to the old
/// one) with `CAIRN_WRITE_FIXTURES=1 swift test --filter writeVersion1Fixture`.
@Suite struct GoldenStoreTests {
    static let version1 = FixtureStores.logVersion1
    static let frames = 1200

    @Test(.enabled(if: ProcessInfo.processInfo.environment["CAIRN_WRITE_FIXTURES"] == "1"))
    func writeVersion1Fixture() async throws {
        try? FileManager.default.removeItem(atPath: Self.version1)
        try FileManager.default.createDirectory(atPath: FixtureStores.folder, withIntermediateDirectories: true)
        let log = try Log.open(at: Self.version1, options: smallSegments(16384))
        for index in 0..<Self.frames { try await log.append(payload(index)) }
        try await log.close()
        try? FileManager.default.removeItem(atPath: Self.version1 + "/LOCK")
    }

    @Test func version1StoreReadsBackExactly() async throws {
        try #require(FileManager.default.fileExists(atPath: Self.version1 + "/MANIFEST"), "fixture missing: \(Self.version1)")
        let directory = TemporaryDirectory()
        let copy = directory.store()
        try copyDirectory(Self.version1, to: copy)
        let inspection = try LogInspection.inspect(directory: copy)
        #expect(inspection.isHealthy)
        #expect(inspection.segments.count > 3)
        #expect(inspection.dictionaries >= 1)
        #expect(try readAll(copy).map(\.payload) == (0..<Self.frames).map { payload($0) })
        // And it accepts appends.
        let log = try Log.open(at: copy, options: smallSegments(16384))
        #expect(try await log.append(payload(Self.frames)) == LSN(UInt64(Self.frames + 1)))
        try await log.close()
    }
}
