import CairnTestSupport
import Foundation
import Testing
@testable import CairnLog

/// Stores written by each segment format version and kept in `Fixtures/Stores`: every later
/// build must read them exactly.
/// - `log-v1`: 1,200 records of one frame each, in 16 KiB segments, with a trained dictionary.
/// - `log-v2`: 300 records in 16 KiB segments, every 25th of 20,000 bytes and so five frames
///   of at most 4 KiB (``version2Sizes``): version 1 segments until the first such record, a
///   version 2 segment for each, version 1 again at the rolls between.
///
/// Never regenerate the fixture of a version that has shipped; a new version gets a generator
/// of its own (`CAIRN_WRITE_FIXTURES=1 swift test --filter writeVersion2Fixture`).
@Suite struct GoldenStoreTests {
    static let version1 = FixtureStores.logVersion1
    static let version2 = FixtureStores.logVersion2
    static let frames = 1200
    static let version2Records = 300

    /// The size of record `index` of `log-v2`.
    static func version2Size(_ index: Int) -> Int { index % 25 == 7 ? 20_000 : 20 + (index &* 37) % 300 }

    /// The options `log-v2` was written with.
    static var version2Options: LogOptions {
        var options = smallSegments(16384)
        options.maximumFrameSize = 4096
        return options
    }

    @Test(.enabled(if: ProcessInfo.processInfo.environment["CAIRN_WRITE_FIXTURES"] == "1"))
    func writeVersion2Fixture() async throws {
        try? FileManager.default.removeItem(atPath: Self.version2)
        let log = try Log.open(at: Self.version2, options: Self.version2Options)
        for index in 0..<Self.version2Records { try await log.append(payload(index, size: Self.version2Size(index))) }
        try await log.close()
        for name in ["LOCK", "READERS", "ACKNOWLEDGED"] { try? FileManager.default.removeItem(atPath: Self.version2 + "/" + name) }
    }

    @Test func version2StoreReadsBackExactly() async throws {
        try #require(FileManager.default.fileExists(atPath: Self.version2 + "/MANIFEST"), "fixture missing: \(Self.version2)")
        let directory = TemporaryDirectory()
        let copy = directory.store()
        try copyDirectory(Self.version2, to: copy)
        let inspection = try LogInspection.inspect(directory: copy)
        #expect(inspection.isHealthy)
        #expect(inspection.dictionaries >= 1)
        #expect(inspection.frames == UInt64(Self.version2Records + 12 * 4), "twelve records of five frames")
        var versions: [UInt8] = []
        for segment in try segmentFiles(copy) { versions.append(try contents(segment)[8]) }
        #expect(versions.filter { $0 == 2 }.count == 12 && versions.contains(1), "\(versions)")
        let expected = (0..<Self.version2Records).map { payload($0, size: Self.version2Size($0)) }
        #expect(try readAll(copy).map(\.payload) == expected)
        // And it takes appends, large and small.
        let log = try Log.open(at: copy, options: Self.version2Options)
        #expect(try await log.append(payload(1, size: 9000)) == LSN(UInt64(Self.version2Records + 1)))
        #expect(try await log.append(payload(2)) == LSN(UInt64(Self.version2Records + 2)))
        try await log.close()
        #expect(try readAll(copy).map(\.payload) == expected + [payload(1, size: 9000), payload(2)])
    }

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
        // And it accepts appends: a record of several frames rolls its version 1 segment.
        var options = smallSegments(16384)
        options.maximumFrameSize = 1000
        let log = try Log.open(at: copy, options: options)
        #expect(try await log.append(payload(Self.frames)) == LSN(UInt64(Self.frames + 1)))
        #expect(try await log.append(payload(Self.frames + 1, size: 2500)) == LSN(UInt64(Self.frames + 2)))
        try await log.close()
        #expect(try readAll(copy).suffix(2).map(\.payload) == [payload(Self.frames), payload(Self.frames + 1, size: 2500)])
        #expect(try contents(try #require(try segmentFiles(copy).last))[8] == 2)
    }
}
