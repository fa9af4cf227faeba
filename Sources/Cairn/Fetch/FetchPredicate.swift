import Foundation

/// A comparison of an attribute with a value.
public enum ComparisonOperator: String, Sendable, Hashable {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
}

/// A condition on objects: comparisons of attributes combined with and, or and not.
///
/// ```swift
/// let adults: FetchPredicate = .and([.compare("age", .greaterOrEqual, 18), .equal("city", "Lyon")])
/// ```
///
/// The query issue adds a parser for NSPredicate format strings that produces these values.
public indirect enum FetchPredicate: Sendable, Hashable {
    /// `key op value`. Comparing with `.null` is true only for `==` (both nil) and `!=`.
    case comparison(key: String, ComparisonOperator, Value)
    case and([FetchPredicate])
    case or([FetchPredicate])
    case not(FetchPredicate)
    /// Always true or always false.
    case constant(Bool)

    /// `key == value`.
    public static func equal(_ key: String, _ value: Value) -> FetchPredicate { .comparison(key: key, .equal, value) }
    /// `key op value`.
    public static func compare(_ key: String, _ op: ComparisonOperator, _ value: Value) -> FetchPredicate { .comparison(key: key, op, value) }

    /// Resolves attribute names against an entity once, for evaluating many objects.
    func compile(for entity: EntityDescription) throws -> CompiledFetchPredicate {
        switch self {
        case .comparison(let key, let op, let value):
            guard let position = entity.attributePosition(key) else {
                throw StoreError(.unknownName, "predicate: \(entity.name) has no attribute \(key)", entity: entity.name, property: key)
            }
            let attribute = entity.attributes[position]
            let numeric: Set<String> = ["integer", "double", "float"]
            let isNumberAttribute = attribute.type == .double || attribute.type == .float || attribute.type.integerRange != nil
            guard value.fits(attribute.type) || (isNumberAttribute && numeric.contains(value.typeName)) else {
                throw StoreError(.typeMismatch, "predicate: \(entity.name).\(key) is \(attribute.type); cannot compare it with \(value.typeName) \(value)",
                                 entity: entity.name, property: key)
            }
            return .comparison(position, op, value)
        case .and(let parts): return .and(try parts.map { try $0.compile(for: entity) })
        case .or(let parts): return .or(try parts.map { try $0.compile(for: entity) })
        case .not(let part): return .not(try part.compile(for: entity))
        case .constant(let flag): return .constant(flag)
        }
    }
}

/// A predicate with attribute positions resolved.
indirect enum CompiledFetchPredicate: Sendable {
    case comparison(Int, ComparisonOperator, Value)
    case and([CompiledFetchPredicate])
    case or([CompiledFetchPredicate])
    case not(CompiledFetchPredicate)
    case constant(Bool)

    func evaluate(_ values: [PropertyValue]) -> Bool {
        evaluate { values[$0] }
    }

    /// Evaluates with values read one position at a time (so that only the compared ones are
    /// decoded).
    func evaluate(_ value: (Int) -> PropertyValue) -> Bool {
        switch self {
        case .comparison(let position, let op, let expected):
            guard case .attribute(var actual) = value(position) else { return false }
            var expected = expected
            if case .float(let number) = actual { actual = .double(Double(number)) }
            if case .float(let number) = expected { expected = .double(Double(number)) }
            if actual == .null || expected == .null {
                switch op {
                case .equal: return actual == expected
                case .notEqual: return actual != expected
                default: return false
                }
            }
            guard let order = Value.order(actual, expected) else { return op == .notEqual }
            switch op {
            case .equal: return order == .orderedSame
            case .notEqual: return order != .orderedSame
            case .less: return order == .orderedAscending
            case .lessOrEqual: return order != .orderedDescending
            case .greater: return order == .orderedDescending
            case .greaterOrEqual: return order != .orderedAscending
            }
        case .and(let parts): return parts.allSatisfy { $0.evaluate(value) }
        case .or(let parts): return parts.contains { $0.evaluate(value) }
        case .not(let part): return !part.evaluate(value)
        case .constant(let flag): return flag
        }
    }
}
