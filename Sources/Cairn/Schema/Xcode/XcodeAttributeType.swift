import Foundation

/// The attribute type names and value texts of Xcode's model format, both ways.
enum XcodeAttributeType {
    /// Xcode's name for each type Cairn stores (`Transformable` is handled apart).
    static let names: [(String, AttributeType)] = [
        ("Integer 16", .integer16), ("Integer 32", .integer32), ("Integer 64", .integer64), ("Decimal", .decimal),
        ("Double", .double), ("Float", .float), ("String", .string), ("Boolean", .boolean), ("Date", .date),
        ("Binary", .binary), ("UUID", .uuid), ("URI", .uri)
    ]
    /// Types of the format that Cairn refuses, with the reason.
    static let unsupported: [String: String] = [
        "Undefined": "an Undefined attribute holds any object, which Cairn cannot store; only a transient one is allowed",
        "Object ID": "an Object ID attribute holds a Core Data object ID, which Cairn cannot store",
        "ObjectID": "an Object ID attribute holds a Core Data object ID, which Cairn cannot store"
    ]
    /// The transformer Core Data uses when a transformable attribute names none.
    static let defaultTransformer = "NSKeyedUnarchiveFromData"

    static func type(named name: String) -> AttributeType? {
        names.first { $0.0 == name }?.1
    }

    static func name(of type: AttributeType) -> String {
        if case .transformable = type { return "Transformable" }
        if case .undefined = type { return "Undefined" }
        if case .composite = type { return "Composite" }
        return names.first { $0.1 == type }?.0 ?? "Undefined"
    }

    /// Parses a `defaultValueString` for an attribute of `type`; nil when it does not fit.
    static func value(_ text: String, for type: AttributeType) -> Value? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        switch type {
        case .string: return .string(text)
        case .uri: return .uri(text)
        case .integer16, .integer32, .integer64:
            // Xcode writes "0.0" when an attribute's type was changed from a floating-point one,
            // and Core Data loads it: a whole number written as a decimal is that number.
            var digits = Substring(trimmed)
            if let match = trimmed.wholeMatch(of: /([+-]?[0-9]+)\.0*/) { digits = match.output.1 }
            guard let number = Int64(digits), type.integerRange?.contains(number) == true else { return nil }
            return .integer(number)
        case .double:
            guard let number = Double(trimmed), number.isFinite else { return nil }
            return .double(number)
        case .float:
            guard let number = Float(trimmed), number.isFinite else { return nil }
            return .float(number)
        case .decimal:
            // The whole text must be a plain decimal number: -12.50, 3, .5, 1e3 (no hex, no nan).
            guard trimmed.wholeMatch(of: /[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?/) != nil,
                let number = Decimal(string: trimmed, locale: Locale(identifier: "en_US_POSIX")), !number.isNaN
            else { return nil }
            return .decimal(number)
        case .boolean:
            switch trimmed.uppercased() {
            case "YES", "TRUE", "1": return .boolean(true)
            case "NO", "FALSE", "0": return .boolean(false)
            default: return nil
            }
        case .date:
            guard let seconds = Double(trimmed), seconds.isFinite else { return nil }
            return .date(Date(timeIntervalSinceReferenceDate: seconds))
        case .uuid: return UUID(uuidString: trimmed).map(Value.uuid)
        case .binary, .transformable: return Data(base64Encoded: trimmed).map { .binary(Array($0)) }
        case .undefined, .composite: return nil
        }
    }

    /// The text Xcode writes for a default value.
    static func text(_ value: Value) -> String {
        switch value {
        case .null: ""
        case .string(let text), .uri(let text): text
        case .integer(let number): String(number)
        case .double(let number): String(number)
        case .float(let number): String(number)
        case .decimal(let number): number.description
        case .boolean(let flag): flag ? "YES" : "NO"
        case .date(let date): String(date.timeIntervalSinceReferenceDate)
        case .binary(let bytes): Data(bytes).base64EncodedString()
        case .uuid(let id): id.uuidString
        }
    }
}
