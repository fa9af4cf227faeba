import Foundation

/// A Swift type whose values an attribute can hold: set and read them without ``Value``.
///
/// ```swift
/// try person.setValue("Ada", forKey: "name")
/// try person.setValue(36, forKey: "age")                 // an Int into an Integer 16 attribute
/// try person.setValue(nil as Date?, forKey: "birthday")  // nil clears
/// let age: Int? = try person.value(forKey: "age")
/// let name: String = try person.value(forKey: "name")    // throws if the name is nil
/// ```
///
/// Conforming: `String`, `Bool`, `Int`, `Int8`…`Int64`, `UInt`, `UInt8`…`UInt64`, `Double`,
/// `Float`, `Decimal`, `Date`, `UUID`, `URL`, `Data` (bytes: not `[UInt8]`, which would make an
/// array literal of numbers a binary value), ``Value`` itself, and the optional of each (nil is
/// no value). An integer is range-checked against the attribute's type when it is set. Reading
/// converts between numbers: an integer type takes any whole number in its range; `Double` and
/// `Float` take any number, to the nearest value they hold; `Decimal` takes decimals and integers.
public protocol AttributeValue: Sendable {
    /// The value as the store keeps it; nil when it has no stored form (an unsigned integer
    /// above `Int64.max`).
    var storedValue: Value? { get }
    /// The Swift value of a stored value; nil when the stored value is not one of this type
    /// (or, for a non-optional type, is `.null`).
    init?(storedValue: Value)
}

extension Value: AttributeValue {
    /// The value itself.
    @inlinable
    public var storedValue: Value? { self }
    /// The value itself.
    @inlinable
    public init?(storedValue: Value) { self = storedValue }
}

extension Optional: AttributeValue where Wrapped: AttributeValue {
    /// The wrapped value's stored form, or `.null`.
    @inlinable
    public var storedValue: Value? {
        guard let self else { return .null }
        return self.storedValue
    }
    /// nil for `.null`, else the wrapped type's reading of the value.
    @inlinable
    public init?(storedValue: Value) {
        if case .null = storedValue {
            self = .none
            return
        }
        guard let wrapped = Wrapped(storedValue: storedValue) else { return nil }
        self = .some(wrapped)
    }
}

extension String: AttributeValue {
    /// A string value.
    @inlinable
    public var storedValue: Value? { .string(self) }
    /// The text of a string or URI value.
    @inlinable
    public init?(storedValue: Value) {
        switch storedValue {
        case .string(let text), .uri(let text): self = text
        default: return nil
        }
    }
}

extension Bool: AttributeValue {
    /// A boolean value.
    @inlinable
    public var storedValue: Value? { .boolean(self) }
    /// A boolean value's flag.
    @inlinable
    public init?(storedValue: Value) {
        guard case .boolean(let flag) = storedValue else { return nil }
        self = flag
    }
}

/// The integers: stored as ``Value/integer(_:)``; read from an integer, double or float value
/// that is a whole number in the type's range.
public protocol IntegerAttributeValue: AttributeValue, FixedWidthInteger {}

extension IntegerAttributeValue {
    /// An integer value; nil above `Int64.max`.
    @inlinable
    public var storedValue: Value? { Int64(exactly: self).map(Value.integer) }
    /// An integer value in this type's range, or a floating-point or decimal value that is a
    /// whole number in it.
    @inlinable
    public init?(storedValue: Value) {
        switch storedValue {
        case .integer(let number): guard let exact = Self(exactly: number) else { return nil }; self = exact
        case .double(let number): guard let exact = Self(exactly: number) else { return nil }; self = exact
        case .float(let number): guard let exact = Self(exactly: number) else { return nil }; self = exact
        default: return nil
        }
    }
}

extension Int: IntegerAttributeValue {}
extension Int8: IntegerAttributeValue {}
extension Int16: IntegerAttributeValue {}
extension Int32: IntegerAttributeValue {}
extension Int64: IntegerAttributeValue {}
extension UInt: IntegerAttributeValue {}
extension UInt8: IntegerAttributeValue {}
extension UInt16: IntegerAttributeValue {}
extension UInt32: IntegerAttributeValue {}
extension UInt64: IntegerAttributeValue {}

extension Double: AttributeValue {
    /// A double value.
    @inlinable
    public var storedValue: Value? { .double(self) }
    /// A double, float or integer value (an integer beyond 2^53 to the nearest double).
    @inlinable
    public init?(storedValue: Value) {
        switch storedValue {
        case .double(let number): self = number
        case .float(let number): self = Double(number)
        case .integer(let number): self = Double(number)
        default: return nil
        }
    }
}

extension Float: AttributeValue {
    /// A float value.
    @inlinable
    public var storedValue: Value? { .float(self) }
    /// A float, double (to the nearest float) or integer value.
    @inlinable
    public init?(storedValue: Value) {
        switch storedValue {
        case .float(let number): self = number
        case .double(let number): self = Float(number)
        case .integer(let number): self = Float(number)
        default: return nil
        }
    }
}

extension Decimal: AttributeValue {
    /// A decimal value.
    @inlinable
    public var storedValue: Value? { .decimal(self) }
    /// A decimal or integer value.
    @inlinable
    public init?(storedValue: Value) {
        switch storedValue {
        case .decimal(let number): self = number
        case .integer(let number): self = Decimal(number)
        default: return nil
        }
    }
}

extension Date: AttributeValue {
    /// A date value.
    @inlinable
    public var storedValue: Value? { .date(self) }
    /// A date value.
    @inlinable
    public init?(storedValue: Value) {
        guard case .date(let date) = storedValue else { return nil }
        self = date
    }
}

extension UUID: AttributeValue {
    /// A UUID value.
    @inlinable
    public var storedValue: Value? { .uuid(self) }
    /// A UUID value.
    @inlinable
    public init?(storedValue: Value) {
        guard case .uuid(let id) = storedValue else { return nil }
        self = id
    }
}

extension URL: AttributeValue {
    /// A URI value: the URL's absolute string.
    @inlinable
    public var storedValue: Value? { .uri(absoluteString) }
    /// A URI (or string) value that parses as a URL.
    @inlinable
    public init?(storedValue: Value) {
        switch storedValue {
        case .uri(let text), .string(let text):
            guard let url = URL(string: text) else { return nil }
            self = url
        default: return nil
        }
    }
}

extension Data: AttributeValue {
    /// A binary value.
    @inlinable
    public var storedValue: Value? { .binary([UInt8](self)) }
    /// A binary value's bytes.
    @inlinable
    public init?(storedValue: Value) {
        guard case .binary(let bytes) = storedValue else { return nil }
        self = Data(bytes)
    }
}

extension Value {
    /// This value in the form an attribute of `type` keeps, when it is that type's or converts
    /// to it without surprise: an integer to a floating-point or decimal attribute (a double
    /// only when exact), a double to a float attribute (to the nearest float), a float to a
    /// double attribute, text to a URI attribute and back. nil when it does not fit (an integer
    /// out of the type's range included).
    public func converted(to type: AttributeType) -> Value? {
        if fits(type) { return self }
        switch (self, type) {
        case (.integer(let number), .double): return Double(exactly: number).map(Value.double)
        case (.integer(let number), .float): return Float(exactly: number).map(Value.float)
        case (.integer(let number), .decimal): return .decimal(Decimal(number))
        case (.double(let number), .float):
            let nearest = Float(number)
            return nearest.isFinite || !number.isFinite ? Value.float(nearest).converted(to: type) : nil
        case (.float(let number), .double): return Value.double(Double(number)).converted(to: type)
        case (.string(let text), .uri): return .uri(text)
        case (.uri(let text), .string): return .string(text)
        default: return nil
        }
    }

    /// Why this value does not fit an attribute of `type`, for a message.
    package func misfit(_ type: AttributeType) -> String {
        if case .integer(let number) = self, let range = type.integerRange {
            return "\(number) is out of the range of \(type) (\(range.lowerBound)...\(range.upperBound))"
        }
        if isNaN { return "NaN is not a value an attribute can hold" }
        return "it takes \(type), not \(typeName) \(self)"
    }
}
