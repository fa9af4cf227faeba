import CairnLog
import CairnSupport
import Foundation
import Testing
@testable import Cairn

/// The object table's chunks keep their rows in one buffer: rows held by an older snapshot or
/// a reader never change, garbage is compacted, long rows live apart.
@Suite struct ObjectTableTests {
    static func row(_ text: String) -> Row {
        var writer = ByteWriter(capacity: 64)
        ValueEncoding.write(Value.string(text), &writer)
        return writer.bytes.withUnsafeBytes { Row.make(count: 1, bytes: $0) }
    }

    static func text(_ record: ObjectRecord?) -> String? {
        guard case .attribute(.string(let text))? = record?.row.value(0) else { return nil }
        return text
    }

    /// The invariant behind value starts worked out ahead of a chunk (replay's decoding
    /// thread): a table that is not the one the chunk's rows make is caught, whether its starts
    /// differ or it was made for rows with another number of values.
    @Test func aTableOfValueStartsOtherThanTheRowsMakeIsCaught() throws {
        var table = ObjectTable(entityCount: 1)
        for key in 0..<UInt64(Tuning.objectChunkSize) {
            _ = table.insert(ObjectRecord(row: Self.row("value \(key)"), version: LSN(1), entity: 0), key: key)
        }
        let chunk = try #require(table.chunks[0])
        try chunk.checkValueStarts()  // the table the chunk made when it filled
        // Starts made for other rows: longer strings, so every row's length differs.
        let other = (0..<Tuning.objectChunkSize).map { Self.row("another, longer value \($0)") }
        let shifted = ValueStarts(slots: Tuning.objectChunkSize) { slot in other[slot].withBorrowed { ($0.bytes.bytes, 1) } }
        chunk.setValueStarts(shifted)
        #expect(throws: InvariantViolation.self) { try chunk.checkValueStarts() }
        // A table made for rows of two values: as many entries as the rows' values plus one.
        let twoValues = (0..<Tuning.objectChunkSize).map { slot -> Row in
            var writer = ByteWriter(capacity: 64)
            ValueEncoding.write(Value.string("value \(slot)"), &writer)
            ValueEncoding.write(Value.integer(Int64(slot)), &writer)
            return writer.bytes.withUnsafeBytes { Row.make(count: 2, bytes: $0) }
        }
        chunk.setValueStarts(ValueStarts(slots: Tuning.objectChunkSize) { slot in twoValues[slot].withBorrowed { ($0.bytes.bytes, 2) } })
        #expect(throws: InvariantViolation.self) { try chunk.checkValueStarts() }
    }

    @Test func rowsHeldElsewhereNeverChangeAndGarbageIsCompacted() {
        var table = ObjectTable(entityCount: 1)
        for key in 1...200 as ClosedRange<UInt64> {
            let inserted = table.insert(ObjectRecord(row: Self.row("v0-\(key)"), version: LSN(1), entity: 0), key: key)
            #expect(inserted)
        }
        let older = table  // a published snapshot's table
        let held = table.record(ObjectID(entity: 0, key: 7))  // a reader's row
        // Many rewrites of the same rows: garbage grows and is compacted, in the copy only.
        for round in 1...40 {
            for key in stride(from: 1 as UInt64, through: 200, by: 3) {
                table.replace(
                    ObjectRecord(row: Self.row("v\(round)-\(key)-" + String(repeating: "x", count: round)), version: LSN(UInt64(round + 1)), entity: 0),
                    key: key)
            }
        }
        #expect(Self.text(older.record(ObjectID(entity: 0, key: 7))) == "v0-7")
        #expect(Self.text(held) == "v0-7")
        #expect(Self.text(table.record(ObjectID(entity: 0, key: 7))) == "v40-7-" + String(repeating: "x", count: 40))
        #expect(Self.text(table.record(ObjectID(entity: 0, key: 8))) == "v0-8")
        for key in stride(from: 2 as UInt64, through: 200, by: 2) { _ = table.remove(ObjectID(entity: 0, key: key)) }
        #expect(table.counts[0] == 100 && older.counts[0] == 200)
        #expect(Self.text(table.record(ObjectID(entity: 0, key: 199))) == "v40-199-" + String(repeating: "x", count: 40))
        #expect(Self.text(table.record(ObjectID(entity: 0, key: 197))) == "v0-197")
        #expect(table.record(ObjectID(entity: 0, key: 2)) == nil && Self.text(older.record(ObjectID(entity: 0, key: 2))) == "v0-2")
    }

    /// A save that changes a few rows of every chunk (an update spread over the table) puts
    /// them in the chunk's small overflow buffer and leaves the shared buffer as it is, while
    /// under a quarter of the bytes are garbage, and compacts both into one buffer past that;
    /// every older table still reads its own values.
    @Test func spreadUpdatesOverSharedChunksKeepGarbageBoundedAndOlderTablesIntact() throws {
        var table = ObjectTable(entityCount: 1)
        let keys = 1...2_000 as ClosedRange<UInt64>
        for key in keys {
            let inserted = table.insert(ObjectRecord(row: Self.row("r0-\(key)"), version: LSN(1), entity: 0), key: key)
            #expect(inserted)
        }
        var older: [ObjectTable] = []
        var compactions = 0
        for round in 1...30 {
            older.append(table)  // published: every chunk is shared
            for key in stride(from: UInt64(round % 10 + 1), through: keys.upperBound, by: 10) {
                table.replace(ObjectRecord(row: Self.row("r\(round)-\(key)"), version: LSN(UInt64(round + 1)), entity: 0), key: key)
            }
            try table.checkInvariants()
            // A second row stored in the same round goes to the same overflow buffer (now this
            // table's alone), not to a copy of it.
            // (Compared by identity: a reference held here would make the buffer shared.)
            let overflowOfRound = table.chunks[0]?.overflow.map(ObjectIdentifier.init)
            table.replace(ObjectRecord(row: Self.row("r\(round)-3"), version: LSN(UInt64(round + 1)), entity: 0), key: 3)
            table.replace(ObjectRecord(row: Self.row("r\(round)-2"), version: LSN(UInt64(round + 1)), entity: 0), key: 2)
            if let overflowOfRound, table.chunks[0]?.overflow != nil {
                #expect(table.chunks[0]?.overflow.map(ObjectIdentifier.init) == overflowOfRound, "round \(round): the overflow buffer was copied again")
            }
            try table.checkInvariants()
            let before = try #require(older.last?.chunks[0]), after = try #require(table.chunks[0])
            if after.buffer === before.buffer {
                // The shared buffer is left alone: the replaced rows went to the overflow buffer.
                #expect(after.overflow != nil && after.overflow !== before.overflow, "round \(round)")
                #expect((after.overflow?.used ?? 0) < after.buffer.used, "round \(round)")
            } else {
                compactions += 1
                #expect(after.overflow == nil, "round \(round): compacted, yet an overflow buffer")
            }
        }
        // A tenth of the rows a round: a quarter of garbage takes a few rounds.
        #expect(compactions >= 3 && compactions <= 15, "\(compactions) compactions in 30 rounds")
        for number in 0...(keys.upperBound >> Tuning.objectChunkShift) {
            let chunk = try #require(table.chunks[number])
            let live = chunk.buffer.used + (chunk.overflow?.used ?? 0) - chunk.garbage
            // At most a quarter when the buffer was copied, plus the rows this round replaced.
            #expect(chunk.garbage <= live / 2, "chunk \(number): \(chunk.garbage) bytes of garbage beside \(live) live")
        }
        for (index, snapshot) in older.enumerated() {
            let round = index  // the table as it was before round `index + 1`
            try snapshot.checkInvariants()
            for key in [1, 10, 11, 1_999, 2_000] as [UInt64] {
                let last = (0...round).last { $0 > 0 && (key - 1) % 10 == UInt64($0 % 10) } ?? 0
                #expect(Self.text(snapshot.record(ObjectID(entity: 0, key: key))) == "r\(last)-\(key)")
            }
        }
        for key in [1, 10, 11, 1_999, 2_000] as [UInt64] {
            let last = (1...30).last { (key - 1) % 10 == UInt64($0 % 10) } ?? 0
            #expect(Self.text(table.record(ObjectID(entity: 0, key: key))) == "r\(last)-\(key)")
        }
        #expect(Self.text(table.record(ObjectID(entity: 0, key: 2))) == "r30-2")
    }

    /// A chunk filled one insert per save (each time shared with the snapshot before) keeps
    /// its new rows in the overflow buffer until it fills; then they are all in one buffer.
    @Test func aChunkFilledSaveBySaveEndsInOneBuffer() throws {
        var table = ObjectTable(entityCount: 1)
        var older: [ObjectTable] = []
        for key in 0..<UInt64(Tuning.objectChunkSize) {
            older.append(table)  // published
            let inserted = table.insert(ObjectRecord(row: Self.row("row \(key)"), version: LSN(key + 1), entity: 0), key: key)
            #expect(inserted)
            try table.checkInvariants()
        }
        let chunk = try #require(table.chunks[0])
        #expect(chunk.overflow == nil && chunk.garbage == 0 && chunk.live == Tuning.objectChunkSize)
        for key in 0..<UInt64(Tuning.objectChunkSize) {
            #expect(Self.text(table.record(ObjectID(entity: 0, key: key))) == "row \(key)")
        }
        #expect(Self.text(older[100].record(ObjectID(entity: 0, key: 99))) == "row 99")
        #expect(older[100].record(ObjectID(entity: 0, key: 100)) == nil)
    }

    @Test func longRowsLiveApart() {
        var table = ObjectTable(entityCount: 1)
        let long = String(repeating: "L", count: 2 << 20)
        let first = table.insert(ObjectRecord(row: Self.row(long), version: LSN(1), entity: 0), key: 1)
        let second = table.insert(ObjectRecord(row: Self.row("short"), version: LSN(1), entity: 0), key: 2)
        #expect(first && second)
        #expect(Self.text(table.record(ObjectID(entity: 0, key: 1))) == long)
        table.replace(ObjectRecord(row: Self.row("now short"), version: LSN(2), entity: 0), key: 1)
        #expect(Self.text(table.record(ObjectID(entity: 0, key: 1))) == "now short")
        #expect(Self.text(table.record(ObjectID(entity: 0, key: 2))) == "short")
        #expect(table.record(ObjectID(entity: 0, key: 1))?.version == LSN(2))
    }

    @Test func keysNearAndFarAreFoundAndCopiesStayApart() {
        var table = ObjectTable(entityCount: 2)
        // Keys in the first chunks, across leaves of the directory, and far past any counter.
        let keys: [UInt64] = [1, 2, 255, 256, 65_535, 65_536, 70_000, 1 << 28, (1 << 28) + 1, 1 << 40, UInt64.max >> 2]
        for (index, key) in keys.enumerated() {
            let inserted = table.insert(ObjectRecord(row: Self.row("k\(key)"), version: LSN(1), entity: index % 2), key: key)
            #expect(inserted)
        }
        let again = table.insert(ObjectRecord(row: Self.row("again"), version: LSN(1), entity: 0), key: 1 << 40)
        #expect(!again, "a taken key is refused")
        let older = table
        for (index, key) in keys.enumerated() {
            let id = ObjectID(entity: index % 2, key: key)
            #expect(Self.text(table.record(id)) == "k\(key)")
            #expect(table.record(ObjectID(entity: 1 - index % 2, key: key)) == nil, "another entity's ID is not found")
            let length = table.withRowBytes(id) { row in row.bytes.count }
            #expect(length == table.record(id)?.row.length)
        }
        #expect(table.ids([0, 1]).map(\.key) == keys, "listed in key order")
        for (index, key) in keys.enumerated() where key % 2 == 0 { _ = table.remove(ObjectID(entity: index % 2, key: key)) }
        table.replace(ObjectRecord(row: Self.row("new"), version: LSN(2), entity: 0), key: 1)
        #expect(table.ids([0, 1]).map(\.key) == keys.filter { $0 % 2 == 1 })
        #expect(older.ids([0, 1]).map(\.key) == keys, "the copy keeps every object")
        #expect(Self.text(older.record(ObjectID(entity: 0, key: 1))) == "k1" && Self.text(table.record(ObjectID(entity: 0, key: 1))) == "new")
        #expect(table.record(ObjectID(entity: 1, key: 1 << 40)) == nil && older.record(ObjectID(entity: 1, key: 1 << 40)) != nil)
    }

    /// Reads value 1 of every row of entity 0 as a scan sees it (with the chunk's value starts).
    struct SecondValues: RowVisitor {
        let filter: ScanFilter? = nil
        var texts: [UInt64: String] = [:]
        mutating func visit(_ id: ObjectID, _ row: BorrowedRow) {
            texts[id.key] = ValueEncoding.text(row.bytes.value(1)).map { String(decoding: $0, as: UTF8.self) } ?? "?"
        }
        mutating func takeResult() -> [UInt64: String] {
            defer { texts = [:] }
            return texts
        }
    }

    static func scanned(_ table: ObjectTable) -> [UInt64: String] {
        table.visit([0]) { SecondValues() }.reduce(into: [:]) { $0.merge($1) { first, _ in first } }
    }

    static func pair(_ first: String, _ second: String) -> Row {
        var writer = ByteWriter(capacity: 64)
        ValueEncoding.write(Value.string(first), &writer)
        ValueEncoding.write(Value.string(second), &writer)
        return writer.bytes.withUnsafeBytes { Row.make(count: 2, bytes: $0) }
    }

    @Test func scansSeeChangedRowsAfterTheirChunkWasScanned() {
        var table = ObjectTable(entityCount: 1)
        for key in 1...300 as ClosedRange<UInt64> {
            _ = table.insert(ObjectRecord(row: Self.pair("a\(key)", "b\(key)"), version: LSN(1), entity: 0), key: key)
        }
        #expect(Self.scanned(table)[7] == "b7")
        #expect(Self.scanned(table)[7] == "b7", "a second scan reads the kept starts")
        let older = table
        // A longer first value moves the second one: the kept starts must not be used for it.
        table.replace(ObjectRecord(row: Self.pair(String(repeating: "long", count: 10), "moved"), version: LSN(2), entity: 0), key: 7)
        _ = table.insert(ObjectRecord(row: Self.pair("new first", "new second"), version: LSN(2), entity: 0), key: 301)
        _ = table.remove(ObjectID(entity: 0, key: 8))
        let now = Self.scanned(table)
        #expect(now[7] == "moved" && now[301] == "new second" && now[8] == nil && now[9] == "b9")
        #expect(now.count == 300)
        let before = Self.scanned(older)
        #expect(before[7] == "b7" && before[8] == "b8" && before[301] == nil)
    }
}

extension ObjectTableTests {
    @Test func theChunkSizeIsThePowerOfTwoOfItsShift() {
        #expect(Tuning.objectChunkSize == 1 << Int(Tuning.objectChunkShift))
    }
}
