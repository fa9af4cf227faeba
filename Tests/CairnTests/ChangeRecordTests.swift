import CairnLog
import Foundation
import Testing
@testable import Cairn

/// A change record reads back as the change set it was made from, whatever its size (a large
/// one is encoded on two cores, its second half appended to the first).
@Suite struct ChangeRecordTests {
    @Test(arguments: [0, 1, ChangeSetCodec.concurrentInserts - 1, ChangeSetCodec.concurrentInserts, 9_999])
    func aRecordReadsBackAsItsChangeSet(inserts count: Int) throws {
        let model = try libraryModel()
        let author = try #require(model.entity(named: "Author"))
        let book = try #require(model.entity(named: "Book"))
        var changes = ChangeSet()
        changes.inserts = (0..<count).map { number in
            let born: Value = number % 7 == 0 ? .null : .integer(Int64(1700 + number % 300))
            return ChangeSet.Insert(
                id: ObjectID(entity: author.index, key: UInt64(number + 1)),
                values: [
                    .attribute(.string("author \(number) — ✍️")), .attribute(born),
                    .attribute(.double(Double(number) / 3)), .toMany([])
                ])
        }
        changes.updates = [
            ChangeSet.Update(
                id: ObjectID(entity: book.index, key: 20_000),
                changes: [PropertyChange(position: 1, value: .attribute(.string("Emma")))])
        ]
        changes.deletes = [ObjectID(entity: book.index, key: 20_001)]
        let bytes = StoreRecord.changes(changes, .testing).encoded()
        guard case .changes(let rows) = try StoreRecord.decode(bytes, lsn: LSN(2), model: model) else {
            Issue.record("not a change record")
            return
        }
        #expect(rows.inserts.map(\.id) == changes.inserts.map(\.id))
        for (insert, expected) in zip(rows.inserts, changes.inserts) where insert.id.key % 97 == 1 || insert.id.key == UInt64(count) {
            #expect(rows.row(insert).values == expected.values, "object \(insert.id)")
        }
        #expect(rows.updates.map(\.id) == [ObjectID(entity: book.index, key: 20_000)])
        #expect(rows.deletes == changes.deletes)
    }
}
