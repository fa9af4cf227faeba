import Foundation

/// An entry of an ordered index (``OrderedRuns``): a value, in a form that orders as the value
/// does, and the key of the object filed under it (the index's entity is its slot's).
protocol OrderedEntry: Sendable {
    /// The key of the object filed.
    var key: UInt64 { get }
    /// Entry order: by value, then by key; a strict order over the entries of one index.
    static func precedes(_ a: Self, _ b: Self) -> Bool
}

/// How the values of one attribute type map to 64 bits that order as the values do: integers,
/// numbers with a fraction and dates by their number, booleans as 0 and 1. An index of such an
/// attribute keeps 16 bytes an entry (``PackedEntry``) rather than a ``Value`` and an ID.
enum PackedKind: Sendable, Equatable {
    case integer, double, date, boolean

    /// The kind of an attribute type's values, or nil for the types whose values do not fit
    /// 64 bits in order (text, decimals, binary data, UUIDs, URIs, untyped values).
    init?(_ type: AttributeType) {
        switch type {
        case .integer16, .integer32, .integer64: self = .integer
        case .double, .float: self = .double
        case .date: self = .date
        case .boolean: self = .boolean
        default: return nil
        }
    }

    /// A value's bits, or nil when it is not of this kind (or is NaN, which has no order).
    /// −0.0 packs as 0.0: they are equal under `==`, and one value has one place.
    func bits(_ value: Value) -> UInt64? {
        switch (self, QueryValue.normalized(value)) {
        case (.integer, .integer(let number)): UInt64(bitPattern: number) ^ Self.signBit
        case (.double, .double(let number)): Self.orderedBits(number)
        case (.date, .date(let date)): Self.orderedBits(date.timeIntervalSinceReferenceDate)
        case (.boolean, .boolean(let flag)): flag ? 1 : 0
        default: nil
        }
    }

    /// The bits of a value in the change-record encoding (FORMAT.md §9), read in place: what
    /// ``bits(_:)`` gives for the value decoded, for the encodings of the kind's own type (an
    /// integer, a double, a date, a boolean); nil for any other (nil, NaN, or a value of
    /// another kind, which the caller then decodes).
    @inline(__always)
    func bits(encoded value: UnsafeRawBufferPointer) -> UInt64? {
        switch self {
        case .integer: ValueEncoding.integer(value).map { UInt64(bitPattern: $0) ^ Self.signBit }
        case .double: ValueEncoding.double(value).flatMap(Self.orderedBits)
        case .date: ValueEncoding.dateSeconds(value).flatMap(Self.orderedBits)
        case .boolean: ValueEncoding.boolean(value).map { $0 ? 1 : 0 }
        }
    }

    /// The value of bits made by ``bits(_:)`` (−0.0 comes back as 0.0).
    func value(_ bits: UInt64) -> Value {
        switch self {
        case .integer: .integer(Int64(bitPattern: bits ^ Self.signBit))
        case .double: .double(Self.number(bits))
        case .date: .date(Date(timeIntervalSinceReferenceDate: Self.number(bits)))
        case .boolean: .boolean(bits != 0)
        }
    }

    private static let signBit: UInt64 = 1 << 63

    /// A double's bits made to order as unsigned integers: positive numbers with the sign bit
    /// set, negative numbers inverted (so that larger magnitudes come first).
    private static func orderedBits(_ number: Double) -> UInt64? {
        guard !number.isNaN else { return nil }
        let bits = (number + 0.0).bitPattern
        return bits & signBit == 0 ? bits | signBit : ~bits
    }

    private static func number(_ bits: UInt64) -> Double {
        Double(bitPattern: bits & signBit != 0 ? bits & ~signBit : ~bits)
    }
}

/// An entry of an index whose values pack into 64 bits (``PackedKind``): 16 bytes.
struct PackedEntry: OrderedEntry {
    /// The value's bits, ordered as the values are.
    var bits: UInt64
    var key: UInt64

    @inline(__always)
    static func precedes(_ a: Self, _ b: Self) -> Bool { (a.bits, a.key) < (b.bits, b.key) }
}

/// An entry of an index of any other values (text, decimals…): the value itself.
struct ValueEntry: OrderedEntry {
    /// The value, normalized (``QueryValue/normalized(_:)``) and never nil.
    var value: Value
    var key: UInt64

    /// By value (``QueryValue/order(_:_:)``: a strict order over the values one attribute can
    /// hold, one kind and never NaN), then by key.
    static func precedes(_ a: Self, _ b: Self) -> Bool {
        switch QueryValue.order(a.value, b.value) ?? .orderedSame {
        case .orderedAscending: true
        case .orderedDescending: false
        case .orderedSame: a.key < b.key
        }
    }
}
