import Foundation

/// A condition on objects, built in Swift or parsed from an NSPredicate format string.
///
/// ```swift
/// let adults: FetchPredicate = .and([.compare("age", .greaterOrEqual, minimumAge), .equal("city", "Lyon")])
/// let same = try FetchPredicate(format: "age >= %d AND city == %@", 18, "Lyon")
/// let prolific = try FetchPredicate(format: "books.@count > 2 AND ANY books.title CONTAINS[c] %@", "swift")
/// ```
///
/// The format syntax is NSPredicate's (see ``PredicateSyntax``): comparisons, `BETWEEN`, `IN`,
/// string operators with `[c]`/`[d]`, `ANY`/`ALL`/`NONE`, key paths across relationships,
/// collection operators. Errors in the text are ``PredicateSyntaxError``s with the column;
/// keys the entity lacks and values of the wrong type are ``StoreError``s
/// (``StoreError/Code/invalidPredicate`` or ``StoreError/Code/unknownName``) naming the key, raised
/// when the predicate is used.
public enum FetchPredicate: Sendable, Hashable {
    // Only `not` is boxed: a comparison, the common predicate (one per lookup by key), is
    // made and dropped without an allocation.
    /// `key op value` on an attribute of the fetched entity.
    case comparison(key: String, PredicateOperator, Value)
    /// True when every predicate is (true for none).
    case and([FetchPredicate])
    /// True when any predicate is (false for none).
    case or([FetchPredicate])
    /// True when the predicate is false.
    indirect case not(FetchPredicate)
    /// Always true or always false.
    case constant(Bool)
    /// A predicate in NSPredicate's syntax.
    case syntax(PredicateSyntax)

    /// `key == value`.
    public static func equal(_ key: String, _ value: Value) -> FetchPredicate { .comparison(key: key, .equal, value) }
    /// `key op value`.
    public static func compare(_ key: String, _ op: PredicateOperator, _ value: Value) -> FetchPredicate { .comparison(key: key, op, value) }
    /// `key == value`, for a plain Swift value (`.equal("age", age)` with `age: Int?`; nil
    /// matches objects without a value).
    public static func equal<T: AttributeValue>(_ key: String, _ value: T) -> FetchPredicate { .comparison(key: key, .equal, value.comparand) }
    /// `key op value`, for a plain Swift value.
    public static func compare<T: AttributeValue>(_ key: String, _ op: PredicateOperator, _ value: T) -> FetchPredicate {
        .comparison(key: key, op, value.comparand)
    }

    /// Parses an NSPredicate format string, replacing `%@`, `%K`, `%d`… by `arguments` in order.
    ///
    /// - Throws: ``PredicateSyntaxError`` saying what was expected and at which column, or
    ///   which argument does not fit its specifier.
    public init(format: String, _ arguments: any PredicateArgument...) throws(PredicateSyntaxError) {
        self = .syntax(try PredicateSyntax.parse(format, arguments: arguments))
    }

    /// Parses an NSPredicate format string with its arguments as an array.
    public init(format: String, argumentArray arguments: [any PredicateArgument]) throws(PredicateSyntaxError) {
        self = .syntax(try PredicateSyntax.parse(format, arguments: arguments))
    }

    /// The predicate in the syntax tree form the query engine compiles.
    public var syntax: PredicateSyntax {
        switch self {
        case .comparison(let key, let op, let value):
            .comparison(.keyPath(key.split(separator: ".").map(String.init)), op, .constant(value))
        case .and(let parts): .and(parts.map(\.syntax))
        case .or(let parts): .or(parts.map(\.syntax))
        case .not(let part): .not(part.syntax)
        case .constant(let flag): flag ? .truePredicate : .falsePredicate
        case .syntax(let syntax): syntax
        }
    }

    /// Resolves the predicate against an entity, for evaluating many objects.
    func compile(for entity: EntityDescription, in model: Model) throws -> CompiledPredicate {
        try PredicateCompiler(model: model, entity: entity).compile(syntax)
    }
}

extension AttributeValue {
    /// The value a comparison holds. An unsigned integer above `Int64.max` (which no attribute
    /// holds) is compared as the exact decimal, which is above every stored integer too.
    var comparand: Value {
        if let stored = storedValue { return stored }
        if let integer = self as? any BinaryInteger, let exact = Decimal(string: String(describing: integer)) { return .decimal(exact) }
        return .null
    }
}
