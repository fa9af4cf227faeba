import CairnTestSupport
import CairnLog
import Foundation
import Testing
@testable import Cairn

/// Rows are walked with pointer reads (``RowBytes``): every kind of value is found where the
/// codec wrote it, and damaged bytes never lead a read out of the row.
@Suite struct RowBytesTests {
    /// One encoded value of every kind, long and short strings, and relationship values.
    static let pieces: [[UInt8]] = {
        var values: [Value] = [
            .null, .string("short"), .string(String(repeating: "long ", count: 60)), .integer(-3),
            .integer(Int64.max), .double(2.5), .float(1.5), .decimal(Decimal(string: "12.34") ?? 0), .boolean(false),
            .boolean(true), .date(Date(timeIntervalSinceReferenceDate: 1234.5)), .binary([1, 2, 3]),
            .uuid(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))), .uri("https://example.com/a")
        ]
        values.append(.string(""))
        var pieces = values.map(ValueEncoding.encoded)
        pieces.append([ValueTag.noObject.rawValue])
        pieces.append([ValueTag.object.rawValue, 1, 0x80, 0x01])
        pieces.append([ValueTag.objects.rawValue, 2, 1, 5, 0, 0x90, 0x01])
        return pieces
    }()

    @Test func everyValueIsFoundWhereTheCodecWroteIt() {
        let bytes = Self.pieces.flatMap { $0 }
        bytes.withUnsafeBytes { raw in
            let row = RowBytes(bytes: raw, count: Self.pieces.count)
            for (position, piece) in Self.pieces.enumerated() {
                #expect(Array(row.value(position)) == piece, "value \(position)")
            }
            #expect(row.value(Self.pieces.count).isEmpty)
            #expect(row.value(-1).isEmpty)
        }
        // The stored decoding agrees with the pointer reads.
        #expect(ValueEncoding.encoded(.integer(-3)).withUnsafeBytes { ValueEncoding.integer($0) } == -3)
        #expect(ValueEncoding.encoded(.double(2.5)).withUnsafeBytes { ValueEncoding.number($0) } == 2.5)
        #expect(ValueEncoding.encoded(.string("é")).withUnsafeBytes { ValueEncoding.text($0).map { String(decoding: $0, as: UTF8.self) } } == "é")
    }

    @Test func aMemoGivesTheSameValuesInAnyOrder() {
        let bytes = Self.pieces.flatMap { $0 }
        let memo = RowMemo.allocate()
        defer { memo.deallocate() }
        var generator = TestSeed.generator()
        bytes.withUnsafeBytes { raw in
            for _ in 0..<200 {
                memo.reset()
                let row = RowBytes(bytes: raw, count: Self.pieces.count, memo: memo)
                for _ in 0..<8 {
                    let position = Int.random(in: -1...Self.pieces.count, using: &generator)
                    let expected = Self.pieces.indices.contains(position) ? Self.pieces[position] : []
                    #expect(Array(row.value(position)) == expected, "value \(position)")
                }
            }
        }
    }

    @Test func damagedRowsNeverLeadAReadOutside() {
        var generator = TestSeed.generator()
        let whole = Self.pieces.flatMap { $0 }
        let memo = RowMemo.allocate()
        defer { memo.deallocate() }
        for _ in 0..<3000 {
            var bytes = whole
            // Truncate, flip bytes, or make every byte random.
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &generator)))
            case 1: for _ in 0..<4 { bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator) }
            default: bytes = (0..<Int.random(in: 0...64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            }
            bytes.withUnsafeBytes { raw in
                memo.reset()
                let row = RowBytes(bytes: raw, count: Self.pieces.count + 2, memo: Bool.random(using: &generator) ? memo : nil)
                for position in 0..<row.count {
                    let value = row.value(position)
                    guard let start = value.baseAddress, let base = raw.baseAddress else { continue }
                    #expect(start >= base && start + value.count <= base + raw.count)
                    _ = ValueEncoding.integer(value)
                    _ = ValueEncoding.number(value)
                    _ = ValueEncoding.text(value)
                }
            }
        }
    }

    @Test func valueStartsGiveWhatAWalkGivesEvenOnDamagedRows() {
        var generator = TestSeed.generator()
        let whole = Self.pieces.flatMap { $0 }
        // The whole set of pieces has a 300-byte string (two-byte entries); without it, one-byte entries.
        let short = Self.pieces.filter { $0.count < 100 }.flatMap { $0 }
        for round in 0..<3000 {
            var bytes = round % 2 == 0 ? whole : short
            switch round < 2 ? -1 : Int.random(in: 0..<3, using: &generator) {
            case -1: break
            case 0: bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &generator)))
            case 1: for _ in 0..<4 { bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator) }
            default: bytes = (0..<Int.random(in: 1...64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            }
            let count = Self.pieces.count + Int.random(in: 0...2, using: &generator)
            bytes.withUnsafeBytes { raw in
                let starts = ValueStarts(slots: 3) { slot in slot == 1 ? (raw, count) : nil }
                #expect(starts.entries(0) == nil && starts.entries(2) == nil && starts.entries(7) == nil)
                #expect(starts.wide == (raw.count >= 255))
                let known = RowBytes(bytes: raw, count: count, starts: starts.entries(1), wideStarts: starts.wide)
                let walked = RowBytes(bytes: raw, count: count)
                for position in -1...count {
                    #expect(Array(known.value(position)) == Array(walked.value(position)), "value \(position) of round \(round)")
                }
            }
        }
    }
}
