import CairnTestSupport
import Foundation
import Testing
@testable import CairnLog

/// What docs/FORMAT.md promises about manifests, dictionaries, frame sizes, the interval mode,
/// salvage and repair, each checked.
@Suite struct FormatClaimTests {
    func manifest(_ store: String) throws -> Manifest {
        try Manifest(decoding: contents(store + "/MANIFEST"), path: store + "/MANIFEST")
    }

    /// A store of `count` appends of 150 bytes in 4 KiB segments.
    func makeStore(_ store: String, count: Int, options: LogOptions = smallSegments(4096)) async throws {
        let log = try Log.open(at: store, options: options)
        for index in 0..<count { try await log.append(payload(index, size: 150)) }
        try await log.close()
    }

    /// The codec and dictionary id of every frame of a segment file.
    func frameCodecs(_ segment: String) throws -> [(FrameCodec, UInt16)] {
        try frameHeaders(ofSegment: segment).map { ($0.header.codec, $0.header.dictionaryID) }
    }

    @Test func unknownManifestFlagsAreAnUnsupportedFormatAndOnlyVersion2NamesABase() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        try await makeStore(store, count: 5)
        let original = try contents(store + "/MANIFEST")
        #expect(original[8] == 1)  // no base: version 1, which earlier builds read
        func resealed(_ bytes: [UInt8]) -> [UInt8] {
            var bytes = bytes
            let checksum = bytes.withUnsafeBytes { CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<(bytes.count - 4)]))) }
            withUnsafeBytes(of: checksum.littleEndian) { bytes.replaceSubrange((bytes.count - 4)..., with: $0) }
            return bytes
        }
        var flagged = original
        flagged[10] = 1
        var based = try manifest(store)
        based.base = Manifest.Base(number: 1, lastLSN: .zero, length: 100, checksum: 0)
        var version1Base = based.encoded()
        #expect(version1Base[8] == 2)
        version1Base[8] = 1
        for (bytes, code) in [(resealed(flagged), LogError.Code.unsupportedFormat), (resealed(version1Base), .corruption)] {
            try write(bytes, to: store + "/MANIFEST")
            #expect { try Log.open(at: store) } throws: { ($0 as? LogError)?.code == code }
            #expect { try LogInspection.inspect(directory: store) } throws: { error in
                let error = error as? LogError
                return error?.code == code && error?.path == store + "/MANIFEST"
            }
        }
        try write(original, to: store + "/MANIFEST")
        #expect(try readAll(store).count == 5)
    }

    @Test func aMissingOrDamagedDictionaryFailsEveryOpen() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        var options = smallSegments(4096)
        options.dictionaryTraining.threshold = 16
        try await makeStore(store, count: 40, options: options)
        let dictionary = store + "/" + StoreLayout.name(.dictionary, 1)
        let original = try contents(dictionary)
        var damaged = original
        damaged[20] ^= 1
        for (bytes, code) in [(nil, LogError.Code.io), (damaged, .corruption)] as [([UInt8]?, LogError.Code)] {
            if let bytes { try write(bytes, to: dictionary) } else { try FileManager.default.removeItem(atPath: dictionary) }
            for mode in [RecoveryMode.pointInTime, .absoluteConsistency, .salvage] {
                for readOnly in [false, true] {
                    var options = LogOptions()
                    options.recovery = mode
                    options.readOnly = readOnly
                    #expect { try Log.open(at: store, options: options) } throws: { error in
                        let error = error as? LogError
                        return error?.code == code && error?.path == dictionary
                    }
                }
            }
            #expect(try LogInspection.inspect(directory: store).otherProblems.map(\.path) == [dictionary])
        }
        try write(original, to: dictionary)
        #expect(try readAll(store).count == 40)
    }

    @Test func dictionariesAreRetrainedAtRollsOfLargeEnoughSegmentsOnly() async throws {
        let directory = TemporaryDirectory()
        let retraining = retrainingDictionaries()
        try await makeStore(directory.store("a"), count: 120, options: retraining)
        let listed = try manifest(directory.store("a")).dictionaries.map(\.id)
        #expect(listed.count >= 3 && listed == Array(1...UInt16(listed.count)), "\(listed)")
        let last = try #require(try segmentFiles(directory.store("a")).last)
        #expect(try frameCodecs(last).allSatisfy { $0.0 != .lz4Dictionary || $0.1 == listed.last }, "later frames use the newest")
        #expect(try readAll(directory.store("a")).count == 120)

        var once = retraining
        once.dictionaryTraining.retrainingSegmentSize = 1 << 20
        try await makeStore(directory.store("b"), count: 120, options: once)
        #expect(try manifest(directory.store("b")).dictionaries.count == 1, "segments under the size never retrain")
    }

    @Test func noDictionaryIdPastTheLastIsMadeAndTheLastStaysInUse() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        try await makeStore(store, count: 3)
        // List dictionary 65535, the last id.
        let capped = CompressionDictionary(id: UInt16.max, bytes: Array(payload(7, size: 2000)))
        try write(capped.fileContents(), to: store + "/" + StoreLayout.name(.dictionary, UInt64(UInt16.max)))
        var listing = try manifest(store)
        listing.dictionaries = [Manifest.Dictionary(id: UInt16.max, length: UInt32(capped.count), checksum: capped.checksum)]
        listing.generation += 1
        try write(listing.encoded(), to: store + "/MANIFEST")
        var options = smallSegments(4096)
        options.dictionaryTraining.threshold = 16
        options.dictionaryTraining.retrainingSegmentSize = 2048
        let log = try Log.open(at: store, options: options)
        for index in 3..<120 { try await log.append(payload(index, size: 150)) }
        try await log.close()
        #expect(try manifest(store).dictionaries.map(\.id) == [UInt16.max])
        let codecs = try segmentFiles(store).flatMap { try frameCodecs($0) }
        #expect(codecs.contains { $0.0 == .lz4Dictionary && $0.1 == UInt16.max })
        #expect(try readAll(store).map(\.payload) == (0..<120).map { payload($0, size: 150) })
    }

    @Test func theRecordedMaximumFrameSizeIsRaisedNeverLoweredAndBoundsEveryReader() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        var options = LogOptions()
        options.maximumFrameSize = 1000
        options.compression = .none
        let log = try Log.open(at: store, options: options)
        try await log.append([UInt8](repeating: 7, count: 1000))
        try await log.close()
        #expect(try manifest(store).maximumFrameSize == 1000)

        // A writer or reader with a smaller option neither lowers it nor refuses the frame.
        options.maximumFrameSize = 100
        let smaller = try Log.open(at: store, options: options)
        #expect(try manifest(store).maximumFrameSize == 1000)
        #expect(try smaller.records().next()?.payload.count == 1000)
        try await smaller.close()
        var reader = options
        reader.readOnly = true
        #expect(try readAll(store, options: reader).count == 1)
        #expect(try LogInspection.inspect(directory: store).isHealthy)

        // A read-only open with a larger option changes nothing; a writable one raises it first.
        reader.maximumFrameSize = 9000
        _ = try Log.open(at: store, options: reader)
        #expect(try manifest(store).maximumFrameSize == 1000)
        let generation = try manifest(store).generation
        options.maximumFrameSize = 5000
        let larger = try Log.open(at: store, options: options)
        #expect(try manifest(store).maximumFrameSize == 5000 && manifest(store).generation == generation + 1)
        try await larger.append([UInt8](repeating: 8, count: 5000))
        try await larger.close()
        #expect(try readAll(store, options: reader).map(\.payload.count) == [1000, 5000])
    }

    @Test func theIntervalModeMakesAnAppendSyncOnceTheLastSyncIsTwoIntervalsOld() async throws {
        let directory = TemporaryDirectory()
        let io = FaultyFileIO()
        io.delaySyncThreadSyncs(microseconds: 2_000_000)  // the sync thread is stuck on a slow disk
        var options = LogOptions()
        options.durability = .interval(.milliseconds(40))
        options.fileIO = io
        let log = try Log.open(at: directory.store(), options: options)
        try await log.append(payload(1))
        try await Task.sleep(for: .milliseconds(150))  // the sync thread's sync is under way, not done
        let lsn = try await log.append(payload(2))
        #expect(log.durableLSN >= lsn, "more than two intervals since the last sync: the append synced on its own task")
        try await log.close()
    }

    @Test func salvageSkipsADamagedSealedSegmentAndReportsLostRangesAndGaps() async throws {
        let directory = TemporaryDirectory()
        let original = directory.store("original")
        try await makeStore(original, count: 100)
        let listing = try manifest(original)
        #expect(listing.segments.count >= 4)
        var salvage = LogOptions()
        salvage.recovery = .salvage
        func salvaged(_ store: String) throws -> (RecoveryReport, [LSN]) {
            let log = try Log.open(at: store, options: salvage)
            var lsns: [LSN] = []
            try log.records().forEach { lsns.append($0.lsn) }
            return (log.recoveryReport, lsns)
        }
        let first = listing.segments[0], second = listing.segments[1], third = listing.segments[2]
        let all = (1...100).map { LSN(UInt64($0)) }

        // The first segment's header damaged: the whole segment is skipped, its range lost.
        let store = directory.store("header")
        try copyDirectory(original, to: store)
        let firstPath = store + "/" + StoreLayout.name(.segment, first.number)
        var bytes = try contents(firstPath)
        bytes[2] ^= 0xFF
        try write(bytes, to: firstPath)
        let firstRange = first.firstLSN...LSN(first.firstLSN.rawValue + first.frameCount - 1)
        var (report, lsns) = try salvaged(store)
        #expect(report.lostRanges == [firstRange] && report.damage.first?.path == firstPath)
        #expect(lsns == all.filter { !firstRange.contains($0) })

        // A frame in the middle of the second damaged: that LSN is lost, the rest read.
        let middle = directory.store("middle")
        try copyDirectory(original, to: middle)
        let secondPath = middle + "/" + StoreLayout.name(.segment, second.number)
        bytes = try contents(secondPath)
        bytes[SegmentHeader.size + FrameHeader.size + 2] ^= 0x01
        try write(bytes, to: secondPath)
        (report, lsns) = try salvaged(middle)
        #expect(report.lostRanges == [second.firstLSN...second.firstLSN])
        #expect(lsns == all.filter { $0 != second.firstLSN })

        // The third cut at its last frame: the gap before the fourth is reported.
        let gap = directory.store("gap")
        try copyDirectory(original, to: gap)
        let thirdPath = gap + "/" + StoreLayout.name(.segment, third.number)
        let thirdLast = LSN(third.firstLSN.rawValue + third.frameCount - 1)
        let frames = try frameCodecs(thirdPath).count
        #expect(UInt64(frames) == third.frameCount)
        var offset = SegmentHeader.size
        bytes = try contents(thirdPath)
        for _ in 0..<(frames - 1) {
            let length = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 20, as: UInt32.self) }
            offset += FrameHeader.size + Int(length)
        }
        truncateFile(thirdPath, to: offset)
        (report, lsns) = try salvaged(gap)
        #expect(report.lostRanges.contains(thirdLast...thirdLast), "\(report)")
        #expect(report.damage.contains { $0.path == thirdPath })
        #expect(lsns == all.filter { $0 != thirdLast })
    }

    @Test func repairIsRefusedWhileAWriterHoldsTheStore() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        let writer = try Log.open(at: store)
        try await writer.append(payload(1))
        let segment = try #require(try segmentFiles(store).last)
        let bytes = try contents(segment) + [1, 2, 3]
        try write(bytes, to: segment)
        #expect { try Log.repairTornTail(directory: store) } throws: { ($0 as? LogError)?.code == .locked }
        #expect(try contents(segment) == bytes, "nothing was cut")
        try await writer.close()
    }
}
