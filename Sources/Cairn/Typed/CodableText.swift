import Foundation

/// The JSON text a `Codable` attribute value is stored as (CairnModels): keys sorted, slashes
/// not escaped, dates as ISO 8601. Equal values are equal text, so that a query compares them
/// for equality; a `#Predicate` constant compared with such an attribute is encoded the same way.
package enum CodableText {
    /// The text of a value.
    package static func encode(_ value: any Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// The value of a type that a text holds.
    package static func decode(_ type: any Decodable.Type, from text: String) throws -> Any {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(type, from: Data(text.utf8))
    }
}
