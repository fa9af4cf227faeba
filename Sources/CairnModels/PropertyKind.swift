import Cairn

/// What a persisted property's Swift type makes it.
@usableFromInline
enum PropertyKind {
    /// An attribute of a type, stored as the type's values (`scalar`), as a `RawRepresentable`'s
    /// raw values (`rawValue`) or as JSON text (`json`, a `Codable` value).
    case attribute(AttributeType, optional: Bool, coding: ValueCoding)
    /// A composite attribute: a `@Composite` struct, each element stored as an attribute.
    case composite(any CompositeAttribute.Type, optional: Bool)
    /// A to-one relationship to objects of a class.
    case toOne(any ManagedModel.Type, optional: Bool)
    /// A to-many relationship (an array of objects of a class).
    case toMany(any ManagedModel.Type)
    /// A type Cairn cannot store (named when the model is derived or bound).
    case unsupported

    /// How an attribute's Swift values become stored values.
    @usableFromInline
    enum ValueCoding { case scalar, rawValue, json }

    init(_ type: Any.Type) {
        var base = type
        var optional = false
        if let wrapper = type as? any OptionalValue.Type {
            optional = true
            base = wrapper.wrappedType
        }
        if let model = base as? any ManagedModel.Type {
            self = .toOne(model, optional: optional)
        } else if !optional, let many = base as? any ToManyValue.Type {
            self = .toMany(many.elementType)
        } else if let composite = base as? any CompositeAttribute.Type {
            self = .composite(composite, optional: optional)
        } else if let scalar = base as? any ScalarAttribute.Type {
            self = .attribute(scalar.attributeType, optional: optional, coding: .scalar)
        } else if let raw = base as? any RawRepresentable.Type, let rawType = ValueCodec.rawScalarType(raw) {
            self = .attribute(rawType.attributeType, optional: optional, coding: .rawValue)
        } else if base is any Codable.Type {
            self = .attribute(.string, optional: optional, coding: .json)
        } else {
            self = .unsupported
        }
    }

    /// Whether the property may be nil (a to-many is an array: never nil).
    var isOptional: Bool {
        switch self {
        case .attribute(_, let optional, _), .composite(_, let optional), .toOne(_, let optional): optional
        case .toMany, .unsupported: false
        }
    }

    /// Whether it is a relationship.
    var isRelationship: Bool {
        switch self {
        case .toOne, .toMany: true
        case .attribute, .composite, .unsupported: false
        }
    }
}

/// `Optional`, seen without its wrapped type.
protocol OptionalValue {
    /// The wrapped type.
    static var wrappedType: Any.Type { get }
    /// `nil` of this type.
    static var none: Any { get }
    /// The wrapped value (nil for nil).
    var wrapped: Any? { get }
    /// `value` (of the wrapped type) as this optional; nil when it is not of the wrapped type.
    static func wrapping(_ value: Any) -> Any?
}

extension Optional: OptionalValue {
    static var wrappedType: Any.Type { Wrapped.self }
    static var none: Any {
        let nothing: Wrapped? = nil
        return nothing as Any
    }
    var wrapped: Any? { self.map { $0 as Any } }
    static func wrapping(_ value: Any) -> Any? { (value as? Wrapped).map { Self.some($0) as Any } }
}

/// An array of objects of a `@Managed` class: a to-many relationship.
protocol ToManyValue {
    /// The class of its objects.
    static var elementType: any ManagedModel.Type { get }
    /// The objects, as an array of the class (those of another class are left out).
    static func make(_ objects: [AnyObject]) -> Any
    /// The objects it holds.
    var objects: [any ManagedModel] { get }
}

extension Array: ToManyValue where Element: ManagedModel {
    static var elementType: any ManagedModel.Type { Element.self }
    static func make(_ objects: [AnyObject]) -> Any { objects.compactMap { $0 as? Element } }
    var objects: [any ManagedModel] { self }
}

/// The Swift types an attribute holds as they are, each with the attribute type it is stored as.
public protocol ScalarAttribute: AttributeValue {
    /// The attribute type derived for a property of this type.
    static var attributeType: AttributeType { get }
    /// The value a property of this type reads as when it has none to read (nil in the store
    /// for a non-optional property, or an object that no longer exists): zero, empty, false.
    static var placeholder: Self { get }
}

extension String: ScalarAttribute {
    public static var attributeType: AttributeType { .string }
    public static var placeholder: String { "" }
}
extension Bool: ScalarAttribute {
    public static var attributeType: AttributeType { .boolean }
    public static var placeholder: Bool { false }
}
extension Int: ScalarAttribute {
    public static var attributeType: AttributeType { .integer64 }
    public static var placeholder: Int { 0 }
}
extension Int64: ScalarAttribute {
    public static var attributeType: AttributeType { .integer64 }
    public static var placeholder: Int64 { 0 }
}
extension Int32: ScalarAttribute {
    public static var attributeType: AttributeType { .integer32 }
    public static var placeholder: Int32 { 0 }
}
extension Int16: ScalarAttribute {
    public static var attributeType: AttributeType { .integer16 }
    public static var placeholder: Int16 { 0 }
}
extension Int8: ScalarAttribute {
    public static var attributeType: AttributeType { .integer16 }
    public static var placeholder: Int8 { 0 }
}
extension UInt8: ScalarAttribute {
    public static var attributeType: AttributeType { .integer16 }
    public static var placeholder: UInt8 { 0 }
}
extension UInt16: ScalarAttribute {
    public static var attributeType: AttributeType { .integer32 }
    public static var placeholder: UInt16 { 0 }
}
extension UInt32: ScalarAttribute {
    public static var attributeType: AttributeType { .integer64 }
    public static var placeholder: UInt32 { 0 }
}
extension Double: ScalarAttribute {
    public static var attributeType: AttributeType { .double }
    public static var placeholder: Double { 0 }
}
extension Float: ScalarAttribute {
    public static var attributeType: AttributeType { .float }
    public static var placeholder: Float { 0 }
}
extension Decimal: ScalarAttribute {
    public static var attributeType: AttributeType { .decimal }
    public static var placeholder: Decimal { 0 }
}
extension Date: ScalarAttribute {
    public static var attributeType: AttributeType { .date }
    public static var placeholder: Date { Date(timeIntervalSinceReferenceDate: 0) }
}
extension Data: ScalarAttribute {
    public static var attributeType: AttributeType { .binary }
    public static var placeholder: Data { Data() }
}
extension UUID: ScalarAttribute {
    public static var attributeType: AttributeType { .uuid }
    public static var placeholder: UUID { UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) }
}
extension URL: ScalarAttribute {
    public static var attributeType: AttributeType { .uri }
    public static var placeholder: URL { URL(string: "about:blank") ?? URL(fileURLWithPath: "/") }
}
extension UInt64: ScalarAttribute {
    public static var attributeType: AttributeType { .integer64 }
    public static var placeholder: UInt64 { 0 }
}
extension UInt: ScalarAttribute {
    public static var attributeType: AttributeType { .integer64 }
    public static var placeholder: UInt { 0 }
}
