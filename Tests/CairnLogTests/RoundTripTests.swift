import CairnTestSupport
import Foundation
import Testing
@testable import CairnLog

@Suite struct RoundTripTests {
    @Test func roundTripAcrossManySegmentRollsAndReopenings() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        var expected: [[UInt8]] = []
        for session in 0..<6 {
            let log = try Log.open(at: store, options: smallSegments())
            #expect(log.lastLSN == LSN(UInt64(expected.count)))
            for index in 0..<150 {
                let bytes = payload(session * 1000 + index)
                let lsn = try await log.append(bytes)
                expected.append(bytes)
                #expect(lsn == LSN(UInt64(expected.count)))
            }
            try await log.close()
        }
        #expect(try segmentFiles(store).count > 10)
        let records = try readAll(store)
        #expect(records.map(\.payload) == expected)
        #expect(records.map(\.lsn.rawValue) == Array(1...UInt64(expected.count)))
        let inspection = try LogInspection.inspect(directory: store)
        #expect(inspection.isHealthy)
        #expect(inspection.frames == UInt64(expected.count))
    }

    @Test func readerStartsAtAnyLSNAndSeesOnlyAcknowledgedFrames() async throws {
        let directory = TemporaryDirectory()
        let log = try Log.open(at: directory.store(), options: smallSegments())
        for index in 0..<400 { try await log.append(payload(index)) }
        for start in [1, 2, 57, 199, 200, 399, 400] {
            var lsns: [UInt64] = []
            try log.records(from: LSN(UInt64(start))).forEach { record in
                #expect(record.payload == payload(Int(record.lsn.rawValue) - 1))
                lsns.append(record.lsn.rawValue)
            }
            #expect(lsns == Array(UInt64(start)...400))
        }
        let reader = log.records(from: LSN(401))
        #expect(try reader.next() == nil)
        let snapshot = log.records()
        try await log.append(payload(400))
        var count = 0
        try snapshot.forEach { _ in count += 1 }
        #expect(count == 400, "a reader sees the frames acknowledged when it was made")
        try await log.close()
    }

    @Test(arguments: [Durability.always, .none, .interval(.milliseconds(5))])
    func everyDurabilityModeKeepsEveryAppend(_ durability: Durability) async throws {
        let directory = TemporaryDirectory()
        let log = try Log.open(at: directory.store(), options: smallSegments(8192, durability: durability))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask { for index in 0..<100 { try await log.append(payload(task * 100 + index)) } }
            }
            try await group.waitForAll()
        }
        #expect(log.lastLSN == LSN(800))
        if case .interval = durability {
            try await Task.sleep(for: .milliseconds(50))
            #expect(log.durableLSN == LSN(800), "the background sync catches up")
        }
        try await log.close()
        let records = try readAll(directory.store())
        #expect(Set(records.map(\.payload)) == Set((0..<800).map { payload($0) }))
    }

    @Test func smallRecordsCompressWithATrainedDictionary() async throws {
        let directory = TemporaryDirectory()
        let log = try Log.open(at: directory.store())
        let records = (0..<1500).map { index in
            Array(
                "{\"entity\":\"Person\",\"id\":\(index),\"name\":\"Person \(index % 97)\",\"email\":\"person\(index % 97)@example.org\",\"city\":\"\(["Lyon", "Porto", "Ghent"][index % 3])\",\"active\":true}"
                    .utf8)
        }
        for record in records { try await log.append(record) }
        try await log.close()
        let inspection = try LogInspection.inspect(directory: directory.store())
        #expect(inspection.dictionaries == 1)
        #expect(inspection.compressionRatio > 1.4, "ratio \(inspection.compressionRatio)")
        #expect(try readAll(directory.store()).map(\.payload) == records)
    }

    @Test func incompressiblePayloadsAreStoredRaw() async throws {
        let directory = TemporaryDirectory()
        let log = try Log.open(at: directory.store())
        var generator = TestSeed.generator()
        let random = (0..<50).map { _ in (0..<500).map { _ in UInt8.random(in: 0...255, using: &generator) } }
        for bytes in random { try await log.append(bytes) }
        try await log.close()
        let inspection = try LogInspection.inspect(directory: directory.store())
        #expect(inspection.storedBytes == inspection.rawBytes)
        #expect(try readAll(directory.store()).map(\.payload) == random)
    }

    @Test func emptyAndLargePayloadsRoundTrip() async throws {
        let directory = TemporaryDirectory()
        let log = try Log.open(at: directory.store(), options: smallSegments())
        let large = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 / 7) }
        try await log.append([])
        try await log.append(large)
        try await log.append([42])
        try await log.close()
        #expect(try readAll(directory.store()).map(\.payload) == [[], large, [42]])
    }

    @Test func aPayloadOverTheMaximumFrameSizeIsAppendedAsOneRecord() async throws {
        let directory = TemporaryDirectory()
        var options = LogOptions()
        options.maximumFrameSize = 1000
        let log = try Log.open(at: directory.store(), options: options)
        #expect(try await log.append([UInt8](repeating: 1, count: 1001)) == LSN(1))
        #expect(try await log.append([UInt8](repeating: 2, count: 1000)) == LSN(2))
        try await log.close()
        #expect(try readAll(directory.store()).map(\.payload) == [[UInt8](repeating: 1, count: 1001), [UInt8](repeating: 2, count: 1000)])
    }

    @Test func filesArePrivateAndForeignFilesAreLeftAlone() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        let log = try Log.open(at: store, options: smallSegments())
        for index in 0..<100 { try await log.append(payload(index)) }
        try await log.close()
        let attributes = try FileManager.default.attributesOfItem(atPath: store)
        #expect((attributes[.posixPermissions] as? Int) == 0o700)
        for name in try FileManager.default.contentsOfDirectory(atPath: store) {
            let permissions = try FileManager.default.attributesOfItem(atPath: store + "/" + name)[.posixPermissions] as? Int
            #expect(permissions == 0o600, "\(name)")
        }
        try write([1, 2, 3], to: store + "/notes.txt")
        try write([1, 2, 3], to: store + "/000000000999.seg")
        try write([1, 2, 3], to: store + "/000000000042.dict")
        try write([1, 2, 3], to: store + "/MANIFEST.tmp")
        let reopened = try Log.open(at: store, options: smallSegments())
        #expect(Set(reopened.recoveryReport.removedFiles) == ["000000000999.seg", "000000000042.dict", "MANIFEST.tmp"])
        #expect(FileManager.default.fileExists(atPath: store + "/notes.txt"))
        #expect(reopened.lastLSN == LSN(100))
        try await reopened.close()
    }

    @Test func readOnlyOpenChangesNothingAndRefusesAppends() async throws {
        let directory = TemporaryDirectory()
        let log = try Log.open(at: directory.store())
        try await log.append(payload(1))
        var options = LogOptions()
        options.readOnly = true
        let reader = try Log.open(at: directory.store(), options: options)
        await #expect(throws: LogError.self) { try await reader.append(payload(2)) }
        #expect(reader.lastLSN == LSN(1))
        try await log.close()
        options.createIfMissing = true
        #expect(throws: LogError.self) { try Log.open(at: directory.store("missing"), options: options) }
    }
}

@Suite struct ResetTests {
    @Test func replacingWithAnEmptyStoreIsOneStepAndTheOldFilesGoAtTheNextOpen() throws {
        let folder = TemporaryDirectory()
        let path = folder.store()
        var log = try Log.open(at: path)
        for index in 0..<50 { _ = try log.appendNow(Array("record \(index)".utf8)) }
        try log.replaceWithEmptyStoreAndClose()
        // Closing wrote nothing more: what is on disk now is what a crash right after the
        // manifest's replacement would leave.
        #expect(try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".seg") }.count == 2)
        log = try Log.open(at: path)
        #expect(log.lastLSN == .zero)
        #expect(try log.records().next() == nil)
        _ = try log.appendNow(Array("after".utf8))
        try log.closeNow()
        let reopened = try Log.open(at: path)
        #expect(try reopened.records().next()?.payload == Array("after".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".seg") }.count == 1)
        try reopened.closeNow()
    }
}
