/// Where in a model a ``ModelError`` or ``ModelWarning`` is: the entity and property, and for a
/// model read from a file, the file, line and element. The error and the warning read these
/// through their own names (`error.entity`, `warning.line`).
public struct ModelLocation: Sendable, Hashable {
    /// The entity concerned.
    public var entity: String?
    /// The attribute or relationship concerned.
    public var property: String?
    /// For a model read from a file: the file.
    public var file: String?
    /// For a model read from XML: the line (1-based) of the element concerned.
    public var line: Int?
    /// For a model read from XML: the element concerned (`entity`, `attribute`…).
    public var element: String?

    /// A place; what is unknown is nil.
    public init(entity: String? = nil, property: String? = nil, file: String? = nil, line: Int? = nil, element: String? = nil) {
        self.entity = entity
        self.property = property
        self.file = file
        self.line = line
        self.element = element
    }

    /// `file:line, <element>: message (Entity.property)`, leaving out what is unknown: the one
    /// form in which model errors and warnings name where they are.
    func describe(_ message: String) -> String {
        let place = [entity, property].compactMap { $0 }.joined(separator: ".")
        var location = file ?? ""
        if let line { location += (location.isEmpty ? "line " : ":") + String(line) }
        if let element { location += (location.isEmpty ? "" : ", ") + "<\(element)>" }
        return (location.isEmpty ? "" : location + ": ") + message + (place.isEmpty ? "" : " (\(place))")
    }
}

/// A model error or warning: the parts of its ``location`` read as its own
/// (`error.entity`, `warning.line`).
@dynamicMemberLookup
public protocol ModelLocated {
    /// Where in the model.
    var location: ModelLocation { get set }
}

extension ModelLocated {
    /// A part of ``location``: `error.entity`, `warning.line`….
    public subscript<Part>(dynamicMember part: WritableKeyPath<ModelLocation, Part>) -> Part {
        get { location[keyPath: part] }
        set { location[keyPath: part] = newValue }
    }
}
