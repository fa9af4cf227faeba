import CairnLog
import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// A save whose change record is larger than the log's maximum frame size is one save all the
/// same: one LSN, several frames (docs/FORMAT.md §4), all of it or none of it after a crash.
@Suite struct LargeSaveTests {
    static func model() throws -> Model {
        try Model {
            Entity("Item") {
                Attribute("code", .string, optional: false)
                Attribute("n", .integer64, indexed: true)
                Attribute("blob", .binary)
                Unique("code")
            }
        }
    }

    /// Frames of at most 16 KiB, so that a save of 2,000 items spans many.
    static var options: StoreOptions {
        var options = StoreOptions()
        options.maximumFrameSize = 16 << 10
        options.automaticCompaction = .disabled
        return options
    }

    static let large = 2_000

    /// After the model record (LSN 1): one small save (LSN 2: item 0), then one of ``large``
    /// items (LSN 3) by a context, then ``large`` more by a batch insert (LSN 4).
    static func fill(_ store: Store) async throws {
        let context = store.newBackgroundContext()
        func insert(_ range: Range<Int>) throws {
            for index in range {
                let item = try context.insert("Item")
                try item.setValue(.string("item-\(index)"), forKey: "code")
                try item.setValue(.integer(Int64(index)), forKey: "n")
                try item.setValue(.binary(Self.blob(index)), forKey: "blob")
            }
        }
        try insert(0..<1)
        try await context.save()
        try insert(1..<(Self.large + 1))
        try await context.save()
        let rows: [[Value]] = ((Self.large + 1)..<(2 * Self.large + 1)).map { index in
            [.string("item-\(index)"), .integer(Int64(index)), .binary(Self.blob(index))]
        }
        _ = try await store.batchInsert("Item", columns: ["code", "n", "blob"], rows: rows)
    }

    /// Item `index`'s bytes: 100, incompressible enough that a save of 2,000 takes many frames.
    static func blob(_ index: Int) -> [UInt8] {
        var value = UInt64(index) &* 0x9E37_79B9_7F4A_7C15 | 1
        return (0..<100).map { _ in
            value = value &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: value >> 56)
        }
    }

    /// The items' numbers, sorted, each checked against its code and bytes.
    static func items(_ store: Store) throws -> [Int] {
        let context = store.newBackgroundContext()
        return try context.fetch(FetchRequest("Item")).map { (item: ManagedObject) throws -> Int in
            let index = Int(try item.value(forKey: "n", as: Int64.self))
            guard try item.value(forKey: "code", as: String.self) == "item-\(index)", try item.value(forKey: "blob", as: Data.self) == Data(Self.blob(index))
            else {
                return -1
            }
            return index
        }.sorted()
    }

    @Test func aSaveOverTheFrameSizeIsOneSaveAndReadsBackAfterAReopenAsOfAndACompaction() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        let store = try Store(at: path, model: try Self.model(), options: Self.options)
        try await Self.fill(store)
        #expect(store.lastSaveLSN == LSN(4), "three saves, three LSNs")
        #expect(try Self.items(store) == Array(0..<(2 * Self.large + 1)))
        try await store.close()

        let inspection = try LogInspection.inspect(directory: path)
        #expect(inspection.isHealthy)
        #expect(inspection.lsnRange == LSN(1)...LSN(4), "the model record, then the three saves")
        #expect(inspection.frames > 20, "the two large saves span many frames: \(inspection.frames)")

        let reopened = try Store(at: path, model: try Self.model(), options: Self.options)
        #expect(try Self.items(reopened) == Array(0..<(2 * Self.large + 1)))
        try await reopened.compact()
        try await reopened.close()
        let compacted = try Store(at: path, model: try Self.model(), options: Self.options)
        #expect(try Self.items(compacted) == Array(0..<(2 * Self.large + 1)))
        try await compacted.close()

        var asOf = StoreOptions()
        asOf.readOnly = true
        let copy = directory.store("copy")
        let again = try Store(at: copy, model: try Self.model(), options: Self.options)
        try await Self.fill(again)
        try await again.close()
        asOf.asOf = LSN(2)
        #expect(try Self.items(try Store(at: copy, model: try Self.model(), options: asOf)) == [0])
        asOf.asOf = LSN(3)
        #expect(try Self.items(try Store(at: copy, model: try Self.model(), options: asOf)) == Array(0..<(Self.large + 1)))
    }

    /// Where each frame of the record at `lsn` starts in a segment file.
    static func frameOffsets(of lsn: LSN, in path: String) throws -> [Int] {
        try frameHeaders(ofSegment: path).filter { $0.header.lsn == lsn }.map(\.offset)
    }

    @Test func aCrashInsideALargeSaveLeavesNoneOfIt() async throws {
        let directory = TemporaryDirectory()
        let original = directory.store("original")
        let store = try Store(at: original, model: try Self.model(), options: Self.options)
        try await Self.fill(store)
        try await store.close()
        let segment = try #require(try segmentFiles(original).last)
        let length = try contents(segment).count
        // Cut the batch insert's record of many frames at a few places inside it: the store
        // opens with the first two saves and none of the third.
        let headers = try Self.frameOffsets(of: LSN(4), in: segment)
        #expect(headers.count > 5, "\(headers.count) frames")
        let start = try #require(headers.first)
        for cut in [start + 1, headers[2], headers[2] + 100, headers[headers.count - 1], length - 1] {
            let path = directory.store("cut")
            try copyDirectory(original, to: path)
            truncateFile(try #require(try segmentFiles(path).last), to: cut)
            let reopened = try Store(at: path, model: try Self.model(), options: Self.options)
            #expect(reopened.lastSaveLSN == LSN(3), "cut at \(cut)")
            #expect(reopened.recoveryReport?.tornTail?.offset == UInt64(start), "cut at \(cut)")
            #expect(try Self.items(reopened) == Array(0..<(Self.large + 1)), "cut at \(cut)")
            try await reopened.close()
        }
    }
}
