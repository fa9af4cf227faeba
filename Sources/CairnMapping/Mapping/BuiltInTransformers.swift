import Cairn
import Foundation

/// The transformers every mapping finds by name without registering them: the values Core Data
/// apps keep in transformable attributes (Groot's `JSONTransformerName`, Sync's
/// `sync.valueTransformer`, a mapping file's `"transformer"`), each read on import and written
/// back on export so that an export imports back unchanged.
///
/// | name | JSON | attribute | stored as |
/// |---|---|---|---|
/// | `json` | an array or an object | string | its JSON text (compact, members in input order) |
/// | `json` | an array or an object | binary, transformable | the UTF-8 bytes of that text |
/// | `base64` | base64 text | binary, transformable | the bytes |
/// | `numberFromString` | a number given as a string (or as a number) | an integer type, double, float, decimal | the number; export writes it as a string |
///
/// A transformer registered under one of these names (``MappingTransformers/register(_:name:)``)
/// is used instead. A built-in named for an attribute of another type fails the mapping.
public enum BuiltInTransformer: String, Sendable, CaseIterable {
    /// A JSON array or object kept as JSON text (a string attribute) or as its UTF-8 bytes (a
    /// binary or transformable attribute).
    case json
    /// Bytes given as base64 text (a binary or transformable attribute).
    case base64
    /// A number given as a string (`"42"`, `"19.90"`), kept as the attribute's number and written
    /// back as a string; a JSON number is read too.
    case numberFromString

    /// The transformer for an attribute of `type`; nil when this built-in does not serve it.
    func transformer(for type: AttributeType) -> (any MappingTransformer)? {
        switch (self, type) {
        case (.json, .string): JSONText(name: rawValue, asText: true)
        case (.json, .binary), (.json, .transformable): JSONText(name: rawValue, asText: false)
        case (.base64, .binary), (.base64, .transformable): Base64(name: rawValue)
        case (.numberFromString, .integer16), (.numberFromString, .integer32), (.numberFromString, .integer64), (.numberFromString, .double),
            (.numberFromString, .float), (.numberFromString, .decimal):
            NumberFromString(name: rawValue, type: type)
        default: nil
        }
    }

    /// The first attribute type it serves.
    var firstType: AttributeType {
        switch self {
        case .json: .string
        case .base64: .binary
        case .numberFromString: .decimal
        }
    }

    /// The attribute types it serves, for messages.
    var types: String {
        switch self {
        case .json: "string, binary and transformable attributes"
        case .base64: "binary and transformable attributes"
        case .numberFromString: "integer16, integer32, integer64, double, float and decimal attributes"
        }
    }
}

extension BuiltInTransformer {
    /// How the importer may read a value `transformer` takes without calling it: a built-in's
    /// own reading done on the value's bytes (``FastValue``), or nil (a registered transformer).
    static func directReading(_ transformer: (any MappingTransformer)?) -> DirectReading? {
        switch transformer {
        case let json as JSONText: .jsonText(asText: json.asText)
        case is Base64: .base64
        default: nil
        }
    }

    /// Whether `transformer` is one of Cairn's own (no user code: a second reader may call it
    /// on another thread, for work that may be dropped).
    static func isBuiltIn(_ transformer: (any MappingTransformer)?) -> Bool {
        transformer is JSONText || transformer is Base64 || transformer is NumberFromString
    }

    /// A built-in transformer's reading, done on a value's bytes.
    enum DirectReading {
        /// `json`: the array's or object's JSON text, compact (as text, or as its bytes).
        case jsonText(asText: Bool)
        /// `base64`: the bytes base64 text gives.
        case base64
    }
}

/// Why a built-in transformer refused a value (the importer and exporter add the transformer's
/// name, the attribute and the JSON path).
struct TransformerRefusal: Error, CustomStringConvertible {
    let description: String
}

/// The kind of a JSON value, for messages.
private func kind(_ json: JSONValue) -> String {
    switch json {
    case .null: "null"
    case .boolean: "a boolean"
    case .number: "a number"
    case .string: "a string"
    case .array: "an array"
    case .object: "an object"
    }
}

/// `json`: an array or an object as JSON text, or as its bytes.
private struct JSONText: MappingTransformer {
    let name: String
    /// Text in a string attribute (else bytes).
    let asText: Bool

    func value(from json: JSONValue) throws -> Value {
        switch json {
        case .array, .object: break
        case .null, .boolean, .number, .string: throw TransformerRefusal(description: "\(name) takes an array or an object, not \(kind(json))")
        }
        let bytes = JSONWriter.bytes(json)
        return asText ? .string(String(decoding: bytes, as: UTF8.self)) : .binary(bytes)
    }

    func json(from value: Value) throws -> JSONValue {
        switch value {
        case .string(let text): return try Self.parse(Array(text.utf8))
        case .binary(let bytes): return try Self.parse(bytes)
        default: throw TransformerRefusal(description: "\(name) writes text or bytes of JSON, not \(value.typeName) \(value)")
        }
    }

    /// The one JSON value `bytes` hold.
    private static func parse(_ bytes: [UInt8]) throws -> JSONValue {
        do {
            return try bytes.withUnsafeBytes { buffer throws(JSONSyntaxError) in
                var scanner = JSONScanner(buffer)
                guard let first = try scanner.next() else { return .null }
                // Each value takes at least one byte: the tree is bounded by the stored bytes.
                var limit = buffer.count
                let tree = try scanner.tree(first, limit: &limit)
                _ = try scanner.next()  // only white space may follow
                return tree
            }
        } catch {
            throw TransformerRefusal(description: "the stored value is not JSON: \(error)")
        }
    }
}

/// `base64`: bytes as base64 text.
private struct Base64: MappingTransformer {
    let name: String

    func value(from json: JSONValue) throws -> Value {
        guard case .string(let text) = json else { throw TransformerRefusal(description: "\(name) takes base64 text, not \(kind(json))") }
        guard let data = Data(base64Encoded: text) else { throw TransformerRefusal(description: "the string is not base64") }
        return .binary(Array(data))
    }

    func json(from value: Value) throws -> JSONValue {
        guard case .binary(let bytes) = value else { throw TransformerRefusal(description: "\(name) writes bytes, not \(value.typeName) \(value)") }
        return .string(Data(bytes).base64EncodedString())
    }
}

/// `numberFromString`: a number given as a string, read as a number attribute reads one (exact
/// integers and decimals, range-checked, the spellings of ±∞), written back as a string.
private struct NumberFromString: MappingTransformer {
    let name: String
    /// An attribute of the type, read with no transformer: the importer's own reading.
    let plain: ResolvedAttribute

    init(name: String, type: AttributeType) {
        self.name = name
        plain = ResolvedAttribute(
            name: name, position: 0, type: type, keyPaths: [], dateFormat: .standard, datePattern: nil, transformerName: nil, transformer: nil,
            coercesText: true)
    }

    func value(from json: JSONValue) throws -> Value {
        let bytes: [UInt8]
        switch json {
        case .number(let text): bytes = Array(text.utf8)
        case .string: bytes = JSONWriter.bytes(json)
        case .null, .boolean, .array, .object:
            throw TransformerRefusal(description: "\(name) takes a number given as a string, not \(kind(json))")
        }
        return try bytes.withUnsafeBytes { buffer in
            var scanner = JSONScanner(buffer)
            guard let token = try scanner.next() else { throw TransformerRefusal(description: "\(name) takes a number given as a string") }
            do { return try ValueReader.read(token, plain, &scanner) } catch let misfit as ValueReader.Misfit {
                throw TransformerRefusal(description: misfit.message)
            }
        }
    }

    func json(from value: Value) throws -> JSONValue {
        switch value {
        case .integer, .double, .float, .decimal:
            switch ValueJSON.json(value) {
            case .number(let text), .string(let text): return .string(text)
            default: break
            }
        default: break
        }
        throw TransformerRefusal(description: "\(name) writes numbers, not \(value.typeName) \(value)")
    }
}
