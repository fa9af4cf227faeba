/// The type of an attribute's values.
public enum AttributeType: Sendable, Hashable, CustomStringConvertible {
    /// Text.
    case string
    /// A signed integer of 16, 32 or 64 bits (stored as ``Value/integer(_:)``, range-checked).
    case integer16, integer32, integer64
    /// A 64-bit floating-point number.
    case double
    /// A 32-bit floating-point number.
    case float
    /// An exact decimal number (Foundation's `Decimal`).
    case decimal
    /// True or false.
    case boolean
    /// A point in time.
    case date
    /// Raw bytes.
    case binary
    /// A UUID.
    case uuid
    /// A URI, kept as its text.
    case uri
    /// A value turned into bytes by the transformer registered under this name.
    case transformable(transformer: String)
    /// Any value, for a transient attribute only (Core Data's Undefined type): never stored.
    case undefined
    /// A group of values described by the model's ``Composite`` of this name, stored as one
    /// attribute per element (`location.latitude`).
    case composite(String)

    /// The type's name in Cairn's JSON models (`string`, `integer64`, `composite(Location)`).
    public var description: String {
        switch self {
        case .string: "string"
        case .integer16: "integer16"
        case .integer32: "integer32"
        case .integer64: "integer64"
        case .double: "double"
        case .float: "float"
        case .decimal: "decimal"
        case .boolean: "boolean"
        case .date: "date"
        case .binary: "binary"
        case .uuid: "uuid"
        case .uri: "uri"
        case .transformable(let name): "transformable(\(name))"
        case .undefined: "undefined"
        case .composite(let name): "composite(\(name))"
        }
    }

    /// The integer range of the integer types.
    package var integerRange: ClosedRange<Int64>? {
        switch self {
        case .integer16: Int64(Int16.min)...Int64(Int16.max)
        case .integer32: Int64(Int32.min)...Int64(Int32.max)
        case .integer64: Int64.min...Int64.max
        case .string, .double, .float, .decimal, .boolean, .date, .binary, .uuid, .uri, .transformable, .undefined, .composite: nil
        }
    }
}
