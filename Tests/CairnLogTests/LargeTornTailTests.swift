import CairnTestSupport
import Foundation
import Glibc
import Testing
@testable import CairnLog

/// A torn tail of gigabytes (a segment grown by zeros) is inspected, saved and cut in bounded
/// memory, without a check at every byte.
@Suite struct LargeTornTailTests {
    /// Whether `lseek(SEEK_DATA)` finds the end of a hole here (some file systems say every
    /// offset holds data; the search is then bounded in memory, not in bytes read).
    static func fileSystemReportsHoles(_ directory: String) -> Bool {
        let path = directory + "/hole-probe"
        guard FileManager.default.createFile(atPath: path, contents: nil), Glibc.truncate(path, 1 << 20) == 0,
            let file = try? PosixFileIO().open(path, mode: .readOnly)
        else { return false }
        defer { PosixFileIO().close(file) }
        return PosixFileIO().nextData(in: file, from: 0) == nil
    }

    func makeStore(_ store: String) async throws -> (segment: String, length: Int) {
        let log = try Log.open(at: store)
        for index in 0..<20 { try await log.append(payload(index)) }
        try await log.close()
        let segment = try #require(try segmentFiles(store).last)
        return (segment, try contents(segment).count)
    }

    @Test func aSegmentGrownByThreeGigabytesOfZerosIsInspectedAndRepairedInBoundedMemory() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        let (segment, length) = try await makeStore(store)
        let grown = UInt64(length) + (3 << 30)
        #expect(Glibc.truncate(segment, off_t(grown)) == 0)

        // verify: the search for a valid frame after the damage skips the hole.
        let io = FaultyFileIO()
        let inspection = try LogInspection.inspect(directory: store, io: io)
        #expect(inspection.segments.last?.status == .tornTail(offset: UInt64(length), reason: "zero-filled bytes where a frame header should be"))
        if Self.fileSystemReportsHoles(directory.path) {
            #expect(io.bytesRead < 16 << 20, "read \(io.bytesRead) bytes of a 3 GiB tail")
        }
        #expect(io.largestRead <= 1 << 20)

        // repair: the tail is copied to the side file a megabyte at a time (its hole kept).
        let repairIO = FaultyFileIO()
        let result = try Log.repairTornTail(directory: store, io: repairIO)
        #expect(result.offset == UInt64(length) && result.bytes == grown - UInt64(length))
        #expect(repairIO.largestRead <= 1 << 20, "largest read \(repairIO.largestRead)")
        let side = try #require(result.savedTo)
        var info = stat()
        #expect(stat(side, &info) == 0 && UInt64(info.st_size) == grown - UInt64(length))
        #expect(try contents(segment).count == length)
        #expect(try readAll(store).count == 20)
    }

    @Test func aLongTailOfWrittenZerosAndGarbageIsSearchedAWindowAtATime() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        let (segment, length) = try await makeStore(store)
        // 24 MiB of written zeros with a stray byte every 4099: searched a window at a time.
        var tail = [UInt8](repeating: 0, count: 24 << 20)
        for index in stride(from: 0, to: tail.count, by: 4099) { tail[index] = UInt8(truncatingIfNeeded: index) }
        let handle = try #require(FileHandle(forWritingAtPath: segment))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(tail))
        try handle.close()
        let io = FaultyFileIO()
        let inspection = try LogInspection.inspect(directory: store, io: io)
        #expect(inspection.segments.last?.status == .tornTail(offset: UInt64(length), reason: "zero-filled bytes where a frame header should be"))
        #expect(io.largestRead <= 1 << 20, "largest read \(io.largestRead)")
        let result = try Log.repairTornTail(directory: store)
        #expect(try contents(try #require(result.savedTo)) == tail)
        #expect(try contents(segment).count == length)
    }
}
