import CairnTestSupport
import Foundation
import Testing

@testable import Cairn

/// The ordered index's packed entries: numbers, dates and booleans as 64 bits that order as the
/// values do, and an index that meets a value of another kind.
@Suite struct PackedIndexTests {
    static let doubles: [Double] = [
        -.infinity, -.greatestFiniteMagnitude, -1e300, -2.5, -1, -.leastNormalMagnitude, -.leastNonzeroMagnitude, -0.0, 0,
        .leastNonzeroMagnitude, .leastNormalMagnitude, 1e-300, 0.1, 1, 1.5, 9_007_199_254_740_994, 1e300, .greatestFiniteMagnitude, .infinity
    ]

    static let samples: [(PackedKind, [Value])] = [
        (.integer, [Int64.min, -9_007_199_254_740_993, -1, 0, 1, 7, 1 << 53, Int64.max].map(Value.integer)),
        (.double, doubles.map(Value.double) + [.float(-1.5), .float(0.25)]),
        (.date, doubles.map { .date(Date(timeIntervalSinceReferenceDate: $0)) }),
        (.boolean, [.boolean(false), .boolean(true)])
    ]

    /// Every pair of sample values orders by its bits as ``QueryValue/order(_:_:)`` orders the
    /// values (−0.0 and 0.0 the same), and the bits give the value back.
    @Test func bitsOrderAsTheValuesDo() throws {
        for (kind, values) in Self.samples {
            for a in values {
                let bitsA = try #require(kind.bits(a), "\(a)")
                #expect(QueryValue.order(kind.value(bitsA), a) == .orderedSame, "\(kind) \(a) comes back")
                for b in values {
                    let bitsB = try #require(kind.bits(b))
                    let byBits: ComparisonResult = bitsA < bitsB ? .orderedAscending : bitsA > bitsB ? .orderedDescending : .orderedSame
                    #expect(byBits == QueryValue.order(a, b), "\(kind): \(a) against \(b)")
                }
            }
        }
        #expect(PackedKind.double.bits(.double(-0.0)) == PackedKind.double.bits(.double(0)))
    }

    /// A value's bits read in place from its encoding are its decoded value's bits; values
    /// the kind cannot pack (nil, NaN, another kind) are left to the decoder.
    @Test func bitsReadInPlaceAreTheDecodedValuesBits() {
        let others: [Value] = [.null, .double(.nan), .date(Date(timeIntervalSinceReferenceDate: .nan)), .string("7"), .integer(1), .double(1), .boolean(true)]
        for (kind, values) in Self.samples {
            for value in values + others {
                let bytes = ValueEncoding.encoded(value)
                let inPlace = bytes.withUnsafeBytes { kind.bits(encoded: $0) }
                if let inPlace { #expect(inPlace == kind.bits(value), "\(kind) \(value)") }
                // The kind's own values are read in place (a float may take the decoder's way).
                if case .float = value {} else if kind.bits(value) != nil { #expect(inPlace != nil, "\(kind) \(value)") }
            }
            for value in others where kind.bits(value) == nil {
                #expect(ValueEncoding.encoded(value).withUnsafeBytes { kind.bits(encoded: $0) } == nil, "\(kind) \(value)")
            }
        }
    }

    /// Values a kind cannot pack: NaN, nil, and values of other kinds.
    @Test func valuesOfAnotherKindDoNotPack() {
        #expect(PackedKind.double.bits(.double(.nan)) == nil)
        #expect(PackedKind.date.bits(.date(Date(timeIntervalSinceReferenceDate: .nan))) == nil)
        #expect(PackedKind.integer.bits(.double(1)) == nil)
        #expect(PackedKind.double.bits(.integer(1)) == nil)
        #expect(PackedKind.boolean.bits(.null) == nil)
        #expect(PackedKind(.string) == nil && PackedKind(.decimal) == nil && PackedKind(.uuid) == nil)
        #expect(PackedKind(.integer16) == .integer && PackedKind(.float) == .double)
    }

    /// A packed index that meets a value of another kind (a model's type never lets one
    /// through) becomes an index of values and loses nothing, whether it is built at once or
    /// changed entry by entry.
    @Test func anIndexMeetingAnotherKindKeepsEveryEntry() {
        let id = { (key: Int) in ObjectID(entity: 3, key: UInt64(key)) }
        var builder = OrderedIndex.Builder(kind: .integer)
        var changed = OrderedIndex(kind: .integer)
        for key in 0..<1_500 {
            builder.add(.integer(Int64(key % 50)), key: UInt64(key))
            changed.insert(.integer(Int64(key % 50)), id(key))
        }
        #expect(changed.isPacked)
        builder.add(.double(10.5), key: 9_999)
        changed.insert(.double(10.5), id(9_999))
        for index in [builder.build(), changed] {
            #expect(!index.isPacked)
            #expect(index.count == 1_501)
            #expect(throws: Never.self) { try index.checkInvariants() }
            #expect(index.contains(.integer(7), id(7)) && index.contains(.double(10.5), id(9_999)))
            let between = index.objects(from: .init(value: .integer(10), inclusive: false), to: .init(value: .integer(11), inclusive: true), entity: 3)
            #expect(between.first == id(9_999) && between.count == 31)
            #expect(index.objects(equalTo: .double(49), entity: 3).count == 30)
        }
    }

    /// Removing an entry needs its value as well as its key: a key filed under another value
    /// stays.
    @Test func removingNeedsTheValueFiled() {
        var index = OrderedIndex(kind: .date)
        let date = Date(timeIntervalSinceReferenceDate: 100)
        index.insert(.date(date), ObjectID(entity: 0, key: 1))
        index.remove(.date(Date(timeIntervalSinceReferenceDate: 200)), ObjectID(entity: 0, key: 1))
        #expect(index.count == 1 && index.contains(.date(date), ObjectID(entity: 0, key: 1)))
        index.remove(.date(date), ObjectID(entity: 0, key: 1))
        #expect(index.count == 0)
    }
}
