/// What a stored value may be, by property: every value is checked against it at replay
/// (``ValueEncoding/skipChecked(_:model:entity:position:)``).
enum StoredKind: Sendable {
    case string, uri, binary, integer(ClosedRange<Int64>), double, float, decimal, boolean, date, uuid
    /// A relationship to objects of `destination` (or its descendants).
    case relationship(toMany: Bool, destination: Int)

    /// The kind an attribute of `type` stores.
    init(attribute type: AttributeType) {
        switch type {
        case .string: self = .string
        case .uri: self = .uri
        // An undefined attribute is transient: every save stores nil for it. A composite one
        // is never stored as such: its elements are (see `Attribute.expanded`).
        case .binary, .transformable, .undefined, .composite: self = .binary
        case .integer16, .integer32, .integer64: self = .integer(type.integerRange ?? Int64.min...Int64.max)
        case .double: self = .double
        case .float: self = .float
        case .decimal: self = .decimal
        case .boolean: self = .boolean
        case .date: self = .date
        case .uuid: self = .uuid
        }
    }
}
