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
        default: true
        }
    }

    /// Whether this value may be stored in an attribute of `type`.
    package func fits(_ type: AttributeType) -> Bool {
        // NaN equals nothing, not even itself: it could be neither found nor ordered.
        guard !isNaN else { return false }
        return switch (self, type) {
        case (.null, _), (_, .undefined): true
        case (.string, .string), (.double, .double), (.float, .float), (.decimal, .decimal), (.boolean, .boolean),
            (.date, .date), (.binary, .binary), (.binary, .transformable), (.uuid, .uuid), (.uri, .uri):
            true
        case (.integer(let number), _):
            type.integerRange?.contains(number) ?? false
        default:
            false
        }
    }

    /// Whether the value is a NaN number (or a date made from one).
    var isNaN: Bool {
        switch self {
        case .double(let number): number.isNaN
        case .float(let number): number.isNaN
        case .decimal(let number): number.isNaN
        case .date(let date): date.timeIntervalSinceReferenceDate.isNaN
        default: false
        }
    }

    /// Orders two values of the same kind; nil when they cannot be ordered (different kinds).
    /// `.null` sorts before everything.
    static func order(_ lhs: Value, _ rhs: Value) -> ComparisonResult? {
        func compare<T: Comparable>(_ a: T, _ b: T) -> ComparisonResult { ComparisonRules.order(a, b) }
        switch (lhs, rhs) {
        case (.null, .null): return .orderedSame
        case (.null, _): return .orderedAscending
        case (_, .null): return .orderedDescending
        case (.string(let a), .string(let b)): return compare(a, b)
        case (.integer(let a), .integer(let b)): return compare(a, b)
        case (.double(let a), .double(let b)): return compare(a, b)
        case (.float(let a), .float(let b)): return compare(a, b)
        case (.decimal(let a), .decimal(let b)): return compare(a, b)
        case (.boolean(let a), .boolean(let b)): return compare(a ? 1 : 0, b ? 1 : 0)
        case (.date(let a), .date(let b)): return compare(a, b)
        case (.uuid(let a), .uuid(let b)):
            // Byte order, which is the order of the uppercase strings, without making them.
            return withUnsafeBytes(of: a.uuid) { x in
                withUnsafeBytes(of: b.uuid) { y in
                    x.lexicographicallyPrecedes(y) ? .orderedAscending : x.elementsEqual(y) ? .orderedSame : .orderedDescending
                }
            }
        case (.uri(let a), .uri(let b)): return compare(a, b)
        case (.binary(let a), .binary(let b)): return a.lexicographicallyPrecedes(b) ? .orderedAscending : a == b ? .orderedSame : .orderedDescending
        case (.integer(let a), .double(let b)): return compare(Double(a), b)
        case (.double(let a), .integer(let b)): return compare(a, Double(b))
        default: return nil
        }
    }
}

extension Value: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .boolean(value) }
    public init(nilLiteral: ()) { self = .null }
}
