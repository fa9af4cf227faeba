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

    /// Describes an attribute.
    public init(_ name: String, _ type: AttributeType, optional: Bool = true, default defaultValue: Value? = nil,
                indexed: Bool = false, transient: Bool = false, userInfo: [String: String] = [:]) {
        self.name = name
        self.type = type
        self.isOptional = optional
        self.defaultValue = defaultValue == .null ? nil : defaultValue
        self.isIndexed = indexed
        self.isTransient = transient
        self.userInfo = userInfo
    }
}
