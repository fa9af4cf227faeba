import CairnLog
import CairnSupport
import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// Change records that are damaged or forged (valid frames, hostile contents) must make opening
/// fail with a typed error naming the LSN — never trap, never allocate without bound.
@Suite struct HostileRecordTests {
    /// A store holding the library model (or `model`), then `payload` appended as a raw log frame.
    func open(after payload: [UInt8], model: Model? = nil) async throws -> (any Error)? {
        let folder = TemporaryDirectory()
        let model = try model ?? libraryModel()
        let store = try Store(at: folder.store(), model: model)
        if model.entity(named: "Author") != nil {
            try store.viewContext.make("Author", ["name": "Existing"])
            try await store.viewContext.save()
        }
        try await store.close()
        let log = try Log.open(at: folder.store())
        try await log.append(payload)
        try await log.close()
        do {
            let reopened = try Store(at: folder.store(), model: model)
            try await reopened.close()
            return nil
        } catch {
            return error
        }
    }

    /// A change record (kind 2, version 1) whose body `build` writes.
    func record(_ build: (inout ByteWriter) -> Void) -> [UInt8] {
        var writer = ByteWriter()
        writer.writeByte(2)
        writer.writeByte(1)
        build(&writer)
        return writer.bytes
    }

    @Test func forgedRecordsAreRefusedWithTheirLSN() async throws {
        let author = try #require(try libraryModel().entity(named: "Author")).index
        let cases: [(String, [UInt8])] = [
            ("empty", []),
            ("unknown kind", [9, 1]),
            ("newer version", [2, 7, 0, 0, 0]),
            ("huge insert count", record { $0.writeVarint(UInt64.max) }),
            (
                "entity out of range",
                record {
                    $0.writeVarint(1); $0.writeVarint(999); $0.writeVarint(5)
                }
            ),
            (
                "key zero",
                record { w in
                    w.writeVarint(1); w.writeVarint(UInt64(author)); w.writeVarint(0)
                    for _ in 0..<3 { w.writeByte(0) }; w.writeByte(14); w.writeVarint(0); w.writeVarint(0); w.writeVarint(0)
                }
            ),
            (
                "key at the maximum",
                record { w in
                    w.writeVarint(1); w.writeVarint(UInt64(author)); w.writeVarint(UInt64.max)
                    for _ in 0..<3 { w.writeByte(0) }; w.writeByte(14); w.writeVarint(0); w.writeVarint(0); w.writeVarint(0)
                }
            ),
            (
                "wrong value kind",
                record { w in
                    w.writeVarint(1); w.writeVarint(UInt64(author)); w.writeVarint(77)
                    w.writeByte(2); w.writeSignedVarint(5)
                }
            ),
            (
                "integer out of range",
                record { w in
                    w.writeVarint(1); w.writeVarint(UInt64(author)); w.writeVarint(77)
                    w.writeByte(1); w.writeLengthPrefixed(Array("x".utf8)); w.writeByte(2); w.writeSignedVarint(Int64.max)
                }
            ),
            (
                "string longer than the record",
                record { w in
                    w.writeVarint(1); w.writeVarint(UInt64(author)); w.writeVarint(77)
                    w.writeByte(1); w.writeVarint(1 << 40)
                }
            ),
            (
                "unknown tag",
                record { w in
                    w.writeVarint(1); w.writeVarint(UInt64(author)); w.writeVarint(77); w.writeByte(99)
                }
            ),
            (
                "update of a missing object",
                record { w in
                    w.writeVarint(0); w.writeVarint(1); w.writeVarint(UInt64(author))
                    w.writeVarint(12345); w.writeVarint(0); w.writeVarint(0)
                }
            ),
            (
                "trailing bytes",
                record { w in
                    w.writeVarint(0); w.writeVarint(0); w.writeVarint(0); w.writeByte(1)
                }
            )
        ]
        for (name, payload) in cases {
            let error = try await open(after: payload)
            let storeError = try #require(error as? StoreError, "\(name): \(String(describing: error))")
            #expect([.corruptRecord, .unsupportedFormat].contains(storeError.code), "\(name): \(storeError)")
            #expect(storeError.lsn != nil, "\(name): the error names the LSN")
        }
    }

    /// Each refusal docs/FORMAT.md §9 lists under "Decoding checks" and replay's checks.
    @Test func recordsBreakingTheDecodingRulesAreRefusedWithTheirLSN() async throws {
        let model = try libraryModel()
        func index(_ name: String) throws -> UInt64 { UInt64(try #require(model.entity(named: name)).index) }
        let (author, item, loan) = (try index("Author"), try index("Item"), try index("Loan"))
        /// An Author's values: name, born (null), rating (null), books (the given targets).
        func authorValues(_ w: inout ByteWriter, name: String, books: [(UInt64, UInt64)] = []) {
            w.writeByte(1); w.writeLengthPrefixed(Array(name.utf8))
            w.writeByte(0); w.writeByte(0)
            w.writeByte(14); w.writeVarint(UInt64(books.count))
            for (entity, key) in books { w.writeVarint(entity); w.writeVarint(key) }
        }
        let cases: [(String, [UInt8], String)] = [
            (
                "an abstract entity inserted",
                record { w in
                    w.writeVarint(1); w.writeVarint(item); w.writeVarint(500); w.writeByte(1); w.writeLengthPrefixed(Array("c".utf8))
                    w.writeVarint(0); w.writeVarint(0)
                }, "abstract"
            ),
            (
                "update positions out of order",
                record { w in
                    w.writeVarint(1); w.writeVarint(author); w.writeVarint(500); authorValues(&w, name: "A")
                    w.writeVarint(1); w.writeVarint(author); w.writeVarint(500); w.writeVarint(2)
                    w.writeVarint(2); w.writeByte(0); w.writeVarint(1); w.writeByte(0)
                    w.writeVarint(0)
                }, "order"
            ),
            (
                "a relationship to the wrong entity",
                record { w in
                    w.writeVarint(1); w.writeVarint(author); w.writeVarint(501); authorValues(&w, name: "B", books: [(loan, 7)])
                    w.writeVarint(0); w.writeVarint(0)
                }, "Loan"
            ),
            (
                "an object inserted twice",
                record { w in
                    w.writeVarint(2)
                    w.writeVarint(author); w.writeVarint(502); authorValues(&w, name: "C")
                    w.writeVarint(author); w.writeVarint(502); authorValues(&w, name: "D")
                    w.writeVarint(0); w.writeVarint(0)
                }, "502"
            ),
            (
                "a delete of a missing object",
                record { w in
                    w.writeVarint(0); w.writeVarint(0); w.writeVarint(1); w.writeVarint(author); w.writeVarint(12345)
                }, "12345"
            )
        ]
        for (name, payload, mention) in cases {
            let error = try await open(after: payload)
            let storeError = try #require(error as? StoreError, "\(name): \(String(describing: error))")
            #expect(storeError.code == .corruptRecord, "\(name): \(storeError)")
            #expect(storeError.lsn != nil, "\(name): the error names the LSN")
            #expect("\(storeError)".contains(mention), "\(name): \(storeError)")
        }

        let prices = try Model { Entity("Price") { Attribute("amount", .decimal) } }
        let malformed = record { w in
            w.writeVarint(1); w.writeVarint(0); w.writeVarint(9); w.writeByte(5); w.writeLengthPrefixed(Array("12.x.3".utf8))
            w.writeVarint(0); w.writeVarint(0)
        }
        let error = try await open(after: malformed, model: prices)
        #expect((error as? StoreError)?.code == .corruptRecord && (error as? StoreError)?.lsn != nil, "\(String(describing: error))")
        #expect("\(String(describing: error))".contains("decimal"), "\(String(describing: error))")
    }

    @Test func randomRecordsNeverTrap() async throws {
        var random = SeededRandom(seed: 42)
        for _ in 0..<150 {
            let length = Int(random.next() % 64)
            var payload: [UInt8] = [2, 1]
            for _ in 0..<length { payload.append(UInt8(truncatingIfNeeded: random.next())) }
            _ = try await open(after: payload)  // succeeds or throws; it must not crash
        }
    }
}
