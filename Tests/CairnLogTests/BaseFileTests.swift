import CairnTestSupport
import Foundation
import Testing
@testable import CairnLog

/// Base files at the log's level: written, installed in place of the frames they hold, read
/// back; and hostile bases refused with errors that name the file and offset.
@Suite struct BaseFileTests {
    /// Entries of a base: one per index, of varied lengths (one spans several blocks, some a
    /// good part of one).
    func entry(_ index: Int) -> [UInt8] { payload(index, size: index == 5 ? 700_000 : index % 97 == 0 ? 40_000 : 30 + index % 500) }

    /// A store of `frames` frames in small segments, with a base of `entries` entries at `lastLSN`.
    func makeStore(
        _ store: String, frames: Int = 120, entries: Int = 2_000, lastLSN: LSN = LSN(90), level: CompactionLevel = .fast
    ) async throws
        -> WrittenBase
    {
        let log = try Log.open(at: store, options: smallSegments(4096))
        for index in 0..<frames { try await log.append(payload(index, size: 150)) }
        let writer = try log.makeBaseWriter(lastLSN: lastLSN, level: level)
        for index in 0..<entries { try writer.append(entry(index)) }
        let written = try writer.finish()
        try log.installBase(written)
        try await log.close()
        return written
    }

    /// Opens with a base reader and a replay; returns the entries and the replayed LSNs.
    func open(_ store: String, readOnly: Bool = true) throws -> (entries: [[UInt8]], replayed: [LSN], log: Log) {
        var options = LogOptions()
        options.readOnly = readOnly
        var entries: [[UInt8]] = []
        var replayed: [LSN] = []
        let log = try Log.open(
            at: store, options: options, replay: { replayed.append($0.lsn) },
            base: { reader in try reader.forEachEntry { bytes, _ in entries.append(Array(bytes)) } })
        return (entries, replayed, log)
    }

    @Test(arguments: CompactionLevel.allCases)
    func aBaseReplacesTheFramesItHolds(level: CompactionLevel) async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        let written = try await makeStore(store, level: level)
        let (entries, replayed, log) = try open(store)
        #expect(entries == (0..<2_000).map(entry))
        #expect(replayed == (91...120).map { LSN(UInt64($0)) })
        #expect(log.baseLSN == LSN(90))
        #expect(written.length < written.length + 1 && FileManager.default.fileExists(atPath: written.path))
        // Segments whose frames the base holds are gone; the one holding LSN 91 stays.
        let inspection = try LogInspection.inspect(directory: store)
        #expect(inspection.isHealthy)
        #expect(inspection.base?.lastLSN == LSN(90))
        let first = try #require(inspection.segments.first?.lsnRange)
        #expect(first.lowerBound <= LSN(91) && first.upperBound >= LSN(91))
        // Appends go on after a reopen for writing, and a second base replaces the first.
        let writable = try Log.open(at: store, options: smallSegments(4096), base: { _ in })
        #expect(writable.lastLSN == LSN(120))
        try await writable.append(payload(500))
        let next = try writable.makeBaseWriter(lastLSN: LSN(121), level: level)
        try next.append([1, 2, 3])
        let removed = try writable.installBase(try next.finish())
        #expect(removed.contains(StoreLayout.name(.base, written.number)))
        try await writable.close()
        let (after, replayedAfter, _) = try open(store)
        #expect(after == [[1, 2, 3]])
        #expect(replayedAfter.isEmpty)
    }

    @Test func anOpenThatReplaysMustReadTheBase() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        _ = try await makeStore(store)
        var options = LogOptions()
        options.readOnly = true
        #expect { try Log.open(at: store, options: options, replay: { _ in }) } throws: { ($0 as? LogError)?.code == .unsupportedFormat }
        // Without a replay, the log opens (frames from the first segment it still holds).
        #expect(try readAll(store).last?.lsn == LSN(120))
    }

    @Test func anUnfinishedBaseIsALeftOverAndOnlyOneIsWrittenAtATime() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        let log = try Log.open(at: store, options: smallSegments(4096))
        for index in 0..<10 { try await log.append(payload(index)) }
        #expect { try log.makeBaseWriter(lastLSN: LSN(11), level: .fast) } throws: { ($0 as? LogError)?.code == .invalidArgument }
        let writer = try log.makeBaseWriter(lastLSN: LSN(5), level: .fast)
        #expect { try log.makeBaseWriter(lastLSN: LSN(5), level: .fast) } throws: { ($0 as? LogError)?.code == .invalidArgument }
        try writer.append([9])
        let finished = try writer.finish()
        // Written, never installed (a crash before the manifest): the next open removes it.
        try await log.close()
        #expect(FileManager.default.fileExists(atPath: finished.path))
        let reopened = try Log.open(at: store)
        #expect(reopened.recoveryReport.removedFiles.contains(StoreLayout.name(.base, finished.number)))
        #expect(reopened.baseLSN == nil)
        try await reopened.close()
        // An abandoned writer leaves no file and lets the next one start.
        let again = try Log.open(at: store)
        let abandoned = try again.makeBaseWriter(lastLSN: LSN(3), level: .fast)
        abandoned.abandon()
        _ = try again.makeBaseWriter(lastLSN: LSN(3), level: .fast)
        #expect(try FileManager.default.contentsOfDirectory(atPath: store).filter { $0.contains(".base") }.isEmpty)
        try await again.close()
    }

    /// A store in `directory` of 300 frames of 500 bytes in segments of 64 KiB (the first of
    /// them 65,500 bytes), whose replaced files are cut down 8 KiB at a time, open for writing
    /// through a file system that keeps each file's truncations.
    func cuttingStore(in directory: TemporaryDirectory) async throws -> (store: String, io: SyncTrackingFileIO, log: Log) {
        let store = directory.store()
        let io = SyncTrackingFileIO()
        var options = smallSegments(64 << 10)
        options.fileIO = io
        options.releaseStep = 8 << 10
        let log = try Log.open(at: store, options: options)
        for index in 0..<300 { try await log.append(payload(index, size: 500)) }
        return (store, io, log)
    }

    /// A finished base holding the frames of the store's first segment, not yet installed.
    func baseOfFirstSegment(_ store: String, _ log: Log) throws -> WrittenBase {
        let firstSegment = try #require(try LogInspection.inspect(directory: store).segments.first?.lsnRange)
        let base = try log.makeBaseWriter(lastLSN: firstSegment.upperBound, level: .fast)
        try base.append([1])
        return try base.finish()
    }

    /// What may hold a file a base replaces, besides the store.
    enum OtherHolder: CaseIterable {
        case none
        /// A backup on the same file system hard-linked it.
        case hardLink
        /// A read-only open or a backup reads the store's files (holds the reader lock).
        case reader
    }

    /// The files a base replaces are cut down from their end a step at a time, each step
    /// synced, then unlinked: a save's sync then never waits for the whole file's blocks to be
    /// freed. Not a file with a second name (a backup's hard link) or while a reader holds the
    /// reader lock: those keep every byte for whoever holds them.
    @Test(arguments: OtherHolder.allCases)
    func replacedFilesAreCutDownOnlyWhenNoOneElseHoldsThem(other: OtherHolder) async throws {
        let directory = TemporaryDirectory()
        let (store, io, log) = try await cuttingStore(in: directory)
        let layout = StoreLayout(directory: store)
        let first = layout.path(.segment, 1)
        let bytes = try #require(FileManager.default.contents(atPath: first))
        #expect(bytes.count > 6 * (8 << 10))
        // Held open from before, as a reader that read the old manifest holds it.
        let held = try #require(FileHandle(forReadingAtPath: first))
        defer { try? held.close() }
        let link = directory.path + "/linked.seg"
        if other == .hardLink { try FileManager.default.linkItem(atPath: first, toPath: link) }
        let reading = other == .reader ? try ReaderLock.holdShared(layout, PosixFileIO()) : nil
        if other == .reader { #expect(reading != nil, "a writable open makes the reader lock's file") }
        let removed = try log.installBase(try baseOfFirstSegment(store, log))
        if let reading { PosixFileIO().close(reading) }
        try await log.close()
        #expect(removed.contains(StoreLayout.name(.segment, 1)))
        #expect(!FileManager.default.fileExists(atPath: first))
        let cuts = io.truncations(of: first)
        switch other {
        case .none:
            let step = 8 << 10
            #expect(cuts.map(\.length) == stride(from: bytes.count - step, to: 0, by: -step).map { UInt64($0) })
            #expect(!cuts.contains { !$0.synced }, "each step is synced (a journal commit of its own)")
            #expect(try (held.readToEnd() ?? Data()).count <= 8 << 10)
        case .hardLink, .reader:
            #expect(cuts.isEmpty)
            #expect(try held.readToEnd() == bytes)
            if other == .hardLink { #expect(FileManager.default.contents(atPath: link) == bytes) }
        }
    }

    /// How a reader of the store is busy while a base is installed.
    enum BusyReader: CaseIterable {
        /// A read-only open replaying the frames.
        case openingReadOnly
        /// A reader of records (`Log.records`), part way.
        case readingRecords
    }

    /// A reader holds the reader lock from before it reads the manifest until it has read the
    /// files: a base installed meanwhile unlinks the segment it replaces without cutting it
    /// down, and the reader reads every frame.
    @Test(arguments: BusyReader.allCases)
    func aBaseInstalledWhileAReaderReadsOnlyUnlinks(reader: BusyReader) async throws {
        let directory = TemporaryDirectory()
        let (store, io, writer) = try await cuttingStore(in: directory)
        let written = try baseOfFirstSegment(store, writer)
        var readOnly = LogOptions()
        readOnly.readOnly = true
        var lsns: [LSN] = []
        var removed: [String] = []
        switch reader {
        case .openingReadOnly:
            _ = try Log.open(
                at: store, options: readOnly,
                replay: { record in
                    lsns.append(record.lsn)
                    if record.lsn == .first { removed = try writer.installBase(written) }
                })
        case .readingRecords:
            let records = try Log.open(at: store, options: readOnly).records()
            while let record = try records.next() {
                lsns.append(record.lsn)
                if record.lsn == .first { removed = try writer.installBase(written) }
            }
        }
        try await writer.close()
        #expect(removed.contains(StoreLayout.name(.segment, 1)))
        #expect(io.truncations(of: StoreLayout(directory: store).path(.segment, 1)).isEmpty)
        #expect(lsns == (1...300).map { LSN(UInt64($0)) })
    }

    /// A read-only log lets the reader lock go when its open ends: a reader of its records made
    /// after a compaction replaced its files refuses at once (`busy`) rather than read a
    /// segment cut down under it and call it damage.
    @Test func recordsOfAReadOnlyLogCompactedSinceItsOpenAreRefused() async throws {
        let directory = TemporaryDirectory()
        let (store, _, writer) = try await cuttingStore(in: directory)
        var readOnly = LogOptions()
        readOnly.readOnly = true
        let reader = try Log.open(at: store, options: readOnly)
        #expect(try reader.records().next()?.lsn == .first, "unchanged since the open: read")
        // Rolls add segments and change nothing the reader opened.
        let segments = try LogInspection.inspect(directory: store).segments.count
        for index in 300..<500 { try await writer.append(payload(index, size: 500)) }
        #expect(try LogInspection.inspect(directory: store).segments.count > segments)
        #expect(try reader.records().next()?.lsn == .first, "after rolls: read")
        try writer.installBase(try baseOfFirstSegment(store, writer))
        #expect { try reader.records().next() } throws: { ($0 as? LogError)?.code == .busy }
        try await writer.close()
    }

    /// Each damage: what it does to the bytes of the base file, and whether the checksum the
    /// manifest records is fixed up so that the base's own checks must catch it.
    @Test func hostileBasesAreRefusedNamingFileAndOffset() async throws {
        let directory = TemporaryDirectory()
        let pristine = directory.store("pristine")
        let written = try await makeStore(pristine, frames: 30, entries: 3_000, lastLSN: LSN(30))
        let name = StoreLayout.name(.base, written.number)
        let original = try contents(written.path)
        let size = original.count
        func setU32(_ bytes: inout [UInt8], _ offset: Int, _ value: UInt32) {
            withUnsafeBytes(of: value.littleEndian) { bytes.replaceSubrange(offset..<(offset + 4), with: $0) }
        }
        func setU64(_ bytes: inout [UInt8], _ offset: Int, _ value: UInt64) {
            withUnsafeBytes(of: value.littleEndian) { bytes.replaceSubrange(offset..<(offset + 8), with: $0) }
        }
        /// Recomputes the trailer's checksum (index and trailer), so that only deeper checks see it.
        func resealIndex(_ bytes: inout [UInt8]) {
            let indexOffset = Int(bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: bytes.count - 32, as: UInt64.self) })
            let crc = bytes.withUnsafeBytes { CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[indexOffset..<(bytes.count - 4)]))) }
            setU32(&bytes, bytes.count - 4, crc)
        }
        let damages: [(String, ([UInt8]) -> [UInt8])] = [
            (
                "a block claiming a huge size",
                { bytes in
                    var bytes = bytes
                    let indexOffset = Int(bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: bytes.count - 32, as: UInt64.self) })
                    setU32(&bytes, indexOffset + 12, UInt32.max)
                    resealIndex(&bytes)
                    return bytes
                }
            ),
            (
                "a block header claiming a huge size",
                { bytes in
                    var bytes = bytes
                    setU32(&bytes, 64 + 4, 0x7FFF_FFFF)
                    return bytes
                }
            ),
            (
                "a trailer claiming billions of blocks",
                { bytes in
                    var bytes = bytes
                    setU64(&bytes, bytes.count - 24, UInt64.max / 2)
                    resealIndex(&bytes)
                    return bytes
                }
            ),
            (
                "a bad footer",
                { bytes in
                    var bytes = bytes
                    bytes[bytes.count - 10] ^= 0x40
                    return bytes
                }
            ),
            (
                "a flipped bit in a block",
                { bytes in
                    var bytes = bytes
                    bytes[size / 2] ^= 0x01
                    return bytes
                }
            ),
            ("a truncated base", { Array($0.prefix(size - 100)) }),
            ("a base cut to its header", { Array($0.prefix(64)) }),
            (
                "a bad header",
                { bytes in
                    var bytes = bytes
                    bytes[3] ^= 0x20
                    return bytes
                }
            ),
            (
                "an entry running past its block",
                { bytes in
                    // A stored block: rewrite the first block raw with a bad entry length, all sealed.
                    var bytes = bytes
                    let indexOffset = Int(bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: bytes.count - 32, as: UInt64.self) })
                    let stored = Int(bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 64, as: UInt32.self) })
                    guard stored >= 8 else { return bytes }
                    var raw = [UInt8](repeating: 0, count: stored)
                    setU32(&raw, 0, UInt32(stored))
                    bytes.replaceSubrange((64 + 16)..<(64 + 16 + stored), with: raw)
                    setU32(&bytes, 64 + 4, UInt32(stored))
                    bytes[64 + 8] = 0
                    var crc = bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[64..<(64 + 12)])) }
                    crc = bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[(64 + 16)..<(64 + 16 + stored)]), extending: crc) }
                    setU32(&bytes, 64 + 12, CRC32C.mask(crc))
                    setU32(&bytes, indexOffset + 12, UInt32(stored))
                    resealIndex(&bytes)
                    return bytes
                }
            )
        ]
        for (what, damage) in damages {
            let store = directory.store(what.replacingOccurrences(of: " ", with: "-"))
            try copyDirectory(pristine, to: store)
            let damaged = damage(original)
            try write(damaged, to: store + "/" + name)
            // The manifest records the damaged file's length and checksum: only the base's own
            // structure can tell (a truncation is then caught by the index, not the length).
            var manifest = try Manifest(decoding: contents(store + "/MANIFEST"), path: store + "/MANIFEST")
            manifest.base?.length = UInt64(damaged.count)
            manifest.base?.checksum = CRC32C.mask(CRC32C.checksum(damaged))
            try write(manifest.encoded(), to: store + "/MANIFEST")
            let failure = #expect(throws: LogError.self, "\(what)") { _ = try open(store) }
            #expect(failure?.code == .corruption, "\(what): \(String(describing: failure))")
            #expect(failure?.path == store + "/" + name, "\(what)")
            #expect(failure?.offset != nil, "\(what)")
            let inspection = try LogInspection.inspect(directory: store)
            #expect(!inspection.isHealthy && inspection.base?.damage != nil, "\(what)")
        }
        // A base from another store, with this store's manifest entry for it.
        let other = directory.store("other")
        let foreign = try await makeStore(other, frames: 30, entries: 10, lastLSN: LSN(30))
        let store = directory.store("foreign")
        try copyDirectory(pristine, to: store)
        let bytes = try contents(foreign.path)
        try write(bytes, to: store + "/" + name)
        var manifest = try Manifest(decoding: contents(store + "/MANIFEST"), path: store + "/MANIFEST")
        manifest.base?.length = UInt64(bytes.count)
        manifest.base?.checksum = CRC32C.mask(CRC32C.checksum(bytes))
        try write(manifest.encoded(), to: store + "/MANIFEST")
        #expect { _ = try open(store) } throws: { error in
            let error = error as? LogError
            return error?.code == .corruption && error?.message.contains("another store") == true
        }
        // The pristine store still opens.
        #expect(try open(pristine).entries.count == 3_000)
    }
}
