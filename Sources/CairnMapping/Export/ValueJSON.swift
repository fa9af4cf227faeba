import Cairn
import Foundation

/// The one rendering of attribute values as JSON, for export and for the command line's
/// `dump` and `query`, and what import reads back to the same value (docs/MAPPING.md, "Values
/// in JSON"):
///
/// | value | JSON |
/// |---|---|
/// | null | `null` |
/// | string, URI | a string |
/// | integer (16, 32, 64) | a number |
/// | double, float | the shortest number that reads back to it (`3`, `0.1`, `-0`, `1e+300`); NaN and ±∞ as the strings of ``NonFiniteNumber`` |
/// | decimal | a number with every digit (`12345678901234567890.123456789`); NaN as the string `"NaN"` |
/// | boolean | `true` / `false` |
/// | date | as the attribute's ``DateFormat`` writes it (ISO 8601 in UTC with milliseconds by default) |
/// | binary | a base64 string |
/// | UUID | its uppercase string |
package enum ValueJSON {
    /// The JSON of `value`, dates in ISO 8601 (UTC, milliseconds).
    package static func json(_ value: Value) -> JSONValue { json(value, dateFormat: .standard, pattern: nil) }

    /// The JSON of `value`, a date written as `dateFormat` says (`pattern`: the compiled pattern
    /// of a ``DateFormat/pattern(_:offset:)`` format).
    static func json(_ value: Value, dateFormat: DateFormat, pattern: DatePattern?) -> JSONValue {
        switch value {
        case .null: .null
        case .string(let text), .uri(let text): .string(text)
        case .integer(let number): .number(String(number))
        case .double(let number): NonFiniteNumber.spelling(number).map(JSONValue.string) ?? .number(shortest(number))
        case .float(let number): NonFiniteNumber.spelling(number).map(JSONValue.string) ?? .number(shortest(Double(number.description) ?? Double(number)))
        case .decimal(let number): number.isNaN ? .string(NonFiniteNumber.notANumber) : .number(number.description)
        case .boolean(let flag): .boolean(flag)
        case .uuid(let uuid): .string(uuid.uuidString)
        case .binary(let bytes): .string(Data(bytes).base64EncodedString())
        case .date(let date):
            switch dateFormat {
            case .iso8601: .string(DateText.iso8601(date))
            case .unixSeconds: .number(shortest(date.timeIntervalSince1970))
            case .unixMilliseconds: .number(shortest((date.timeIntervalSince1970 * 1000).rounded()))
            case .pattern(_, let offset): .string(pattern?.string(from: date, offset: offset) ?? DateText.iso8601(date))
            }
        }
    }

    /// Writes the JSON of `value` (as ``json(_:dateFormat:pattern:)``): strings, integers,
    /// booleans, null and ISO 8601 dates straight into the buffer, without a ``JSONValue``.
    static func write(_ value: Value, dateFormat: DateFormat, pattern: DatePattern?, to writer: inout JSONWriter) {
        switch (value, dateFormat) {
        case (.string(let text), _), (.uri(let text), _): writer.string(text)
        case (.integer(let number), _): writer.integer(number)
        case (.boolean(let flag), _): flag ? writer.raw("true") : writer.raw("false")
        case (.null, _): writer.raw("null")
        case (.date(let date), .iso8601): writer.isoDate(date)
        default: writer.value(json(value, dateFormat: dateFormat, pattern: pattern))
        }
    }

    /// The shortest text that reads back as `number` (integral values without `.0`, negative
    /// zero as `-0`).
    static func shortest(_ number: Double) -> String {
        if number == 0 { return number.sign == .minus ? "-0" : "0" }
        if number == number.rounded(), number.magnitude < 1e15 { return String(Int64(number)) }
        return number.description
    }
}
