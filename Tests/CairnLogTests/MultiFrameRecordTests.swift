import CairnSupport
import CairnTestSupport
import Foundation
import Testing
@testable import CairnLog

/// Records larger than the maximum frame size: one LSN, several frames, in a version 2 segment
/// (docs/FORMAT.md §4), whole or absent whatever happens to the bytes.
@Suite struct MultiFrameRecordTests {
    /// Options whose frames hold at most `frame` bytes, uncompressed so that sizes are exact.
    static func options(frame: Int = 500, segment: Int = 1 << 20) -> LogOptions {
        var options = LogOptions()
        options.maximumFrameSize = frame
        options.segmentSize = segment
        options.compression = .none
        return options
    }

    /// Every record a log's reader gives.
    static func all(_ log: Log) throws -> [LogRecord] {
        var records: [LogRecord] = []
        try log.records().forEach { records.append($0) }
        return records
    }

    /// The format version in a segment file's header.
    static func version(_ segment: String) throws -> UInt16 {
        let bytes = try contents(segment)
        return UInt16(bytes[8]) | UInt16(bytes[9]) << 8
    }

    /// Every frame header of a segment file, in order.
    static func frames(_ segment: String) throws -> [(offset: Int, header: FrameHeader)] {
        try frameHeaders(ofSegment: segment)
    }

    @Test func aPayloadOverTheFrameSizeIsOneRecordOfSeveralFramesThatReadsBackWhole() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        let sizes = [10, 0, 499, 500, 501, 1000, 1001, 4321, 20, 12_345, 7]
        let payloads = sizes.enumerated().map { payload($0.offset, size: $0.element) }
        let log = try Log.open(at: store, options: Self.options())
        for (index, bytes) in payloads.enumerated() { #expect(try await log.append(bytes) == LSN(UInt64(index + 1))) }
        #expect(try Self.all(log).map(\.payload) == payloads, "read back by the writer")
        try await log.close()

        #expect(try readAll(store).map(\.payload) == payloads, "read back after a reopen")
        #expect(try readAll(store).map(\.lsn) == (1...payloads.count).map { LSN(UInt64($0)) })
        // The first records went in the version 1 segment the store was made with; the first
        // record of several frames rolled to a version 2 segment, which then took every record.
        let segments = try segmentFiles(store)
        #expect(segments.count == 2)
        #expect(try Self.version(segments[0]) == 1 && Self.version(segments[1]) == 2)
        let headers = try Self.frames(segments[1])
        #expect(headers.allSatisfy { $0.header.storedLength <= 500 })
        // 501 bytes: two frames of one LSN, the first saying more follow, the second that it
        // continues the first.
        let split = headers.filter { $0.header.lsn == LSN(5) }.map(\.header.flags)
        #expect(split == [.continues, .continuation])
        let twelveThousand = headers.filter { $0.header.lsn == LSN(10) }.map(\.header.flags)
        #expect(twelveThousand.count == 25 && twelveThousand.first == .continues && twelveThousand.last == .continuation)
        #expect(twelveThousand.dropFirst().dropLast().allSatisfy { $0 == [.continues, .continuation] })

        let inspection = try LogInspection.inspect(directory: store)
        #expect(inspection.isHealthy, "\(inspection.segments.map(\.status))")
        #expect(inspection.lsnRange == LSN(1)...LSN(UInt64(payloads.count)))
        #expect(inspection.frames == UInt64(4 + headers.count), "frames, not records: \(inspection.frames)")
        #expect(inspection.rawBytes == UInt64(sizes.reduce(0, +)))
        // A writable reopen reads the manifest's record counts and appends after them.
        let again = try Log.open(at: store, options: Self.options())
        #expect(again.lastLSN == LSN(UInt64(payloads.count)))
        #expect(try await again.append(payload(99, size: 1700)) == LSN(UInt64(payloads.count + 1)))
        try await again.close()
        #expect(try readAll(store).last?.payload == payload(99, size: 1700))
    }

    @Test func aRecordOfSeveralFramesIsNeverSplitAcrossSegmentsAndSegmentsRollBackToVersion1() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        // Segments of 4 KiB; records of 3,000 bytes in 500-byte frames pass the segment size.
        let log = try Log.open(at: store, options: Self.options(segment: 4096))
        var expected: [[UInt8]] = []
        for index in 0..<30 {
            let bytes = payload(index, size: index == 3 || index == 20 ? 3000 : 300)
            expected.append(bytes)
            try await log.append(bytes)
        }
        try await log.close()
        #expect(try readAll(store).map(\.payload) == expected)
        var versions: [UInt16] = []
        for segment in try segmentFiles(store) {
            let headers = try Self.frames(segment)
            versions.append(try Self.version(segment))
            #expect(headers.first.map { !$0.header.flags.contains(.continuation) } ?? true, "a segment starts with a record's first frame")
            #expect(headers.last.map { $0.header.flags.endsRecord } ?? true, "a segment ends with a record's last frame")
            if try Self.version(segment) == 1 { #expect(headers.allSatisfy { $0.header.flags.isEmpty }) }
        }
        let firstVersion2 = try #require(versions.firstIndex(of: 2), "\(versions)")
        #expect(versions[firstVersion2...].contains(1), "a roll for a record of one frame makes version 1 again: \(versions)")
        #expect(versions.filter { $0 == 2 }.count == 2, "one roll to version 2 for each large record: \(versions)")
    }

    @Test func concurrentAppendsOfLargeAndSmallRecordsEachReadBackWhole() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        let log = try Log.open(at: store, options: Self.options(segment: 16 << 10))
        let written = Protected<[LSN: [UInt8]]>([:])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for appender in 0..<4 {
                group.addTask {
                    for index in 0..<40 {
                        let bytes = payload(appender * 1000 + index, size: (index + appender) % 4 == 0 ? 2600 + index : 90)
                        let lsn = try await log.append(bytes)
                        written.withLock { $0[lsn] = bytes }
                    }
                }
            }
            try await group.waitForAll()
        }
        try await log.close()
        let records = try readAll(store)
        #expect(records.count == 160)
        #expect(Dictionary(uniqueKeysWithValues: records.map { ($0.lsn, $0.payload) }) == written.current)
    }

    /// A store whose last record (LSN 6) is 2,600 bytes in six frames: the offsets where that
    /// record starts and where the file ends.
    func storeEndingInALargeRecord(_ store: String) async throws -> (start: Int, end: Int) {
        let log = try Log.open(at: store, options: Self.options(frame: 500))
        try await log.append(payload(0, size: 900))
        for index in 1..<5 { try await log.append(payload(index, size: 100)) }
        try await log.close()
        let segment = try #require(try segmentFiles(store).last)
        let start = try contents(segment).count
        let again = try Log.open(at: store, options: Self.options(frame: 500))
        try await again.append(payload(5, size: 2600))
        try await again.close()
        return (start, try contents(segment).count)
    }

    @Test func cuttingTheLastRecordAtEveryOffsetKeepsTheEarlierRecordsAndNoPartOfIt() async throws {
        let directory = TemporaryDirectory()
        let original = directory.store("original")
        let (start, end) = try await storeEndingInALargeRecord(original)
        #expect(end - start == 6 * FrameHeader.size + 2600)
        let earlier = [payload(0, size: 900)] + (1..<5).map { payload($0, size: 100) }
        // Every offset inside the record: a crash can stop the write anywhere in it.
        for cut in start..<end {
            let store = directory.store("cut")
            try copyDirectory(original, to: store)
            let segment = try #require(try segmentFiles(store).last)
            truncateFile(segment, to: cut)
            #expect(try readAll(store).map(\.payload) == earlier, "a read-only open at \(cut) sees no part of the record")
            let log = try Log.open(at: store, options: Self.options(frame: 500))
            #expect(log.lastLSN == LSN(5), "cut at \(cut)")
            if cut > start {
                let torn = try #require(log.recoveryReport.tornTail, "cut at \(cut)")
                #expect(torn.offset == UInt64(start) && torn.wasCut, "cut at \(cut): \(torn)")
                #expect(try contents(try #require(torn.savedTo)).count == cut - start, "the cut bytes are kept beside the store")
            }
            #expect(try contents(segment).count == start, "cut back to the record's first frame")
            #expect(try await log.append(payload(77, size: 1200)) == LSN(6), "appends continue")
            try await log.close()
            #expect(try readAll(store).map(\.payload) == earlier + [payload(77, size: 1200)], "cut at \(cut)")
        }
    }

    @Test func aLostMiddleFrameOrADamagedOneIsTheRecordsTornTailWhenLastAndCorruptionBeforeAnother() async throws {
        let directory = TemporaryDirectory()
        let original = directory.store("original")
        let (start, _) = try await storeEndingInALargeRecord(original)
        let segment = try #require(try segmentFiles(original).last)
        let headers = try Self.frames(segment).filter { $0.header.lsn == LSN(6) }
        #expect(headers.count == 6 && headers[0].offset == start)
        let originalBytes = try contents(segment)

        // The third frame's payload damaged: the whole record is a torn tail, cut from its start.
        let damaged = directory.store("damaged")
        try copyDirectory(original, to: damaged)
        var bytes = originalBytes
        bytes[headers[2].offset + FrameHeader.size + 10] ^= 0x40
        try write(bytes, to: try #require(try segmentFiles(damaged).last))
        let log = try Log.open(at: damaged, options: Self.options(frame: 500))
        #expect(log.lastLSN == LSN(5))
        #expect(log.recoveryReport.tornTail?.offset == UInt64(start))
        #expect(log.recoveryReport.tornTail?.reason.contains("inside the record at LSN 6") == true, "\(String(describing: log.recoveryReport.tornTail))")
        try await log.close()

        // A middle frame missing (its bytes gone, the rest shifted): the record is incomplete.
        let missing = directory.store("missing")
        try copyDirectory(original, to: missing)
        bytes = originalBytes
        bytes.removeSubrange(headers[3].offset..<headers[4].offset)
        try write(bytes, to: try #require(try segmentFiles(missing).last))
        #expect(try Log.open(at: missing, options: Self.options(frame: 500)).lastLSN == LSN(5))

        // The same damage followed by a record that checks: corruption, nothing cut.
        let followed = directory.store("followed")
        try copyDirectory(original, to: followed)
        let writer = try Log.open(at: followed, options: Self.options(frame: 500))
        try await writer.append(payload(6, size: 50))
        try await writer.close()
        let followedSegment = try #require(try segmentFiles(followed).last)
        bytes = try contents(followedSegment)
        bytes[headers[2].offset + FrameHeader.size + 10] ^= 0x40
        try write(bytes, to: followedSegment)
        #expect {
            try Log.open(at: followed, options: Self.options(frame: 500))
        } throws: { error in
            let error = error as? LogError
            return error?.code == .corruption && error?.offset == UInt64(start)
        }
        // Salvage reads around it: the damaged record is lost whole, the one after it is read.
        var salvage = Self.options(frame: 500)
        salvage.recovery = .salvage
        let salvaged = try readAll(followed, options: salvage)
        #expect(salvaged.map(\.lsn) == (1...5).map { LSN(UInt64($0)) } + [LSN(7)])
        #expect(salvaged.last?.payload == payload(6, size: 50))
    }

    /// A frame with a valid checksum written by hand; `seed` is the checksum of the record's
    /// frames before it.
    static func forgeFrame(lsn: LSN, epoch: UInt32, flags: FrameFlags, payload bytes: [UInt8], extending seed: UInt32 = 0) -> [UInt8] {
        var frame = [UInt8](repeating: 0, count: FrameHeader.size) + bytes
        let header = FrameHeader(
            lsn: lsn, epoch: epoch, storedLength: UInt32(bytes.count), rawLength: UInt32(bytes.count), dictionaryID: 0, codec: .raw,
            flags: flags)
        let checksum = CRC32C.checksum(bytes, extending: seed)
        frame.withUnsafeMutableBytes { header.write(to: UnsafeMutableRawBufferPointer(rebasing: $0[0..<FrameHeader.size]), payloadChecksum: checksum) }
        return frame
    }

    @Test func frameFlagsOutsideTheirPlaceAreRefused() async throws {
        let directory = TemporaryDirectory()
        /// A store of two small records, then `forge` appended to its active segment, then a
        /// small record: returns the open's error.
        func openWith(version: UInt16, _ forge: (_ epoch: UInt32) -> [UInt8]) async throws -> LogError? {
            let store = directory.store("forged-\(UUID().uuidString)")
            let log = try Log.open(at: store, options: Self.options())
            try await log.append(payload(0, size: 40))
            try await log.append(payload(1, size: 40))
            try await log.close()
            let segment = try #require(try segmentFiles(store).last)
            var bytes = try contents(segment)
            let epoch = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 12, as: UInt32.self) }
            bytes[8] = UInt8(version)
            let checksum = bytes.withUnsafeBytes { CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<60]))) }
            withUnsafeBytes(of: checksum.littleEndian) { bytes.replaceSubrange(60..<64, with: $0) }
            bytes += forge(epoch)
            bytes += Self.forgeFrame(lsn: LSN(4), epoch: epoch, flags: [], payload: payload(9, size: 30))
            try write(bytes, to: segment)
            do {
                _ = try Log.open(at: store, options: Self.options())
                return nil
            } catch {
                return error as? LogError
            }
        }
        let whole = { (epoch: UInt32) in
            Self.forgeFrame(lsn: LSN(3), epoch: epoch, flags: .continues, payload: payload(3, size: 20))
                + Self.forgeFrame(
                    lsn: LSN(3), epoch: epoch, flags: .continuation, payload: payload(4, size: 20),
                    extending: CRC32C.checksum(payload(3, size: 20)))
        }
        #expect(try await openWith(version: 2, whole) == nil, "a well-formed record of two frames in a version 2 segment")
        // The second frame checked on its own, as a frame of a record of one: its checksum
        // does not continue the first's, so it is refused (as a frame lost between two is).
        let unchained = try await openWith(version: 2) { epoch in
            Self.forgeFrame(lsn: LSN(3), epoch: epoch, flags: .continues, payload: payload(3, size: 20))
                + Self.forgeFrame(lsn: LSN(3), epoch: epoch, flags: .continuation, payload: payload(4, size: 20))
        }
        #expect(unchained?.code == .corruption && unchained?.message.contains("frame checksum mismatch") == true, "\(String(describing: unchained))")
        let inVersion1 = try await openWith(version: 1, whole)
        #expect(inVersion1?.code == .corruption && inVersion1?.message.contains("unknown flags 1") == true, "\(String(describing: inVersion1))")
        let orphan = try await openWith(version: 2) { epoch in
            Self.forgeFrame(lsn: LSN(3), epoch: epoch, flags: .continuation, payload: payload(3, size: 20))
        }
        #expect(orphan?.code == .corruption && orphan?.message.contains("continues a record") == true, "\(String(describing: orphan))")
        let unfinished = try await openWith(version: 2) { epoch in
            Self.forgeFrame(lsn: LSN(3), epoch: epoch, flags: .continues, payload: payload(3, size: 20))
        }
        #expect(unfinished?.code == .corruption && unfinished?.message.contains("inside the record at LSN 3") == true, "\(String(describing: unfinished))")
        let unknownBit = try await openWith(version: 2) { epoch in
            Self.forgeFrame(lsn: LSN(3), epoch: epoch, flags: FrameFlags(rawValue: 4), payload: payload(3, size: 20))
        }
        #expect(unknownBit?.code == .corruption && unknownBit?.message.contains("unknown flags 4") == true, "\(String(describing: unknownBit))")
    }

    @Test func anActiveVersion1SegmentRollsBeforeTheFirstLargeRecordEvenWhenEmpty() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        // A new store's first segment is version 1 and empty.
        let log = try Log.open(at: store, options: Self.options())
        try await log.append(payload(0, size: 1500))
        try await log.close()
        let segments = try segmentFiles(store)
        #expect(segments.count == 2)
        #expect(try Self.version(segments[0]) == 1 && contents(segments[0]).count == SegmentHeader.size, "sealed empty")
        #expect(try Self.version(segments[1]) == 2)
        #expect(try readAll(store).map(\.payload) == [payload(0, size: 1500)])
        let inspection = try LogInspection.inspect(directory: store)
        #expect(inspection.isHealthy && inspection.lsnRange == LSN(1)...LSN(1), "\(inspection.segments.map(\.status))")
    }

    @Test func aFollowerReadsARecordOfSeveralFramesWholeAndOnlyOnceItIsAcknowledged() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        let writer = try Log.open(at: store, options: Self.options(segment: 8192))
        try await writer.append(payload(0, size: 60))
        var options = LogOptions()
        options.readOnly = true
        options.readsAcknowledgedOnly = true
        let follower = try Log.open(at: store, options: options)
        var expected = [payload(0, size: 60)]
        var read: [LogRecord] = []
        for index in 1..<25 {
            let bytes = payload(index, size: index % 2 == 0 ? 1800 + index : 70)
            expected.append(bytes)
            try await writer.append(bytes)
            // A small byte limit: steps end between records, never inside one.
            while case .records(let step) = try follower.followWriter(byteLimit: 100), !step.isEmpty { read += step }
        }
        #expect(read.map(\.payload) == Array(expected.dropFirst()))
        #expect(try Self.all(follower).map(\.payload) == expected)
        try await writer.close()
    }

    @Test func aBackupHoldsRecordsOfSeveralFramesWhole() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        let log = try Log.open(at: store, options: Self.options(segment: 8192))
        var expected: [[UInt8]] = []
        for index in 0..<12 {
            let bytes = payload(index, size: index % 3 == 0 ? 2500 : 80)
            expected.append(bytes)
            try await log.append(bytes)
        }
        let copy = directory.store("backup")
        _ = try log.backup(to: copy)
        try await log.close()
        #expect(try readAll(copy).map(\.payload) == expected)
        #expect(try LogInspection.inspect(directory: copy).isHealthy)
    }

    /// Appenders of records of one to eight frames on a file system that, every 7 calls, says
    /// what a power cut would leave (unsynced sectors reaching the disk in any order, unsynced
    /// directory entries lost). Every image opens (or is salvaged) with every acknowledged
    /// record, and every record it gives is one that was appended, whole: never a part.
    /// The size of payload `id` in the power-cut test: one to eight frames of 512 bytes.
    static func recordSize(_ id: Int) -> Int { 100 + (id % 8) * 600 }

    @Test func aPowerCutLeavesEachRecordOfSeveralFramesWholeOrAbsent() async throws {
        let seed = TestSeed.named()
        let directory = TemporaryDirectory()
        let acknowledged = Protected<[LSN: Int]>([:])
        let images = Protected<[(acknowledged: [LSN: Int], files: [String: [UInt8]])]>([])
        let io = PowerCutFileIO(seed: seed, every: 7) { files in
            let before = acknowledged.current
            images.withLock { if $0.count < 80 { $0.append((before, files)) } }
        }
        var options = Self.options(frame: 512, segment: 16 << 10)
        options.fileIO = io
        options.compression = .lz4
        let log = try Log.open(at: directory.store(), options: options)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for appender in 0..<3 {
                group.addTask {
                    for index in 0..<40 {
                        let id = appender * 1000 + index
                        let lsn = try await log.append(payload(id, size: Self.recordSize(id)))
                        acknowledged.withLock { $0[lsn] = id }
                    }
                }
            }
            try await group.waitForAll()
        }
        try await log.close()
        let appended = Set((0..<3).flatMap { appender in (0..<40).map { payload(appender * 1000 + $0, size: Self.recordSize(appender * 1000 + $0)) } })
        for (number, image) in images.current.enumerated() {
            guard
                let (records, _) = PowerLossTests.records(
                    ofImage: image.files, at: directory.store("cut-\(number)"), options: Self.options(frame: 512, segment: 16 << 10),
                    anyAcknowledged: !image.acknowledged.isEmpty, name: "image \(number)")
            else { continue }
            for record in records where !appended.contains(record.payload) {
                Issue.record("image \(number) (CAIRN_TEST_SEED=\(TestSeed.base)): LSN \(record.lsn) is not a whole record")
            }
            let byLSN = Dictionary(records.map { ($0.lsn, $0.payload) }, uniquingKeysWith: { first, _ in first })
            for (lsn, id) in image.acknowledged where byLSN[lsn] != payload(id, size: Self.recordSize(id)) {
                Issue.record("image \(number) (CAIRN_TEST_SEED=\(TestSeed.base)): acknowledged LSN \(lsn) lost")
            }
        }
        #expect(images.current.count > 30)
    }
}
