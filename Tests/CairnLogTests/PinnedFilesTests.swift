import CairnSupport
import CairnTestSupport
import Foundation
import Glibc
import Testing
@testable import CairnLog

/// A reader opens the files of the manifest it read together (``PinnedFiles``), at most a
/// number derived from the process's descriptor limit; a file that is gone is "missing", and
/// any other failure to open one is an I/O error of the reader, never damage of the store.
@Suite struct PinnedFilesTests {
    /// A file system whose `open` of a path ending in `suffix` fails with `errno`, the first
    /// `times` times (nil: every time).
    static func failingOpen(_ suffix: String, errno: Int32, times: Int?) -> OpenHookFileIO {
        let failure = Protected<(suffix: String, errno: Int32, times: Int?)?>((suffix, errno, times))
        return OpenHookFileIO { path, _ in
            let number = failure.withLock { armed -> Int32? in
                guard let current = armed, path.hasSuffix(current.suffix) else { return nil }
                if let times = current.times { armed = times > 1 ? (current.suffix, current.errno, times - 1) : nil }
                return current.errno
            }
            if let number { throw LogError.system("open (injected)", path: path, errno: number) }
        }
    }

    /// A store of `frames` frames in many small segments.
    static func store(_ path: String, frames: Int) async throws {
        let log = try Log.open(at: path, options: smallSegments(4096, durability: .none))
        for index in 0..<frames { _ = try await log.append(payload(index)) }
        try await log.close()
    }

    @Test func moreSegmentsThanThePinLimitAreAllRead() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        try await Self.store(path, frames: 300)
        let segments = try segmentFiles(path).count
        try #require(segments > 8, "\(segments) segments")
        var options = LogOptions()
        options.pinnedFilesLimit = 3
        #expect(try readAll(path, options: options).count == 300)
        let inspection = try LogInspection.inspect(directory: path, io: PosixFileIO(), pinnedFilesLimit: 3)
        #expect(inspection.isHealthy && inspection.frames == 300, "\(inspection.segments.map(\.status))")
    }

    @Test func thePinLimitFollowsTheDescriptorLimit() {
        var limit = rlimit()
        #expect(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0)
        let soft = Int(clamping: limit.rlim_cur)
        #expect(LogTuning.pinnedFilesLimit <= 256)
        #expect(LogTuning.pinnedFilesLimit <= max(1, soft / 4))
        #expect(LogTuning.pinnedFilesLimit >= 1)
    }

    @Test func aFileThatCannotBeOpenedForAnotherReasonThanMissingIsAnIOError() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        try await Self.store(path, frames: 100)
        let second = StoreLayout.name(.segment, 2)
        for number in [EMFILE, EACCES] {
            // Twice (the look at which segments hold frames, the open that holds the files): a
            // reader that counted it missing would open it again later and go on.
            var options = LogOptions()
            options.readOnly = true
            options.fileIO = Self.failingOpen(second, errno: number, times: 2)
            #expect("errno \(number) opening a pinned file") {
                _ = try Log.open(at: path, options: options)
            } throws: { error in
                (error as? LogError)?.code == .io && (error as? LogError)?.errno == number
            }
            // Every time: the inspection fails as the reader's I/O error, it does not call the
            // store damaged.
            #expect("errno \(number) in an inspection") {
                _ = try LogInspection.inspect(directory: path, io: Self.failingOpen(second, errno: number, times: nil))
            } throws: { error in
                (error as? LogError)?.code == .io && (error as? LogError)?.errno == number
            }
        }
    }

    @Test func aVerifyUnderALowDescriptorLimitReadsEveryFrame() async throws {
        let executable = try #require(cairnExecutable(), "the cairn executable is built next to the tests")
        let directory = TemporaryDirectory()
        let path = directory.store()
        try await Self.store(path, frames: 3000)
        let segments = try segmentFiles(path).count
        try #require(segments > 100, "\(segments) segments")
        let result = try await onOwnThread { () -> (Int32, String) in
            let process = try ChildProcess(
                "/bin/sh", ["-c", #"ulimit -n 64 && exec "$0" verify "$1""#, executable, path], includeStandardError: true)
            let status = process.waitUntilExit()
            return (status, String(decoding: process.outputBytes, as: UTF8.self))
        }
        #expect(result.0 == 0 && result.1.contains("3000 frames"), "\(result.1.suffix(2000))")
        #expect(!result.1.contains("DAMAGED"), "\(result.1.suffix(2000))")
    }
}
