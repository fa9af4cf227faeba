import CairnLog
import CairnSupport
import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// Change records whose inserts are in parts (version 2, or version 3 with its header's flag) (docs/FORMAT.md, "Change records",
/// "Version 2"): written for large saves, read back whole (a save's own read-back) and part by
/// part (replay), to the same snapshot; a damaged part table is refused, never trusted.
@Suite struct ChangeRecordPartsTests {
    static let threshold = 2 * Tuning.recordPartInserts

    /// A save of `count` new authors (every fourth with no birth year), an update and a delete.
    static func changes(_ model: Model, inserts count: Int) throws -> ChangeSet {
        let author = try #require(model.entity(named: "Author"))
        let book = try #require(model.entity(named: "Book"))
        var changes = ChangeSet()
        changes.inserts = (0..<count).map { number in
            let born: Value = number % 4 == 0 ? .null : .integer(Int64(1700 + number % 300))
            let values: [PropertyValue] = [
                .attribute(.string("author \(number) — ✍️")), .attribute(born), .attribute(.double(Double(number) / 3)), .toMany([])
            ]
            return ChangeSet.Insert(id: ObjectID(entity: author.index, key: UInt64(number + 1)), values: values)
        }
        changes.updates = [
            ChangeSet.Update(id: ObjectID(entity: book.index, key: 900_000), changes: [PropertyChange(position: 1, value: .attribute(.string("Emma")))])
        ]
        changes.deletes = [ObjectID(entity: book.index, key: 900_001)]
        return changes
    }

    /// Every row of `rows`' inserts, decoded, in order.
    static func values(_ rows: RowChangeSet) -> [[PropertyValue]] { rows.inserts.map { rows.row($0).values } }

    @Test(arguments: [threshold - 1, threshold, threshold + 1, 5 * Tuning.recordPartInserts + 17])
    func aLargeSaveIsWrittenInPartsAndReadsBackWholeAndPartByPart(inserts count: Int) throws {
        let model = try libraryModel()
        let changes = try Self.changes(model, inserts: count)
        let bytes = StoreRecord.changes(changes, .testing).encoded()
        #expect(bytes[1] == StoreRecord.version, "record version")
        #expect(try StoreRecord.changeRecordBody(bytes, lsn: LSN(2)).inParts == (count >= Self.threshold), "the header's layout flag")
        guard case .changes(let whole) = try StoreRecord.decode(bytes, lsn: LSN(2), model: model) else {
            Issue.record("not read whole")
            return
        }
        #expect(whole.inserts.map(\.id) == changes.inserts.map(\.id))
        #expect(Self.values(whole) == changes.inserts.map(\.values))
        #expect(whole.updates.map(\.id) == changes.updates.map(\.id) && whole.deletes == changes.deletes)
        let decoded = try StoreRecord.decode(bytes, lsn: LSN(2), model: model, inParts: true)
        guard count >= Self.threshold else {
            guard case .changes = decoded else {
                Issue.record("a version-1 record read in parts")
                return
            }
            return
        }
        guard case .parts(let parts) = decoded else {
            Issue.record("not read in parts")
            return
        }
        #expect(parts.count == count / Tuning.recordPartInserts)
        var sets: [RowChangeSet] = []
        try parts.forEachSet { sets.append($0) }
        #expect(sets.count == parts.count + 1, "each part, then the updates and deletes")
        let sizes = sets.dropLast().map(\.inserts.count)
        #expect(sizes.reduce(0, +) == count && sizes.max()! - sizes.min()! <= 1)
        #expect(sets.flatMap { $0.inserts.map(\.id) } == changes.inserts.map(\.id))
        #expect(sets.flatMap(Self.values) == changes.inserts.map(\.values))
        #expect(sets.last?.updates.map(\.id) == changes.updates.map(\.id) && sets.last?.deletes == changes.deletes)
    }

    @Test func aBatchInsertRecordIsWrittenInPartsToo() throws {
        let model = try libraryModel()
        let changes = try Self.changes(model, inserts: Self.threshold + 3)
        let ids = changes.inserts.map(\.id)
        let bytes = StoreRecord.encodedInserts(ids, capacity: 1 << 20, updates: changes.updates, transaction: .testing) { index, writer in
            for value in changes.inserts[index].values { ValueEncoding.write(value, &writer) }
        }
        #expect(try StoreRecord.changeRecordBody(bytes, lsn: LSN(2)).inParts)
        #expect(bytes == StoreRecord.changes(ChangeSet(inserts: changes.inserts, updates: changes.updates), .testing).encoded())
    }

    // MARK: Damaged part tables

    /// A record in parts of `threshold` authors, and where its table's entries start.
    static func partedRecord() throws -> (bytes: [UInt8], table: Int, model: Model) {
        let model = try libraryModel()
        let bytes = StoreRecord.changes(try changes(model, inserts: threshold), .testing).encoded()
        let table = try bytes.withUnsafeBytes { raw in
            var reader = ByteReader(raw, offset: try StoreRecord.changeRecordBody(bytes, lsn: LSN(7)).start)
            _ = try reader.readVarint()
            #expect(try reader.readVarint() == 2)
            return reader.offset
        }
        return (bytes, table, model)
    }

    /// Reads `bytes` whole and in parts: returns the error of each, or nil when it decoded.
    static func errors(_ bytes: [UInt8], model: Model) -> (whole: (any Error)?, parts: (any Error)?) {
        var whole: (any Error)?
        var parts: (any Error)?
        do { _ = try StoreRecord.decode(bytes, lsn: LSN(7), model: model) } catch { whole = error }
        do {
            if case .parts(let record) = try StoreRecord.decode(bytes, lsn: LSN(7), model: model, inParts: true) { try record.forEachSet { _ in } }
        } catch {
            parts = error
        }
        return (whole, parts)
    }

    static func patch(_ bytes: inout [UInt8], _ value: UInt32, at offset: Int) {
        withUnsafeBytes(of: value.littleEndian) { bytes.replaceSubrange(offset..<(offset + 4), with: $0) }
    }

    static func entry(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        bytes[offset..<(offset + 4)].reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }

    @Test func aDamagedPartTableIsRefusedWithTheLSNAndThePart() throws {
        let (bytes, table, model) = try Self.partedRecord()
        let count1 = Self.entry(bytes, at: table), length1 = Self.entry(bytes, at: table + 4)
        let count2 = Self.entry(bytes, at: table + 8), length2 = Self.entry(bytes, at: table + 12)
        #expect(Int(count1 + count2) == Self.threshold)
        var forged: [(String, [UInt8], String)] = []
        func forge(_ what: String, expecting message: String, _ change: (inout [UInt8]) -> Void) {
            var copy = bytes
            change(&copy)
            forged.append((what, copy, message))
        }
        forge("a part past the record's end", expecting: "part 2 of 2") { Self.patch(&$0, UInt32.max, at: table + 12) }
        forge("the first part past the record's end", expecting: "ends past the record") { Self.patch(&$0, length1 + length2 + 1_000, at: table + 4) }
        forge("parts overlapping (the first a byte short)", expecting: "part 1 of 2") {
            Self.patch(&$0, length1 - 1, at: table + 4)
            Self.patch(&$0, length2 + 1, at: table + 12)
        }
        forge("parts overlapping (the first a byte long)", expecting: "part 1 of 2") {
            Self.patch(&$0, length1 + 1, at: table + 4)
            Self.patch(&$0, length2 - 1, at: table + 12)
        }
        forge("counts above the record's", expecting: "past the record's \(Self.threshold) inserts") { Self.patch(&$0, count2 + 1, at: table + 8) }
        forge("counts below the record's", expecting: "the parts hold \(Self.threshold - 1) inserts") { Self.patch(&$0, count2 - 1, at: table + 8) }
        forge("counts moved between parts", expecting: "bytes after its") {
            Self.patch(&$0, count1 - 1, at: table)
            Self.patch(&$0, count2 + 1, at: table + 8)
        }
        forge("a part of no insert", expecting: "holds no insert") { Self.patch(&$0, 0, at: table) }
        forge("more inserts than bytes", expecting: "more inserts than its bytes") { Self.patch(&$0, length1, at: table) }
        forge("no part", expecting: "has no part") { $0[table - 1] = 0 }
        forge("more parts than the table holds", expecting: "part 3 of 3") { $0[table - 1] = 3 }
        forge("a part count past the record", expecting: "truncated at byte \(table - 1)") {
            $0.replaceSubrange((table - 1)..<table, with: [0xFF, 0xFF, 0xFF, 0x7F])
        }
        for (what, copy, message) in forged {
            let (whole, parts) = Self.errors(copy, model: model)
            for error in [whole, parts] {
                let refused = try #require(error as? StoreError, "\(what): \(String(describing: error))")
                #expect(refused.code == .corruptRecord && refused.lsn == LSN(7), "\(what): \(refused)")
                #expect("\(refused)".contains("record at LSN 7") && "\(refused)".contains(message), "\(what): \(refused)")
            }
        }
    }

    @Test func aTruncatedOrFlippedPartedRecordNeverTraps() throws {
        let (bytes, table, model) = try Self.partedRecord()
        // Cut anywhere in the head, the table and the first rows, and at the end.
        for end in Array(2..<(table + 64)) + [bytes.count / 2, bytes.count - 1] {
            let (whole, parts) = Self.errors(Array(bytes[..<end]), model: model)
            #expect((whole as? StoreError)?.code == .corruptRecord, "cut at \(end)")
            #expect((parts as? StoreError)?.code == .corruptRecord, "cut at \(end)")
        }
        // Every bit of the head and the table flipped in turn: refused, or read the same both ways.
        for offset in 2..<(table + 16) {
            for bit in 0..<8 {
                var copy = bytes
                copy[offset] ^= 1 << bit
                let (whole, parts) = Self.errors(copy, model: model)
                #expect((whole == nil) == (parts == nil), "byte \(offset), bit \(bit): \(String(describing: whole)) / \(String(describing: parts))")
                for error in [whole, parts] where error != nil {
                    #expect((error as? StoreError)?.code == .corruptRecord, "byte \(offset), bit \(bit): \(String(describing: error))")
                }
            }
        }
    }

    @Test func aStoreWithADamagedPartTableIsRefusedNamingItsFile() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        let (bytes, table, model) = try Self.partedRecord()
        try await Store(at: path, model: model).close()
        var forged = bytes
        Self.patch(&forged, UInt32.max, at: table + 4)
        let log = try Log.open(at: path)
        let lsn = try await log.append(forged)
        try await log.close()
        let error = try #require(
            {
                do {
                    _ = try Store(at: path, model: model)
                    return nil
                } catch { return error }
            }() as (any Error)?)
        let refused = try #require(error as? StoreError, "\(error)")
        #expect(refused.code == .corruptRecord && refused.lsn == lsn && refused.file != nil, "\(refused)")
        #expect("\(refused)".contains("part 1 of 2"), "\(refused)")
    }

    // MARK: Replay

    static var readOnly: LogOptions {
        var options = LogOptions()
        options.readOnly = true
        return options
    }

    /// The snapshot of the store at `path` replayed on this thread alone, each record decoded whole
    /// and applied at once.
    static func oneThreadSnapshot(_ path: String) throws -> StoreSnapshot {
        var snapshot: StoreSnapshot?
        var model: Model?
        let log = try Log.open(
            at: path, options: readOnly,
            replay: { record in
                switch try StoreRecord.decode(record.payload, lsn: record.lsn, model: model) {
                case .model(let recorded):
                    model = recorded
                    snapshot = StoreSnapshot(model: recorded)
                    snapshot?.advance(to: record.lsn)
                case .changes(let rows): _ = try snapshot?.apply(rows, at: record.lsn)
                case .migration, .parts: Issue.record("record \(record.lsn) read otherwise")
                }
            })
        try log.closeNow()
        return try #require(snapshot)
    }

    /// Whether two snapshots hold the same objects (values and versions), keys and indexes.
    static func expectSame(_ a: StoreSnapshot, _ b: StoreSnapshot) throws {
        #expect(a.lsn == b.lsn && a.nextKey == b.nextKey && a.model == b.model)
        for entity in a.model.descriptions.indices {
            let ids = a.ids(entity: entity, includingSubentities: false)
            #expect(ids == b.ids(entity: entity, includingSubentities: false), "entity \(entity)")
            for id in ids {
                let (x, y) = (a.record(id), b.record(id))
                #expect(x?.values == y?.values && x?.version == y?.version, "\(id)")
            }
        }
        #expect(a.indexes.map(\.ordered.count) == b.indexes.map(\.ordered.count))
        try a.checkInvariants()
        try b.checkInvariants()
    }

    @Test func aStoreOfLargeSavesReplaysAsItsRecordsReadWhole() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        let model = try libraryModel()
        let store = try Store(at: path, model: model)
        // A batch insert in parts; then a save in parts of books linked to some of those
        // authors (inserts, and updates of the authors' books), with a delete; then a small save.
        let authors = try await store.batchInsert(
            "Author", columns: ["name", "born"], rows: (0..<(Self.threshold + 100)).map { [.string("A\($0)"), .integer(Int64(1800 + $0 % 200))] })
        let context = store.newBackgroundContext(name: "books")
        let linked = try (0..<5).map { try #require(context.object(with: authors[$0 * 7])) }
        for number in 0..<(Self.threshold + 2_000) {
            let book = try context.insert("Book")
            try book.setValue(.string("B\(number)"), forKey: "code")
            try book.setValue(.string("Title \(number)"), forKey: "title")
            try book.setValue(.integer(Int64(number % 2_000)), forKey: "year")
            if number % 3 == 0 { try book.setObject(linked[number % 5], forKey: "author") }
        }
        try #require(context.object(with: authors[1])).delete()
        try await context.save()
        try #require(context.object(with: authors[2])).setValue(.string("Renamed"), forKey: "name")
        try await context.save()
        try await store.close()

        let recordVersions = try readAll(path).map { $0.payload[1] }
        #expect(recordVersions == [1, 3, 3, 3], "model, batch insert, large save, small save")
        let opened = try Store.replay(directory: path, model: model, logOptions: Self.readOnly, through: nil)
        try opened.log.closeNow()
        try Self.expectSame(opened.snapshot, try Self.oneThreadSnapshot(path))
        #expect(opened.snapshot.count(entity: try #require(model.entity(named: "Book")).index) == Self.threshold + 2_000)
    }

    /// Versions are counted per kind: a model or migration record of version 2 is one a newer
    /// Cairn may write, refused as newer, not as damage.
    @Test func aModelRecordOfVersionTwoIsRefusedAsNewer() throws {
        let model = try libraryModel()
        var bytes = StoreRecord.model(model).encoded()
        bytes[1] = 2
        #expect {
            _ = try StoreRecord.decode(bytes, lsn: LSN(3), model: nil)
        } throws: { error in
            (error as? StoreError)?.code == .unsupportedFormat && "\(error)".contains("newer")
        }
    }
}
