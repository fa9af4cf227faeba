import CairnTestSupport
import Foundation
import Testing
@testable import CairnLog

@Suite struct CommandLineTests {
    /// Runs `cairn` and returns its exit status and standard output.
    func cairn(_ arguments: String...) throws -> (status: Int32, output: String) {
        let executable = try #require(cairnExecutable(), "the cairn executable is built next to the tests")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test func demoVerifyAndStats() throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        let demo = try cairn("demo", "--dir", store, "--records", "600")
        #expect(demo.status == 0, "\(demo.output)")
        #expect(demo.output.contains("read back all 600 records"))

        let verify = try cairn("verify", store)
        #expect(verify.status == 0 && verify.output.contains("ok: 600 frames"), "\(verify.output)")

        let stats = try cairn("stats", store, "--json")
        #expect(stats.status == 0)
        let json = try JSONSerialization.jsonObject(with: Data(stats.output.utf8)) as? [String: Any]
        #expect(json?["frames"] as? Int == 600)
        #expect(json?["lastLSN"] as? Int == 600)
        #expect((json?["compressionRatio"] as? Double ?? 0) > 1.4)
    }

    @Test func verifyReportsATornTailAndRepairSavesAndCutsIt() throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        #expect(try cairn("demo", "--dir", store, "--records", "50").status == 0)
        let segment = try #require(try segmentFiles(store).last)
        let original = try contents(segment)
        let garbage: [UInt8] = Array(repeating: 0xAB, count: 100)
        try write(original + garbage, to: segment)

        let damaged = try cairn("verify", store)
        #expect(damaged.status == 1)
        #expect(damaged.output.contains("TORN TAIL at offset \(original.count)"), "\(damaged.output)")

        let repaired = try cairn("verify", "--repair", store)
        #expect(repaired.status == 0, "\(repaired.output)")
        let side = segment + ".torn-\(original.count)"
        #expect(try contents(side) == garbage)
        #expect(try contents(segment) == original)
        #expect(try cairn("verify", store).status == 0)
        #expect(try readAll(store).count == 50)
    }

    @Test func verifyNamesFileAndOffsetOfCorruption() throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        #expect(try cairn("demo", "--dir", store, "--records", "50").status == 0)
        let segment = try #require(try segmentFiles(store).last)
        var bytes = try contents(segment)
        bytes[SegmentHeader.size + FrameHeader.size + 3] ^= 0x10
        try write(bytes, to: segment)
        let result = try cairn("verify", store)
        #expect(result.status == 1)
        #expect(result.output.contains(segment) && result.output.contains("offset \(SegmentHeader.size)"), "\(result.output)")
        let repair = try cairn("verify", "--repair", store)
        #expect(repair.status != 0, "corruption is not a torn tail: repair refuses to cut")
        #expect(try contents(segment) == bytes)
    }
}
