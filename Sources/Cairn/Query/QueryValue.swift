import Foundation

/// Value rules of queries: which constants may be compared with an attribute, and how values
/// of different numeric kinds order.
enum QueryValue {
    /// `value` as a constant to compare with an attribute of `type`; nil when the two cannot be
    /// compared (a date with a string, a number with a string…).
    static func coerce(_ value: Value, to type: AttributeType) -> Value? {
        guard !value.isNaN else { return Optional.none }
        switch (value, type) {
        case (.null, _): return .null
        case (.string(let text), .string), (.uri(let text), .string): return .string(text)
        case (.string(let text), .uri), (.uri(let text), .uri): return .uri(text)
        case (.string(let text), .uuid): return UUID(uuidString: text).map(Value.uuid)
        case (.uuid, .uuid), (.date, .date), (.binary, .binary), (.binary, .transformable), (.boolean, .boolean): return value
        case (.integer(let number), .boolean) where number == 0 || number == 1: return .boolean(number == 1)
        case (.integer(let number), .decimal): return .decimal(Decimal(number))
        case (.integer(let number), .double), (.integer(let number), .float): return .double(Double(number))
        case (.double(let number), .decimal): return number.isFinite ? .decimal(Decimal(number)) : .double(number)
        case (.float(let number), _) where isNumber(type): return coerce(.double(Double(number)), to: type)
        case (.integer, _), (.double, _), (.decimal, _):
            // (Not a ternary: `nil` there would be read as Value.null.)
            guard isNumber(type) else { return Optional.none }
            return value
        default: return Optional.none
        }
    }

    static func isNumber(_ type: AttributeType) -> Bool {
        type.integerRange != nil || type == .double || type == .float || type == .decimal
    }

    /// Floats are compared as doubles.
    static func normalized(_ value: Value) -> Value {
        if case .float(let number) = value { return .double(Double(number)) }
        return value
    }

    /// Orders two values; numbers of different kinds by their numeric value (decimals exactly
    /// against integers); nil when they cannot be ordered. `.null` sorts first.
    static func order(_ lhs: Value, _ rhs: Value) -> ComparisonResult? {
        switch (normalized(lhs), normalized(rhs)) {
        case (.decimal(let a), .integer(let b)): return compare(a, Decimal(b))
        case (.integer(let a), .decimal(let b)): return compare(Decimal(a), b)
        case (.decimal(let a), .double(let b)): return compare(double(a), b)
        case (.double(let a), .decimal(let b)): return compare(a, double(b))
        case (.string(let a), .uri(let b)), (.uri(let a), .string(let b)): return compare(a, b)
        case (let a, let b): return Value.order(a, b)
        }
    }

    /// A decimal as the nearest double (parsed from its text: correctly rounded, unlike
    /// NSDecimalNumber's doubleValue), the form numbers of different kinds meet in.
    static func double(_ decimal: Decimal) -> Double {
        Double(decimal.description) ?? .nan
    }

    private static func compare<T: Comparable>(_ a: T, _ b: T) -> ComparisonResult { ComparisonRules.order(a, b) }
}
