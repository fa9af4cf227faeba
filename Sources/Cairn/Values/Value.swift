import Foundation

/// One attribute value, as the store keeps it: for code that handles values whose type it
/// learns at run time (a mapper, a command-line tool). Code that knows its types sets and reads
/// plain Swift values instead (`object.setValue(42, forKey: "age")`,
/// `let age: Int? = try object.value(forKey: "age")`; see ``AttributeValue``).
///
/// Each case is named after the ``AttributeType`` it fills; the three integer types share
/// ``integer(_:)`` and transformable attributes hold ``binary(_:)``.
public enum Value: Sendable, Hashable, CustomStringConvertible {
    /// No value (an optional attribute left empty).
    case null
    /// A ``AttributeType/string`` value.
    case string(String)
    /// A value of ``AttributeType/integer16``, ``AttributeType/integer32`` or
    /// ``AttributeType/integer64`` (checked against the type's range when set).
    case integer(Int64)
    /// A ``AttributeType/double`` value (never NaN).
    case double(Double)
    /// A ``AttributeType/float`` value (never NaN).
    case float(Float)
    /// A ``AttributeType/decimal`` value.
    case decimal(Decimal)
    /// A ``AttributeType/boolean`` value.
    case boolean(Bool)
    /// A ``AttributeType/date`` value.
    case date(Date)
    /// A ``AttributeType/binary`` value, or the bytes of a ``AttributeType/transformable(transformer:)`` one.
    case binary([UInt8])
    /// A ``AttributeType/uuid`` value.
    case uuid(UUID)
    /// A ``AttributeType/uri`` value, as its text.
    case uri(String)

    /// The name of the value's kind, for error messages.
    public var typeName: String {
        switch self {
        case .null: "nil"
        case .string: "string"
        case .integer: "integer"
        case .double: "double"
        case .float: "float"
        case .decimal: "decimal"
        case .boolean: "boolean"
        case .date: "date"
        case .binary: "binary"
        case .uuid: "uuid"
        case .uri: "uri"
        }
    }

    /// The value as Swift would write it: `"text"`, `42`, `nil`.
    public var description: String {
        switch self {
        case .null: "nil"
        case .string(let text): "\"\(text)\""
        case .integer(let number): String(number)
        case .double(let number): String(number)
        case .float(let number): String(number)
        case .decimal(let number): number.description
        case .boolean(let flag): String(flag)
        case .date(let date): DateText.iso8601(date)
        case .binary(let bytes): "<\(bytes.count) bytes>"
        case .uuid(let id): id.uuidString
        case .uri(let text): text
        }
    }

    /// Whether the value is `.null`.
    public var isNull: Bool { self == .null }

    /// Whether equal values always have equal encodings: not so for non-ASCII text (Unicode
    /// normalization forms) and for zero (0.0 and −0.0). Lookups through the uniqueness index,
    /// which compares encodings, are taken only for such values.
    var isByteCanonical: Bool {
        switch self {
        case .string(let text), .uri(let text): text.utf8.allSatisfy { $0 < 0x80 }
        case .double(let number): number != 0
        case .float(let number): number != 0
        case .date(let date): date.timeIntervalSinceReferenceDate != 0
        // A decimal's encoding is its description, which keeps trailing zeros (1.50 and 1.5).
        case .decimal: false
        case .null, .integer, .boolean, .binary, .uuid: true
        }
    }

    /// Whether this value may be stored in an attribute of `type`.
    package func fits(_ type: AttributeType) -> Bool {
        // NaN equals nothing, not even itself: it could be neither found nor ordered.
        guard !isNaN else { return false }
        if case .undefined = type { return true }
        // By value, exhaustively: a new kind of value is a compile error here until it says
        // which types take it.
        return switch self {
        case .null: true
        case .integer(let number): type.integerRange?.contains(number) ?? false
        case .string: type == .string
        case .double: type == .double
        case .float: type == .float
        case .decimal: type == .decimal
        case .boolean: type == .boolean
        case .date: type == .date
        case .uuid: type == .uuid
        case .uri: type == .uri
        case .binary:
            switch type {
            case .binary, .transformable: true
            default: false
            }
        }
    }

    /// Whether the value is a NaN number (or a date made from one).
    var isNaN: Bool {
        switch self {
        case .double(let number): number.isNaN
        case .float(let number): number.isNaN
        case .decimal(let number): number.isNaN
        case .date(let date): date.timeIntervalSinceReferenceDate.isNaN
        case .null, .string, .integer, .boolean, .binary, .uuid, .uri: false
        }
    }

    /// Orders two values of the same kind; nil when they cannot be ordered (different kinds).
    /// `.null` sorts before everything.
    static func order(_ lhs: Value, _ rhs: Value) -> ComparisonResult? {
        func compare<T: Comparable>(_ a: T, _ b: T) -> ComparisonResult { ComparisonRules.order(a, b) }
        if case .null = rhs {
            if case .null = lhs { return .orderedSame }
            return .orderedDescending
        }
        // By the left value, exhaustively: a new kind of value is a compile error here until it
        // says how it orders.
        switch lhs {
        case .null: return .orderedAscending
        case .string(let a):
            guard case .string(let b) = rhs else { return nil }
            return compare(a, b)
        case .integer(let a):
            if case .integer(let b) = rhs { return compare(a, b) }
            if case .double(let b) = rhs { return compare(Double(a), b) }
            return nil
        case .double(let a):
            if case .double(let b) = rhs { return compare(a, b) }
            if case .integer(let b) = rhs { return compare(a, Double(b)) }
            return nil
        case .float(let a):
            guard case .float(let b) = rhs else { return nil }
            return compare(a, b)
        case .decimal(let a):
            guard case .decimal(let b) = rhs else { return nil }
            return compare(a, b)
        case .boolean(let a):
            guard case .boolean(let b) = rhs else { return nil }
            return compare(a ? 1 : 0, b ? 1 : 0)
        case .date(let a):
            guard case .date(let b) = rhs else { return nil }
            return compare(a, b)
        case .uuid(let a):
            guard case .uuid(let b) = rhs else { return nil }
            // Byte order, which is the order of the uppercase strings, without making them.
            return withUnsafeBytes(of: a.uuid) { x in
                withUnsafeBytes(of: b.uuid) { y in
                    x.lexicographicallyPrecedes(y) ? .orderedAscending : x.elementsEqual(y) ? .orderedSame : .orderedDescending
                }
            }
        case .uri(let a):
            guard case .uri(let b) = rhs else { return nil }
            return compare(a, b)
        case .binary(let a):
            guard case .binary(let b) = rhs else { return nil }
            return a.lexicographicallyPrecedes(b) ? .orderedAscending : a == b ? .orderedSame : .orderedDescending
        }
    }
}

extension Value: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral
{
    /// A string: `"Emma"` is `.string("Emma")`.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An integer: `42` is `.integer(42)`.
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// A double: `1.5` is `.double(1.5)`.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A boolean: `true` is `.boolean(true)`.
    public init(booleanLiteral value: Bool) { self = .boolean(value) }
    /// No value: `nil` is `.null`.
    public init(nilLiteral: ()) { self = .null }
}
