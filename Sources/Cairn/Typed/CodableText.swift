import Foundation

/// The JSON text a `Codable` attribute value is stored as (CairnModels): keys sorted, slashes
/// not escaped, dates as seconds since 2001 (Foundation's default: exact). Equal values are equal text, so that a query compares them
/// for equality; a `#Predicate` constant compared with such an attribute is encoded the same way.
package enum CodableText {
    /// The text of a value.
    package static func encode(_ value: any Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // (Dates as Foundation writes them by default, seconds since 2001 as a number: exact.)
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// The value of a type that a text holds.
    package static func decode(_ type: any Decodable.Type, from text: String) throws -> Any {
        let decoder = JSONDecoder()
        return try decoder.decode(type, from: Data(text.utf8))
    }
}
