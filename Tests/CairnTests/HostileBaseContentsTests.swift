import CairnLog
import CairnTestSupport
import Foundation
import Testing

@testable import Cairn

/// Bases whose blocks are sound (valid checksums) but whose entries lie: a row that does not
/// fit its entity, headers out of range, a summary that miscounts. Opening refuses each with
/// `corruptRecord` naming the base file and the block, never a trap or a large allocation.
@Suite struct HostileBaseContentsTests {
    static func model() throws -> Model {
        try Model {
            Entity("Item") {
                Attribute("name", .string, optional: false)
                Attribute("count", .integer16)
                Unique("name")
            }
        }
    }

    /// A compacted store of 600 items (three chunks of 255, 256 and 89: keys start at 1), its
    /// base's entries, and the directory.
    static func compactedStore(_ directory: TemporaryDirectory) async throws -> (path: String, entries: [[UInt8]]) {
        let path = directory.store()
        let store = try Store(at: path, model: try model(), options: CompactionTests.manual())
        try await store.batchInsert(
            "Item", columns: ["name", "count"], rows: (0..<600).map { [.string("item \($0)"), .integer(Int64($0 % 100))] })
        try await store.compact()
        try await store.close()
        var entries: [[UInt8]] = []
        let log = try Log.open(at: path, options: LogOptions(), base: { reader in try reader.forEachEntry { bytes, _ in entries.append(Array(bytes)) } })
        try await log.close()
        return (path, entries)
    }

    /// Replaces the store's base with one holding `entries` (written by the log's own writer,
    /// so every block's checksum is valid).
    static func rewriteBase(_ path: String, entries: [[UInt8]]) async throws {
        let log = try Log.open(at: path, options: LogOptions(), base: { _ in })
        let writer = try log.makeBaseWriter(lastLSN: log.lastLSN, level: .fast)
        for entry in entries { try writer.append(entry) }
        try log.installBase(try writer.finish())
        try await log.close()
    }

    /// The index of the `nth` objects entry among a base's entries (0: the first).
    static func objects(_ entries: [[UInt8]], _ nth: Int = 0) -> Int {
        entries.indices.filter { entries[$0].first == BaseContents.objectsKind }[nth]
    }

    /// The offset in an objects entry of a field of object `index`'s header: 0 its slot, 1 its
    /// entity, 5 its number of values, 9 its row's length.
    static func header(_ index: Int, _ field: Int) -> Int { 12 + index * BaseContents.objectHeaderSize + field }

    /// The offset of the first row of object `index` in an objects entry of `count` objects.
    static func rowStart(_ entry: [UInt8], object index: Int) -> Int {
        let count = Int(entry[10]) | Int(entry[11]) << 8
        var offset = 12 + count * BaseContents.objectHeaderSize
        for object in 0..<index {
            let length = header(object, 9)
            offset += Int(entry[length]) | Int(entry[length + 1]) << 8 | Int(entry[length + 2]) << 16 | Int(entry[length + 3]) << 24
        }
        return offset
    }

    /// Each lie, as a change to the base's entries (models first, then the objects entries,
    /// the summary last), and what the error says.
    static let lies: [(name: String, expected: String, change: @Sendable (inout [[UInt8]]) -> Void)] = [
        (
            "a value with an unknown tag", "chunk 0, object 4",
            { entries in
                let index = objects(entries)
                entries[index][rowStart(entries[index], object: 3)] = 0xEE
            }
        ),
        (
            "a string where an integer belongs", "chunk 1, object 0",
            { entries in
                let index = objects(entries, 1)
                // The second value (count) of object 0 of chunk 1 becomes the first (a string).
                let start = rowStart(entries[index], object: 0)
                let nameLength = Int(entries[index][start + 1]) + 2
                entries[index][start + nameLength] = entries[index][start]
            }
        ),
        (
            "a row in the last chunk (not full) that is cut short", "chunk 2",
            { entries in
                let index = objects(entries, 2)
                let start = rowStart(entries[index], object: 0)
                entries[index][start + 1] = 0x7F  // a name longer than the row
            }
        ),
        (
            "an object of no entity of the model", "of no entity of the model",
            { entries in
                let index = objects(entries)
                entries[index][header(0, 1)] = 9
            }
        ),
        (
            "a row claiming four gigabytes", "does not fit its entity",
            { entries in
                let index = objects(entries)
                for byte in 0..<4 { entries[index][header(0, 9) + byte] = 0xFF }
            }
        ),
        (
            "the wrong number of values", "does not fit its entity",
            { entries in
                let index = objects(entries)
                entries[index][header(0, 5)] = 7
            }
        ),
        (
            "objects out of order", "out of order",
            { entries in
                let index = objects(entries)
                entries[index][header(1, 0)] = entries[index][header(0, 0)]
            }
        ),
        (
            "a summary that miscounts", "the summary counts",
            { entries in entries[entries.count - 1][10] &+= 1 }
        ),
        (
            "the same chunk twice", "chunk 0 out of order",
            { entries in
                let index = objects(entries)
                entries.insert(entries[index], at: index + 1)
            }
        )
    ]

    @Test(arguments: 0..<lies.count)
    func aBaseThatLiesIsRefusedNamingItsFileAndBlock(lie: Int) async throws {
        let directory = TemporaryDirectory()
        var (path, entries) = try await Self.compactedStore(directory)
        #expect(entries.filter { $0.first == BaseContents.objectsKind }.count == 3)
        let (name, expected, change) = Self.lies[lie]
        change(&entries)
        try await Self.rewriteBase(path, entries: entries)
        let error = try #require(throws: StoreError.self, "\(name)") { try Store(at: path, model: try Self.model()) }
        #expect(error.code == .corruptRecord, "\(name): \(error)")
        #expect(error.message.contains(".base") && error.message.contains("block at offset"), "\(name): \(error.message)")
        #expect(error.message.contains(expected), "\(name): \(error.message)")
    }
}
