import Cairn
import Foundation

/// Writes JSON text by hand for `cairn dump`: one object per line, fast on large stores
/// (Foundation's `JSONSerialization.data` is slow on Linux).
enum JSONText {
    /// A JSON string literal.
    static func string(_ text: String) -> String {
        var out = "\""
        out.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let c where c.value < 0x20: out += String(format: "\\u%04x", c.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// An attribute value as JSON: numbers and booleans as such, dates as ``DateText`` writes
    /// them, binary in base64, decimals as strings (exact).
    static func value(_ value: Value) -> String {
        switch value {
        case .null: "null"
        case .string(let text), .uri(let text): string(text)
        case .integer(let number): String(number)
        case .double(let number): number.isFinite ? String(number) : string(String(number))
        case .float(let number): number.isFinite ? String(number) : string(String(number))
        case .decimal(let number): string(number.description)
        case .boolean(let flag): flag ? "true" : "false"
        case .date(let date): string(DateText.iso8601(date))
        case .binary(let bytes): string(Data(bytes).base64EncodedString())
        case .uuid(let id): string(id.uuidString)
        }
    }

    /// A JSON object from ordered key–value pairs whose values are already JSON.
    static func object(_ pairs: [(String, String)]) -> String {
        "{" + pairs.map { string($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }
}
