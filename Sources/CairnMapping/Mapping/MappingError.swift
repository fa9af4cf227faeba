/// An error of the JSON mapper: a mapping that does not fit the model, or input that does not
/// fit the mapping. It says where: the entity and property, and for input the JSON path
/// (`$[1532].age`) and the byte offset, line and column.
///
/// ```swift
/// do { try await store.importJSON(data, into: "Person") } catch MappingError.Code.invalidValue { … }
/// ```
public struct MappingError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code in words, as messages print it.
        public let rawValue: String
        /// A code from its words.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// A mapping names an entity, attribute or relationship the model does not have.
        public static let unknownName = Code(rawValue: "unknown name")
        /// A mapping that cannot work: an identity that is not an attribute, a key path that is
        /// empty, an unknown value transformer, a malformed mapping file.
        public static let invalidMapping = Code(rawValue: "invalid mapping")
        /// The input is not JSON (the message gives line, column and byte).
        public static let invalidJSON = Code(rawValue: "invalid JSON")
        /// The input's shape is not what the import expects: no records where the root key path
        /// points, a record that is not an object.
        public static let unexpectedShape = Code(rawValue: "unexpected shape")
        /// A value that does not fit its attribute: the wrong kind of JSON value, a date that does
        /// not parse, a number out of range.
        public static let invalidValue = Code(rawValue: "invalid value")
        /// A record without the value of its entity's unique key.
        public static let missingKey = Code(rawValue: "missing key")
        /// A record leaves its object without a value the model requires (an attribute, a
        /// required relationship), as the save would refuse it.
        public static let missingValue = Code(rawValue: "missing value")
        /// A record leaves a to-many relationship holding fewer or more objects than the model
        /// allows.
        public static let countViolation = Code(rawValue: "count violation")
        /// A reference by key to an object that neither the store nor the input holds.
        public static let unresolvedReference = Code(rawValue: "unresolved reference")
        /// The input could not be read (a file that does not open).
        public static let unreadableInput = Code(rawValue: "unreadable input")
        /// The code in words.
        public var description: String { rawValue }
        /// Lets `catch MappingError.Code.invalidValue` match.
        public static func ~= (code: Code, error: any Error) -> Bool { (error as? MappingError)?.code == code }
    }

    /// The kind of failure.
    public var code: Code
    /// What happened, in words.
    public var message: String
    /// The entity concerned.
    public var entity: String?
    /// The attribute or relationship concerned.
    public var property: String?
    /// Where in the input: a JSON path such as `$[1532].age` (nil for a mapping error).
    public var path: String?
    /// The byte offset in the input, when known.
    public var offset: Int?

    /// Creates an error.
    public init(_ code: Code, _ message: String, entity: String? = nil, property: String? = nil, path: String? = nil, offset: Int? = nil) {
        self.code = code
        self.message = message
        self.entity = entity
        self.property = property
        self.path = path
        self.offset = offset
    }

    /// The code, the JSON path and the message, with the entity and property concerned.
    public var description: String {
        var text = "\(code): "
        if let path { text += "\(path): " }
        text += message
        let place = [entity, property].compactMap { $0 }.joined(separator: ".")
        if !place.isEmpty { text += " (\(place))" }
        return text
    }

    /// What import and export alike say of a transformer a model or mapping names that nobody
    /// registered.
    static func unregisteredTransformer(_ name: String) -> String { "no MappingTransformer is registered under the name \(name)" }
}
