/// Something a model file says that Cairn loaded otherwise than written, as Core Data would load
/// it: a default the model compiler converts or drops, an inverse that does not point back, a
/// composite type without elements. Names the file, line and property, as a ``ModelError`` does.
public struct ModelWarning: ModelLocated, Sendable, Hashable, CustomStringConvertible {
    /// What was loaded otherwise than written, and how.
    public var message: String
    /// Where: the entity and property, the file, the line (1-based) and the element concerned
    /// (`attribute`, `relationship`…), read as `warning.entity`, `warning.line`….
    public var location: ModelLocation

    /// Creates a warning.
    public init(
        _ message: String, entity: String? = nil, property: String? = nil, file: String? = nil, line: Int? = nil, element: String? = nil
    ) {
        self.message = message
        location = ModelLocation(entity: entity, property: property, file: file, line: line, element: element)
    }

    /// `file:line, <element>: message (Entity.property)`.
    public var description: String { location.describe(message) }
}
