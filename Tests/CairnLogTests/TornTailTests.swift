import CairnTestSupport
import Foundation
import Testing
@testable import CairnLog

@Suite struct TornTailTests {
    /// A store of `count` frames in one active segment; returns the offset where the last starts.
    func makeStore(_ store: String, count: Int) async throws -> (lastFrameStart: Int, length: Int) {
        let log = try Log.open(at: store)
        for index in 0..<(count - 1) { try await log.append(payload(index)) }
        try await log.close()
        let segment = try #require(try segmentFiles(store).last)
        let start = try contents(segment).count
        let again = try Log.open(at: store)
        try await again.append(payload(count - 1))
        try await again.close()
        return (start, try contents(segment).count)
    }

    @Test func cuttingTheLastFrameAtEveryOffsetRecoversExactlyTheEarlierFrames() async throws {
        let directory = TemporaryDirectory()
        let original = directory.store("original")
        let (start, end) = try await makeStore(original, count: 12)
        let earlier = (0..<11).map { payload($0) }
        for cut in start..<end {
            let store = directory.store("cut")
            try copyDirectory(original, to: store)
            let segment = try #require(try segmentFiles(store).last)
            truncateFile(segment, to: cut)
            let log = try Log.open(at: store)
            #expect(log.lastLSN == LSN(11), "cut at \(cut)")
            if cut > start {
                #expect(log.recoveryReport.tornTail?.offset == UInt64(start), "cut at \(cut)")
                #expect(log.recoveryReport.tornTail?.wasCut == true)
            } else {
                #expect(log.recoveryReport.tornTail == nil)
            }
            #expect(try contents(segment).count == start, "the torn bytes are cut and synced")
            #expect(try await log.append(payload(99)) == LSN(12), "appends continue after the cut")
            try await log.close()
            #expect(try readAll(store).map(\.payload) == earlier + [payload(99)])
        }
    }

    @Test func garbageOrZerosAfterTheLastFrameAreATornTail() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        let (_, end) = try await makeStore(store, count: 5)
        let segment = try #require(try segmentFiles(store).last)
        for tail in [[UInt8](repeating: 0, count: 4096), (0..<700).map { UInt8(truncatingIfNeeded: $0 &* 31) }] {
            truncateFile(segment, to: end)
            try write(try contents(segment) + tail, to: segment)
            let log = try Log.open(at: store)
            #expect(log.lastLSN == LSN(5))
            #expect(log.recoveryReport.tornTail?.offset == UInt64(end))
            try await log.close()
        }
    }

    @Test func absoluteConsistencyRefusesATornTail() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        let (start, _) = try await makeStore(store, count: 5)
        let segment = try #require(try segmentFiles(store).last)
        truncateFile(segment, to: start + 10)
        var options = LogOptions()
        options.recovery = .absoluteConsistency
        #expect { try Log.open(at: store, options: options) } throws: { error in
            let error = try #require(error as? LogError)
            return error.code == .tornTail && error.offset == UInt64(start) && error.path == segment
        }
        #expect(try contents(segment).count == start + 10, "nothing was cut")
    }

    @Test func aDamagedFrameFollowedByValidFramesIsCorruptionNotATornTail() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        let log = try Log.open(at: store)
        for index in 0..<10 { try await log.append(payload(index)) }
        try await log.close()
        let segment = try #require(try segmentFiles(store).last)
        var bytes = try contents(segment)
        let target = SegmentHeader.size + FrameHeader.size + 5  // inside the first frame's payload
        bytes[target] ^= 0x01
        try write(bytes, to: segment)
        #expect { try Log.open(at: store) } throws: { error in
            let error = try #require(error as? LogError)
            return error.code == .corruption && error.offset == UInt64(SegmentHeader.size) && error.path == segment
        }
        #expect(try contents(segment).count == bytes.count, "nothing acknowledged was dropped")

        var options = LogOptions()
        options.recovery = .salvage
        let salvaged = try Log.open(at: store, options: options)
        #expect(salvaged.recoveryReport.lostRanges == [LSN(1)...LSN(1)])
        var lsns: [UInt64] = []
        try salvaged.records().forEach { lsns.append($0.lsn.rawValue) }
        #expect(lsns == Array(2...10))
        await #expect(throws: LogError.self) { try await salvaged.append(payload(0)) }
    }

    @Test func aDamagedLastFrameIsSavedToASideFileBeforeItIsCutAndTheCutIsReported() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        let (start, end) = try await makeStore(store, count: 5)
        let segment = try #require(try segmentFiles(store).last)
        var bytes = try contents(segment)
        bytes[start + FrameHeader.size + 3] ^= 0x04
        try write(bytes, to: segment)
        let damagedTail = Array(bytes[start...])

        var readOnly = LogOptions()
        readOnly.readOnly = true
        let reader = try Log.open(at: store, options: readOnly)
        let ignored = try #require(reader.recoveryReport.tornTail)
        #expect(!ignored.wasCut && !ignored.writerActive && ignored.offset == UInt64(start))
        #expect(ignored.description.contains("ignored") && reader.lastLSN == LSN(4))
        #expect(!(try LogInspection.inspect(directory: store).isHealthy))

        let log = try Log.open(at: store)
        let cut = try #require(log.recoveryReport.tornTail)
        #expect(cut.wasCut && cut.bytes == UInt64(end - start))
        #expect(cut.savedTo == segment + ".torn-\(start)")
        #expect(try contents(try #require(cut.savedTo)) == damagedTail, "the cut bytes are kept beside the store")
        #expect(log.recoveryReport.description.contains("saved them to"))
        try await log.close()
        #expect(try contents(segment).count == start)
        let after = try LogInspection.inspect(directory: store)
        #expect(after.isHealthy && after.unlistedFiles.contains { $0.isSideFile })

        // The same damage again at the same offset: a second side file, the first untouched.
        try write(bytes, to: segment)
        let again = try Log.open(at: store)
        #expect(again.recoveryReport.tornTail?.savedTo == segment + ".torn-\(start).2")
        try await again.close()
        #expect(try contents(segment + ".torn-\(start)") == damagedTail)
    }

    @Test func anIncompleteLastFrameWhileAWriterHoldsTheStoreIsAWriteInProgress() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        let writer = try Log.open(at: store)
        for index in 0..<5 { try await writer.append(payload(index)) }
        let segment = try #require(try segmentFiles(store).last)
        let length = try contents(segment).count
        // Half a frame header, as a reader may find it while the writer's pwrite runs.
        try write(try contents(segment) + [UInt8](repeating: 0x3C, count: 16), to: segment)

        var readOnly = LogOptions()
        readOnly.readOnly = true
        let reader = try Log.open(at: store, options: readOnly)
        #expect(reader.recoveryReport.tornTail?.writerActive == true)
        #expect(reader.recoveryReport.tornTail?.description.contains("write in progress") == true)
        let inspection = try LogInspection.inspect(directory: store)
        #expect(inspection.segments.last?.status == .writeInProgress(offset: UInt64(length), reason: "incomplete frame header: 16 of 32 bytes before the end"))
        #expect(inspection.isHealthy)
        try await writer.close()
        // Without the writer the same bytes are a torn tail.
        #expect(try Log.open(at: store, options: readOnly).recoveryReport.tornTail?.writerActive == false)
    }
}
