import CairnTestSupport
import Foundation
import Testing
@testable import CairnLog

/// `cairn verify` checks the frames of any Cairn log, and says what the records are when they
/// are not an object graph's rather than calling them damaged.
@Suite struct VerifyCommandTests {
    static func cairn(_ arguments: String...) async throws -> (status: Int32, output: String) { try await runCairn(arguments) }

    @Test func aLogWrittenByCairnLogAloneHasSoundFramesAndIsNotCalledDamaged() async throws {
        try #require(FileManager.default.fileExists(atPath: FixtureStores.logVersion1 + "/MANIFEST"))
        let directory = TemporaryDirectory()
        let copy = directory.store()
        try copyDirectory(FixtureStores.logVersion1, to: copy)
        let verify = try await Self.cairn("verify", copy)
        #expect(verify.status == 0, "\(verify.output)")
        #expect(!verify.output.contains("DAMAGED") && !verify.output.contains("damaged"), "\(verify.output)")
        #expect(verify.output.contains("not an object graph"), "\(verify.output)")
        #expect(verify.output.contains("1200 frames"), "\(verify.output)")
    }

    @Test func aLogOfRawPayloadsStartingLikeAChangeRecordIsNotAnObjectGraphEither() async throws {
        let directory = TemporaryDirectory()
        let log = try Log.open(at: directory.store())
        _ = try await log.append([2, 1, 0, 0, 0])
        _ = try await log.append(payload(1))
        try await log.close()
        let verify = try await Self.cairn("verify", directory.store())
        #expect(verify.status == 0, "\(verify.output)")
        #expect(verify.output.contains("not an object graph"), "\(verify.output)")
    }

    @Test func aLogWhoseFirstRecordStartsLikeAModelRecordIsNotAnObjectGraphEither() async throws {
        let firsts: [[UInt8]] = [[1, 1] + Array("{not a model".utf8), [1, 101, 0, 0], [1]]
        for first in firsts {
            let directory = TemporaryDirectory()
            let log = try Log.open(at: directory.store())
            _ = try await log.append(first)
            _ = try await log.append(payload(1))
            try await log.close()
            let path = directory.store()
            let verify = try await Self.cairn("verify", path)
            #expect(verify.status == 0, "\(first): \(verify.output)")
            #expect(verify.output.contains("not an object graph"), "\(first): \(verify.output)")
            #expect(!verify.output.contains("DAMAGED"), "\(first): \(verify.output)")
        }
    }

    @Test func aStoreThatTheReaderCannotOpenForWantOfDescriptorsIsNotCalledDamaged() async throws {
        // Under ever lower limits on open files, `verify` runs out of descriptors somewhere
        // (the process itself takes a few): that is the reader's problem, never the store's.
        let directory = TemporaryDirectory()
        let path = directory.store()
        let log = try Log.open(at: path, options: smallSegments())
        for index in 0..<60 { _ = try await log.append(payload(index)) }
        try await log.close()
        let executable = try #require(cairnExecutable(), "the cairn executable is built next to the tests")
        var uncheckable = 0
        for limit in 5...16 {
            let verify = try await onOwnThread { () -> (Int32, String) in
                let process = try ChildProcess(
                    "/bin/sh", ["-c", #"ulimit -n $1 && exec "$0" verify "$2""#, executable, "\(limit)", path],
                    includeStandardError: true)
                let status = process.waitUntilExit()
                return (status, String(decoding: process.outputBytes, as: UTF8.self))
            }
            #expect(!verify.1.contains("DAMAGED") && !verify.1.contains("damaged"), "ulimit -n \(limit): \(verify.1)")
            if verify.1.contains("could not be checked") {
                uncheckable += 1
                #expect(verify.0 == 1, "ulimit -n \(limit): \(verify.1)")
            }
        }
        #expect(uncheckable > 0, "some limit left too few descriptors to read the store")
    }
}
