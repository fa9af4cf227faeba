import CairnTestSupport
import Foundation
import Glibc
import Testing
@testable import CairnLog

@Suite(.serialized) struct ProcessTests {
    /// Checks what the crash helper wrote: `id:<id>;` then filler to a length set by the id.
    static func isWholeCrashPayload(_ bytes: [UInt8], id: UInt64) -> Bool {
        let prefix = Array("id:\(id);".utf8)
        return bytes.count == 40 + Int((id &* 7919) % 600) && bytes.starts(with: prefix)
    }

    static func crashPayloadID(_ bytes: [UInt8]) -> UInt64? {
        guard bytes.starts(with: Array("id:".utf8)), let end = bytes.firstIndex(of: UInt8(ascii: ";")) else { return nil }
        return UInt64(String(decoding: bytes[3..<end], as: UTF8.self))
    }

    @Test func crashLoopKeepsEveryAcknowledgedAppendAndNothingPartial() async throws {
        let cycles = ProcessInfo.processInfo.environment["CAIRN_CRASH_CYCLES"].flatMap(Int.init) ?? 30
        let directory = TemporaryDirectory()
        let store = directory.store()
        var acknowledged: [LSN: UInt64] = [:]
        var generator = TestSeed.generator()
        for cycle in 0..<cycles {
            let helper = try HelperProcess([store, "--appenders", "4", "--segment-size", "16384"])
            try await Task.sleep(for: .milliseconds(Int.random(in: 5...250, using: &generator)))
            helper.kill()
            for line in helper.lines where line.hasPrefix("ack ") {
                let parts = line.split(separator: " ")
                guard parts.count == 3, let lsn = UInt64(parts[1]), let id = UInt64(parts[2]) else {
                    Issue.record("malformed helper line: \(line)")
                    continue
                }
                acknowledged[LSN(lsn)] = id
            }

            var records: [LSN: [UInt8]] = [:]
            let log: Log
            do {
                log = try Log.open(at: store, options: smallSegments(16384))
            } catch let error as LogError where error.code == .notFound {
                #expect(acknowledged.isEmpty)
                continue
            }
            try log.records().forEach { records[$0.lsn] = $0.payload }
            #expect(records.count == Int(log.lastLSN.rawValue), "cycle \(cycle): LSNs are contiguous")
            for (lsn, id) in acknowledged {
                let bytes = try #require(records[lsn], "cycle \(cycle): acknowledged LSN \(lsn) is missing")
                #expect(Self.isWholeCrashPayload(bytes, id: id), "cycle \(cycle): LSN \(lsn) holds another payload")
            }
            for (lsn, bytes) in records {
                let id = try #require(Self.crashPayloadID(bytes), "cycle \(cycle): LSN \(lsn) is not a helper payload")
                #expect(Self.isWholeCrashPayload(bytes, id: id), "cycle \(cycle): LSN \(lsn) is partial")
            }
            try await log.close()
        }
        #expect(acknowledged.count > 0, "the helper acknowledged appends before being killed")
        #expect(try LogInspection.inspect(directory: store).isHealthy)
    }

    @Test func aSecondWriterProcessIsRefusedWithTheHoldersPid() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        let helper = try HelperProcess([store, "--max-records", "0"])
        defer { helper.kill() }
        let ready = try #require(try await helper.waitForLine(startingWith: "ready"), "the helper opened the store")
        let pid = String(ready.split(separator: " ")[1])
        #expect { try Log.open(at: store) } throws: { error in
            let error = try #require(error as? LogError)
            return error.code == .locked && error.message.contains(pid)
        }
        var readOnly = LogOptions()
        readOnly.readOnly = true
        #expect(throws: Never.self) { try Log.open(at: store, options: readOnly) }
        helper.kill()
        let log = try Log.open(at: store)
        try await log.close()
    }

    @Test func aSecondWriterInTheSameProcessIsRefusedUntilTheFirstCloses() async throws {
        let directory = TemporaryDirectory()
        let first = try Log.open(at: directory.store())
        #expect { try Log.open(at: directory.store()) } throws: { ($0 as? LogError)?.code == .locked }
        try await first.close()
        let second = try Log.open(at: directory.store())
        try await second.close()
    }
}
