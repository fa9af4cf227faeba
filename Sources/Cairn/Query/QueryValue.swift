import Foundation

/// Value rules of queries: which constants may be compared with an attribute, and how values
/// of different numeric kinds order.
enum QueryValue {
    /// `value` as a constant to compare with an attribute of `type`; nil when the two cannot be
    /// compared (a date with a string, a number with a string…).
    static func coerce(_ value: Value, to type: AttributeType) -> Value? {
        guard !value.isNaN else { return Optional.none }
        // By value, exhaustively: a new kind of value is a compile error here until it says
        // which attributes it compares with. (`Optional.none`, not `nil`, which would read as
        // Value.null.)
        switch value {
        case .null: return .null
        case .string(let text):
            switch type {
            case .string: return .string(text)
            case .uri: return .uri(text)
            case .uuid: return UUID(uuidString: text).map(Value.uuid)
            default: return Optional.none
            }
        case .uri(let text):
            if type == .string { return .string(text) }
            return type == .uri ? .uri(text) : Optional.none
        case .uuid: return type == .uuid ? value : Optional.none
        case .date: return type == .date ? value : Optional.none
        case .boolean: return type == .boolean ? value : Optional.none
        case .binary:
            switch type {
            case .binary, .transformable: return value
            default: return Optional.none
            }
        case .integer(let number):
            switch type {
            case .boolean: return number == 0 || number == 1 ? .boolean(number == 1) : Optional.none
            case .decimal: return .decimal(Decimal(number))
            case .double, .float: return .double(Double(number))
            default: return isNumber(type) ? value : Optional.none
            }
        case .double(let number):
            if type == .decimal { return number.isFinite ? .decimal(Decimal(number)) : .double(number) }
            return isNumber(type) ? value : Optional.none
        case .float(let number): return isNumber(type) ? coerce(.double(Double(number)), to: type) : Optional.none
        case .decimal: return isNumber(type) ? value : Optional.none
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
