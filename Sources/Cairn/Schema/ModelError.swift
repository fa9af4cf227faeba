/// A model that cannot work: names the entity and property at fault.
public struct ModelError: ModelLocated, Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of mistake.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code in words, as messages print it.
        public let rawValue: String
        /// A code from its words.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Two entities, or two properties of an entity (inherited ones included), share a name.
        public static let duplicateName = Code(rawValue: "duplicate name")
        /// A name that is not an identifier (a letter or `_`, then letters, digits or `_`).
        public static let invalidName = Code(rawValue: "invalid name")
        /// A parent entity the model does not have.
        public static let unknownParent = Code(rawValue: "unknown parent entity")
        /// An entity that is its own ancestor.
        public static let inheritanceCycle = Code(rawValue: "inheritance cycle")
        /// A relationship to an entity the model does not have.
        public static let unknownDestination = Code(rawValue: "unknown destination entity")
        /// An inverse that is missing, or does not point back.
        public static let invalidInverse = Code(rawValue: "invalid inverse")
        /// A uniqueness constraint on an attribute the entity does not store.
        public static let unknownConstraintAttribute = Code(rawValue: "unknown attribute in uniqueness constraint")
        /// A default value that does not fit its attribute's type.
        public static let invalidDefault = Code(rawValue: "invalid default value")
        /// Minimum and maximum counts that contradict each other or the relationship.
        public static let invalidCount = Code(rawValue: "invalid count")
        /// A model file that does not parse (JSON or XML), or holds something out of place.
        public static let invalidFormat = Code(rawValue: "invalid model file")
        /// A fetch index names an attribute the entity does not have, or two share a name.
        public static let invalidFetchIndex = Code(rawValue: "invalid fetch index")
        /// A configuration names an entity the model does not have.
        public static let unknownConfigurationMember = Code(rawValue: "unknown configuration member")
        /// An attribute type Cairn cannot store (Xcode's Object ID; Undefined, unless transient),
        /// or a composite type the model does not define.
        public static let unsupportedType = Code(rawValue: "unsupported attribute type")
        /// A model file in a format Cairn does not read (Xcode's old binary model format).
        public static let unsupportedFormat = Code(rawValue: "unsupported model format")
        /// The code in words.
        public var description: String { rawValue }
        /// Lets `catch ModelError.Code.invalidInverse` match.
        public static func ~= (code: Code, error: any Error) -> Bool { (error as? ModelError)?.code == code }
    }

    /// The kind of mistake.
    public var code: Code
    /// What is wrong, in words.
    public var message: String
    /// Where: the entity and property concerned and, for a model read from a file, the file, the
    /// line (1-based) and the element at fault (`entity`, `attribute`…), read as
    /// `error.entity`, `error.line`….
    public var location: ModelLocation

    /// Creates an error.
    public init(
        _ code: Code, _ message: String, entity: String? = nil, property: String? = nil,
        file: String? = nil, line: Int? = nil, element: String? = nil
    ) {
        self.code = code
        self.message = message
        location = ModelLocation(entity: entity, property: property, file: file, line: line, element: element)
    }

    /// The code, the message and where: file, line, element, entity, property.
    public var description: String { location.describe("\(code): \(message)") }
}
