import CairnLog
import CairnSupport
import Foundation
import Testing
@testable import Cairn

/// Tombstone sections a writer never makes, each refused as a damaged record naming what is
/// wrong and the byte of the record where it is; and the ones it does make (an inherited
/// constraint's) read back.
@Suite struct ForgedTombstoneTests {
    /// A change record with no changes whose transaction header holds `section` as its tombstones.
    static func record(section: [UInt8]) -> [UInt8] {
        var writer = ByteWriter(capacity: 64)
        writer.write(StoreRecord.changesKind)
        writer.write(StoreRecord.version)
        writer.write(0 as UInt8)
        writer.writeSignedVarint(1)
        writer.writeLengthPrefixed(utf8: "")
        writer.writeLengthPrefixed(utf8: "")
        writer.writeLengthPrefixed(section)
        ChangeSetCodec.encode(ChangeSet(), into: &writer)
        return writer.bytes
    }

    /// A section of `count` tombstones written by `body`.
    static func section(count: UInt64, _ body: (inout ByteWriter) -> Void) -> [UInt8] {
        var writer = ByteWriter(capacity: 64)
        writer.writeVarint(count)
        body(&writer)
        return writer.bytes
    }

    /// One tombstone: `id`, then `values` as (position, value).
    static func tombstone(_ id: ObjectID, _ values: [(UInt64, Value)], into writer: inout ByteWriter) {
        ValueEncoding.writeID(id, &writer)
        writer.writeVarint(UInt64(values.count))
        for (position, value) in values {
            writer.writeVarint(position)
            ValueEncoding.write(value, &writer)
        }
    }

    static let model = Result { try libraryModel() }

    static func id(_ entity: String, _ key: UInt64 = 7) throws -> ObjectID {
        ObjectID(entity: try #require(try model.get().entity(named: entity)).index, key: key)
    }

    static func position(_ entity: String, _ attribute: String) throws -> UInt64 {
        UInt64(try #require(try model.get().entity(named: entity)?.attributePosition(attribute)))
    }

    /// Each forged section, with words its error must contain.
    static func forgeries() throws -> [(String, [UInt8], String)] {
        let author = try id("Author")
        let name = try position("Author", "name")
        return [
            ("a count larger than the bytes", section(count: 1_000_000) { _ in }, "run past"),
            (
                "a value of another kind", section(count: 1) { tombstone(author, [(name, .integer(3))], into: &$0) },
                "Author.name holds a value of the wrong kind"
            ),
            (
                "two tombstones of one object",
                section(count: 2) {
                    tombstone(author, [(name, .string("a"))], into: &$0)
                    tombstone(author, [(name, .string("a"))], into: &$0)
                }, "two tombstones"
            ),
            (
                "bytes after the last",
                section(count: 1) {
                    tombstone(author, [(name, .string("a"))], into: &$0); $0.write(0 as UInt8)
                },
                "bytes after the last tombstone"
            ),
            (
                "an entity outside the model",
                section(count: 1) { tombstone(ObjectID(entity: 99, key: 1), [], into: &$0) }, "not in the model"
            ),
            ("an abstract entity", section(count: 1) { tombstone(try! id("Item"), [], into: &$0) }, "abstract"),
            ("an entity without constraints", section(count: 1) { tombstone(try! id("Loan"), [], into: &$0) }, "no uniqueness constraint"),
            ("key 0", section(count: 1) { tombstone(try! id("Author", 0), [], into: &$0) }, "out of range"),
            ("a key past the limit", section(count: 1) { tombstone(try! id("Author", UInt64.max >> 1), [], into: &$0) }, "out of range"),
            (
                "a position past the attributes",
                section(count: 1) { tombstone(author, [(50, .string("a"))], into: &$0) }, "position 50, not a constrained attribute"
            ),
            (
                "a position that is no constraint's",
                section(count: 1) { tombstone(author, [(try! position("Author", "born"), .integer(1))], into: &$0) }, "not a constrained attribute"
            )
        ]
    }

    @Test func everyForgedSectionIsRefusedNamingWhatAndWhere() throws {
        let model = try Self.model.get()
        for (what, section, words) in try Self.forgeries() {
            let bytes = Self.record(section: section)
            #expect(throws: StoreError.self, "\(what)") { try StoreRecord.decode(bytes, lsn: LSN(9), model: model) }
            do {
                _ = try StoreRecord.decode(bytes, lsn: LSN(9), model: model)
            } catch let error as StoreError {
                #expect(error.code == .corruptRecord && error.lsn == LSN(9), "\(what): \(error)")
                #expect(error.message.contains(words) && error.message.contains("byte "), "\(what): \(error.message)")
            }
            // Without a model the section is skipped, not read.
            #expect(throws: Never.self, "\(what)") { try StoreRecord.changeRecordBody(bytes, lsn: LSN(9)) }
        }
    }

    @Test func aSubEntitysTombstoneHoldsItsInheritedConstraint() throws {
        let model = try Self.model.get()
        let book = try Self.id("Book")
        let code = try Self.position("Book", "code")
        let bytes = Self.record(section: Self.section(count: 1) { Self.tombstone(book, [(code, .string("B-1"))], into: &$0) })
        let body = try StoreRecord.changeRecordBody(bytes, lsn: LSN(9), model: model)
        #expect(body.transaction?.tombstones == [book: [Int(code): .string("B-1")]])
    }
}
