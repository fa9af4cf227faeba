/// A named, typed value that every object of an entity holds.
public struct Attribute: Sendable, Hashable {
    /// The attribute's name, unique among the entity's properties (inherited ones included).
    public var name: String
    /// The type of its values.
    public var type: AttributeType
    /// Whether it may be nil. Default true, as in Core Data.
    public var isOptional: Bool
    /// The value a new object starts with (nil: no default).
    public var defaultValue: Value?
    /// Whether the store keeps an index of it for fetching.
    public var isIndexed: Bool
    /// Whether it lives only in memory and is never saved.
    public var isTransient: Bool
    /// Free-form metadata (Xcode models keep mapping hints here).
    public var userInfo: [String: String]
    /// The attribute's name in an earlier model version (Core Data's renaming identifier):
    /// migration carries the old attribute's values over to this one.
    public var renamingIdentifier: String?
    /// An identifier that stays the same across model versions (Xcode's `elementID`): two
    /// versions' attributes with the same one are the same attribute, whatever their names.
    public var elementID: String?
    /// For a transformable attribute, the type of the values its transformer produces (Xcode's
    /// `customClassName`), kept for the app; Cairn stores the transformed bytes.
    public var customClassName: String?

    /// Describes an attribute.
    public init(
        _ name: String, _ type: AttributeType, optional: Bool = true, default defaultValue: Value? = nil,
        indexed: Bool = false, transient: Bool = false, userInfo: [String: String] = [:],
        renamingIdentifier: String? = nil, elementID: String? = nil, customClassName: String? = nil
    ) {
        self.name = name
        self.type = type
        self.isOptional = optional
        self.defaultValue = defaultValue == .null ? nil : defaultValue
        self.isIndexed = indexed
        self.isTransient = transient
        self.userInfo = userInfo
        self.renamingIdentifier = renamingIdentifier
        self.elementID = elementID
        self.customClassName = customClassName
    }
}
