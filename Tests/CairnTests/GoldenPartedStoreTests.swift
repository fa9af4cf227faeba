import CairnLog
import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// Cairn stores holding change records in parts, kept in `Fixtures/Stores`, with the expected
/// contents of their stations and of every 97th object in `store-v2.expected.txt`: every later
/// build must open them and read exactly those objects, and every reading as the generator made
/// it (docs/FORMAT.md, "Compatibility").
///
/// Four saves, written by the same generator: a small one, a context's save of 8,300 readings
/// linked to the stations with a delete (parts, then updates and a delete), a batch insert of
/// 8,200 readings (parts, from the batch path) and a small change.
/// - `store-v2`, written by the build of record version 2: versions 1, 2, 2, 1.
/// - `store-v3`, written by the build of record version 3: each save a version-3 record, with
///   its transaction header (time, author, context name, the deleted readings' tombstones)
///   listed in `store-v3.transactions.txt`.
///
/// Regenerate only when a format version changes, next to the old ones:
/// `CAIRN_WRITE_FIXTURES=1 swift test --filter writeStoreVersion3Fixture` (renamed for the next version).
@Suite struct GoldenPartedStoreTests {
    /// One fixture: its store, its expected dump (the generator makes the same objects in each:
    /// one file), and the versions of its records.
    struct Fixture: Sendable, CustomTestStringConvertible {
        var name: String
        var recordVersions: [UInt8]
        var store: String { GoldenGraphStoreTests.fixtures.appendingPathComponent(name).path }
        var expected: String { GoldenGraphStoreTests.fixtures.appendingPathComponent("store-v2.expected.txt").path }
        /// The transaction headers of its change records, one a line (version 3 on).
        var transactions: String { GoldenGraphStoreTests.fixtures.appendingPathComponent(name + ".transactions.txt").path }
        var testDescription: String { name }
    }

    static let fixtures = [
        Fixture(name: "store-v2", recordVersions: [1, 1, 2, 2, 1]),
        Fixture(name: "store-v3", recordVersions: [1, 3, 3, 3, 3])
    ]
    /// The fixture the generator writes.
    static let newest = fixtures[1]

    static func model() throws -> Model {
        try Model {
            Entity("Station") {
                Attribute("name", .string, optional: false)
                Relationship("readings", to: "Reading", inverse: "station", .toMany(ordered: false))
                Unique("name")
            }
            Entity("Reading") {
                Attribute("code", .string, optional: false)
                Attribute("n", .integer64, indexed: true)
                Attribute("value", .double)
                Attribute("taken", .date)
                Relationship("station", to: "Station", inverse: "readings")
                Unique("code")
            }
        }
    }

    /// Readings `0 ..< small` come with the first save, `small ..< linked` with the second (both
    /// with a station), `linked ..< all` with the batch insert (none).
    static let small = 10, linked = 8_310, all = 16_510
    /// Deleted by the second save and by the last.
    static let deleted: Set<Int> = [3, 8_400]
    /// Changed by the last save.
    static let renamed = 5

    /// Reading `index`'s values as the generator sets them (the last save doubles `renamed`'s value).
    static func values(_ index: Int) -> (n: Int64, value: Double, taken: Date) {
        (Int64(index) * 7 - 1_000, Double(index) / 8 * (index == renamed ? 2 : 1), Date(timeIntervalSinceReferenceDate: Double(index) * 60))
    }

    static func set(_ reading: ManagedObject, _ index: Int) throws {
        let (n, value, taken) = values(index)
        try reading.setValue(.string("R-\(index)"), forKey: "code")
        try reading.setValue(.integer(n), forKey: "n")
        try reading.setValue(.double(index == renamed ? value / 2 : value), forKey: "value")
        try reading.setValue(.date(taken), forKey: "taken")
    }

    @Test(.enabled(if: ProcessInfo.processInfo.environment["CAIRN_WRITE_FIXTURES"] == "1"))
    func writeStoreVersion3Fixture() async throws {
        let path = Self.newest.store
        try? FileManager.default.removeItem(atPath: path)
        var options = StoreOptions()
        options.segmentSize = 4096
        options.durability = .none
        let store = try Store(at: path, model: try Self.model(), options: options)
        let context = store.newBackgroundContext(name: "golden v3")
        context.transactionAuthor = "generator ✍️"
        let stations = try (0..<3).map { number in
            let station = try context.insert("Station")
            try station.setValue(.string("Station \(number)"), forKey: "name")
            return station
        }
        var readings: [Int: ManagedObject] = [:]
        func insert(_ range: Range<Int>) throws {
            for index in range {
                let reading = try context.insert("Reading")
                try Self.set(reading, index)
                try reading.setObject(stations[index % 3], forKey: "station")
                readings[index] = reading
            }
        }
        try insert(0..<Self.small)
        try await context.save()
        try insert(Self.small..<Self.linked)
        try readings[3]?.delete()
        try await context.save()
        let rows: [[Value]] = (Self.linked..<Self.all).map { index in
            let (n, value, taken) = Self.values(index)
            return [.string("R-\(index)"), .integer(n), .double(value), .date(taken)]
        }
        _ = try await store.batchInsert("Reading", columns: ["code", "n", "value", "taken"], rows: rows)
        // A context made after the batch insert sees its objects.
        let last = store.newBackgroundContext(name: "golden v3, last save")
        try #require(try last.fetchFirst(FetchRequest("Reading", predicate: .equal("code", "R-\(Self.renamed)"))))
            .setValue(.double(Self.values(Self.renamed).value), forKey: "value")
        try #require(try last.fetchFirst(FetchRequest("Reading", predicate: .equal("code", "R-8400")))).delete()
        try await last.save()
        try await store.close()
        try FileManager.default.removeItem(atPath: path + "/LOCK")

        var readOnly = StoreOptions()
        readOnly.readOnly = true
        let reader = try Store(at: path, model: try Self.model(), options: readOnly)
        #expect(try Self.sampledDump(reader) == String(contentsOfFile: Self.newest.expected, encoding: .utf8), "the objects of every fixture")
        try await reader.close()
        try? FileManager.default.removeItem(atPath: path + "/READERS")
        try Data(try Self.transactionLines(path).utf8).write(to: URL(fileURLWithPath: Self.newest.transactions))
    }

    /// Each change record's transaction header, a line each: LSN, whether its inserts are in
    /// parts, time in microseconds, author and context name (`-`: none).
    static func transactionLines(_ path: String) throws -> String {
        var lines: [String] = []
        for record in try readAll(path) where record.payload.first == StoreRecord.changesKind {
            let body = try StoreRecord.changeRecordBody(record.payload, lsn: record.lsn, model: try model())
            let header = try #require(body.transaction, "LSN \(record.lsn) has no transaction header")
            let tombstones = header.tombstones.sorted { $0.key < $1.key }.map { id, values in
                "\(id)" + values.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
            }
            lines.append(
                "\(record.lsn.rawValue) parts=\(body.inParts) time=\(header.microseconds) author=\(header.author ?? "-") context=\(header.contextName ?? "-")"
                    + " tombstones=[\(tombstones.joined(separator: ", "))]")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The canonical dump (``GoldenGraphStoreTests/dump(_:)``) of every station and of every
    /// reading whose key is a multiple of 97.
    static func sampledDump(_ store: Store) throws -> String {
        var kept: [Substring] = []
        var keeping = false
        for line in try GoldenGraphStoreTests.dump(store).split(separator: "\n") {
            if !line.hasPrefix(" ") {
                keeping = line.hasPrefix("Station#") || (UInt64(line.split(separator: "#").last ?? "") ?? 1) % 97 == 0
            }
            if keeping { kept.append(line) }
        }
        return kept.joined(separator: "\n") + "\n"
    }

    /// Checks every reading against the generator's values, and the record versions.
    static func expectEveryReading(_ store: Store) throws {
        let context = store.newBackgroundContext(name: "check")
        var seen = Set<Int>()
        for reading in try context.fetch(FetchRequest("Reading")) {
            let code = try reading.value(forKey: "code", as: String.self)
            let index = try #require(Int(code.dropFirst(2)), "\(code)")
            seen.insert(index)
            let (n, value, taken) = values(index)
            #expect(try reading.value(forKey: "n", as: Value.self) == .integer(n), "\(code)")
            #expect(try reading.value(forKey: "value", as: Value.self) == .double(value), "\(code)")
            #expect(try reading.value(forKey: "taken", as: Value.self) == .date(taken), "\(code)")
            let station = try reading.object(forKey: "station")?.value(forKey: "name", as: String.self)
            #expect(station == (index < linked ? "Station \(index % 3)" : nil), "\(code)")
        }
        #expect(seen == Set(0..<all).subtracting(deleted))
    }

    @Test(arguments: fixtures)
    func aStoreOfRecordsInPartsOpensWithItsObjectsAndTakesChanges(_ fixture: Fixture) async throws {
        try #require(FileManager.default.fileExists(atPath: fixture.store + "/MANIFEST"), "fixture missing: \(fixture.store)")
        let directory = TemporaryDirectory()
        let copy = directory.store()
        try FileManager.default.copyItem(atPath: fixture.store, toPath: copy)
        #expect(try readAll(copy).map { $0.payload[1] } == fixture.recordVersions, "model, small save, large save, batch insert, small save")
        if fixture.recordVersions.contains(3) {
            #expect(try Self.transactionLines(copy) == String(contentsOfFile: fixture.transactions, encoding: .utf8))
        }

        let model = try Self.model()
        let store = try Store(at: copy, model: model)
        #expect(try Self.sampledDump(store) == String(contentsOfFile: fixture.expected, encoding: .utf8))
        try Self.expectEveryReading(store)

        // A change saved and read back after a reopen.
        let context = store.newBackgroundContext(name: "change")
        let station = try context.insert("Station")
        try station.setValue(.string("Station 3"), forKey: "name")
        let reading = try #require(try context.fetchFirst(FetchRequest("Reading", predicate: .equal("code", "R-9000"))))
        try reading.setObject(station, forKey: "station")
        try await context.save()
        try await store.close()
        let reopened = try Store(at: copy, model: model)
        let view = reopened.newBackgroundContext(name: "check")
        let moved = try #require(try view.fetchFirst(FetchRequest("Reading", predicate: .equal("code", "R-9000"))))
        #expect(try moved.object(forKey: "station")?.value(forKey: "name", as: String.self) == "Station 3")
        #expect(try view.count(FetchRequest("Reading")) == Self.all - Self.deleted.count)
        try await reopened.close()
    }
}
