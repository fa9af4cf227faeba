/// Something a model file says that Cairn loaded otherwise than written, as Core Data would load
/// it: a default the model compiler converts or drops, an inverse that does not point back, a
/// composite type without elements. Names the file, line and property, as a ``ModelError`` does.
public struct ModelWarning: Sendable, Hashable, CustomStringConvertible {
    /// What was loaded otherwise than written, and how.
    public var message: String
    /// The entity concerned.
    public var entity: String?
    /// The attribute or relationship concerned.
    public var property: String?
    /// The file the model was read from.
    public var file: String?
    /// The line (1-based) of the element concerned.
    public var line: Int?
    /// The element concerned (`attribute`, `relationship`…).
    public var element: String?

    /// Creates a warning.
    public init(
        _ message: String, entity: String? = nil, property: String? = nil, file: String? = nil, line: Int? = nil, element: String? = nil
    ) {
        self.message = message
        self.entity = entity
        self.property = property
        self.file = file
        self.line = line
        self.element = element
    }

    /// `file:line, <element>: message (Entity.property)`.
    public var description: String {
        ModelLocation.describe(message, file: file, line: line, element: element, entity: entity, property: property)
    }
}

/// The one form in which model errors and warnings name where they are.
enum ModelLocation {
    /// `file:line, <element>: message (Entity.property)`, leaving out what is unknown.
    static func describe(_ message: String, file: String?, line: Int?, element: String?, entity: String?, property: String?) -> String {
        let place = [entity, property].compactMap { $0 }.joined(separator: ".")
        var location = file ?? ""
        if let line { location += (location.isEmpty ? "line " : ":") + String(line) }
        if let element { location += (location.isEmpty ? "" : ", ") + "<\(element)>" }
        return (location.isEmpty ? "" : location + ": ") + message + (place.isEmpty ? "" : " (\(place))")
    }
}
