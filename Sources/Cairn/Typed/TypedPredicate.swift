import Foundation

/// Foundation's `#Predicate` over typed models, translated into the predicate language so that
/// the same engine (indexes included) evaluates it.
///
/// ```swift
/// let adults = try FetchPredicate(#Predicate<Person> { $0.age >= 18 && $0.email != nil })
/// let people = try context.fetch(Person.self, predicate: adults)
/// ```
///
/// Supported: `&&`, `||`, `!`; `==`, `!=`, `<`, `<=`, `>`, `>=` between a property and a value
/// (or `nil`); `property.contains(text)`, `property.starts(with: text)`; `list.contains(property)`;
/// `(a...b).contains(property)` and `(a..<b).contains(property)`; a Boolean property as a
/// condition (`$0.isActive`). Optional properties as SwiftData users write them:
/// `$0.age ?? 0 >= 90`, `$0.age! >= 90` (an object whose age is nil matches no condition that
/// unwraps it, negated or not),
/// `$0.nickname?.starts(with: "A") == true`, `$0.nickname?.contains("x") ?? false`,
/// `$0.active ?? false`, `== nil` and `!= nil`. Other expressions throw
/// ``StoreError/Code/invalidPredicate`` naming the expression.
extension FetchPredicate {
    /// Translates a Foundation predicate over a typed model.
    public init<T: StoredModel>(_ predicate: Predicate<T>) throws {
        try self.init(typed: predicate, entity: T.entityName)
    }

    /// Translates a Foundation predicate over any type whose properties are named as the
    /// entity's (a ``StoredModel``, or a type that names its key paths:
    /// ``PredicateKeyPathNaming``).
    @usableFromInline
    package init<T>(typed predicate: Predicate<T>, entity: String) throws {
        if let (name, value) = TypedLookups.lookup(predicate.expression) {
            self = .comparison(key: name, .equal, value)
            return
        }
        do {
            var scope = TypedPredicateScope()
            scope.variables[predicate.variable.key] = .evaluatedObject
            switch try translate(predicate.expression, scope).predicate() {
            case .comparison(.keyPath(let keys), let op, .constant(let value), options: [], modifier: .direct) where keys.count == 1:
                self = .comparison(key: keys[0], op, value)  // the form a lookup by unique key is answered in
            case let syntax:
                self = .syntax(syntax)
            }
        } catch var error as StoreError {
            error.entity = error.entity ?? entity
            throw error
        }
    }
}

/// A type whose key paths stand for stored properties that their descriptions do not name
/// (CairnModels' `@Managed` classes, whose properties are computed): the translation of a
/// `#Predicate` asks it what each key path names.
public protocol PredicateKeyPathNaming {
    /// The stored property a key path of this type stands for; nil when it stands for none (a
    /// computed or transient property).
    static func predicateProperty(for keyPath: AnyKeyPath) -> PredicateProperty?
}

/// What a key path of a ``PredicateKeyPathNaming`` type stands for.
public struct PredicateProperty: Sendable, Hashable {
    /// The attribute's or relationship's name.
    public var name: String
    /// Whether the attribute holds its Swift values as JSON text (a `Codable` value): a
    /// constant compared with it for equality is encoded the same way.
    public var storesJSON: Bool

    /// Describes what a key path stands for.
    public init(name: String, storesJSON: Bool = false) {
        self.name = name
        self.storesJSON = storesJSON
    }
}

/// What a piece of a Foundation predicate becomes.
enum TypedPredicatePart {
    case predicate(PredicateSyntax)
    case expression(PredicateOperand)
    /// `value ?? fallback`: the value, or the fallback where it is nil.
    case coalesced(PredicateOperand, fallback: PredicateOperand)
    /// `value?.condition` (an optional `Bool`): nil where `value` is nil, else the condition.
    case optionalCondition(PredicateOperand, PredicateSyntax)
    /// `value!`: a condition on it holds only where the value is not nil, even negated.
    case unwrapped(PredicateOperand)
    /// A condition over unwrapped values (`$0.age! >= 90`): it holds where every one of them is
    /// present and the condition holds. Negating it negates the condition only: an object
    /// where an unwrapped value is nil matches no condition that unwraps it (where Swift would
    /// stop the program).
    case guarded([PredicateOperand], PredicateSyntax)

    func expression() throws -> PredicateOperand {
        switch self {
        case .expression(let expression), .unwrapped(let expression): return expression
        default: throw unsupported("a condition where a value was expected")
        }
    }

    /// The part as a condition. A Boolean value stands for itself being true (`$0.isActive`);
    /// `flag ?? false` is true where the flag is; `flag ?? true` also where it is nil.
    func predicate() throws -> PredicateSyntax {
        switch self {
        case .predicate(let predicate): return predicate
        case .guarded(let values, let condition):
            return .and(values.map { .comparison($0, .notEqual, .constant(.null)) } + [condition])
        case .unwrapped(let value):
            return .and([.comparison(value, .notEqual, .constant(.null)), .comparison(value, .equal, .constant(.boolean(true)))])
        case .expression(let value): return .comparison(value, .equal, .constant(.boolean(true)))
        case .coalesced(let value, .constant(.boolean(let fallback))):
            return fallback ? .comparison(value, .notEqual, .constant(.boolean(false))) : .comparison(value, .equal, .constant(.boolean(true)))
        case .coalesced: throw unsupported("?? with a fallback that is not a Boolean constant, used as a condition")
        case .optionalCondition: throw unsupported("an optional condition without ?? or ==")
        }
    }

    /// The part as a condition and the unwrapped values it needs present.
    func guardedCondition() throws -> (values: [PredicateOperand], condition: PredicateSyntax) {
        switch self {
        case .guarded(let values, let condition): return (values, condition)
        case .unwrapped(let value): return ([value], .comparison(value, .equal, .constant(.boolean(true))))
        default: return ([], try predicate())
        }
    }

    /// A condition that needs `values` present (a plain condition when there are none).
    static func guarding(_ values: [PredicateOperand], _ condition: PredicateSyntax) -> TypedPredicatePart {
        var unique: [PredicateOperand] = []
        for value in values where !unique.contains(value) { unique.append(value) }
        return unique.isEmpty ? .predicate(condition) : .guarded(unique, condition)
    }

    /// `lhs op rhs`, with `??` on either side spelled out: `(x ?? d) op v` is
    /// `(x != nil AND x op v) OR (x == nil AND d op v)`.
    static func compare(_ lhs: TypedPredicatePart, _ op: PredicateOperator, _ rhs: TypedPredicatePart) throws -> TypedPredicatePart {
        // `x! op v` holds where x is present and `x op v` holds (see `guarded`).
        if case .unwrapped(let value) = lhs {
            let (values, condition) = try compare(.expression(value), op, rhs).guardedCondition()
            return guarding([value] + values, condition)
        }
        if case .unwrapped(let value) = rhs {
            let (values, condition) = try compare(lhs, op, .expression(value)).guardedCondition()
            return guarding([value] + values, condition)
        }
        if case .coalesced(let value, let fallback) = lhs {
            return .predicate(
                .or([
                    .and([.comparison(value, .notEqual, .constant(.null)), try compare(.expression(value), op, rhs).predicate()]),
                    .and([.comparison(value, .equal, .constant(.null)), try compare(.expression(fallback), op, rhs).predicate()])
                ]))
        }
        if case .coalesced(let value, let fallback) = rhs {
            return .predicate(
                .or([
                    .and([.comparison(value, .notEqual, .constant(.null)), try compare(lhs, op, .expression(value)).predicate()]),
                    .and([.comparison(value, .equal, .constant(.null)), try compare(lhs, op, .expression(fallback)).predicate()])
                ]))
        }
        if op == .equal || op == .notEqual, case .expression(.constant(let constant)) = rhs {
            switch (lhs, constant) {
            case (.optionalCondition(let value, _), .null):
                return .predicate(.comparison(value, op, .constant(.null)))
            case (.optionalCondition(let value, let condition), .boolean(let flag)):
                // Equal to true: present and true. Not equal to true: nil or false.
                let present = PredicateSyntax.comparison(value, .notEqual, .constant(.null))
                let holds = flag ? condition : .not(condition)
                return .predicate(op == .equal ? .and([present, holds]) : .not(.and([present, holds])))
            case (.predicate(let condition), .boolean(let flag)):
                return .predicate(flag == (op == .equal) ? condition : .not(condition))
            default: break
            }
        }
        if op == .equal || op == .notEqual, case .expression(.constant) = lhs {
            switch rhs {
            case .optionalCondition, .predicate: return try compare(rhs, op, lhs)
            default: break
            }
        }
        return .predicate(.comparison(try lhs.expression(), op, try rhs.expression()))
    }
}

private func unsupported(_ what: String) -> StoreError {
    StoreError(.invalidPredicate, "#Predicate: \(what) is not supported")
}

/// What the variables of a predicate stand for: the predicate's own input is the evaluated
/// object; the variable of an optional's `flatMap` (`$0.nickname?.…`) is the unwrapped value;
/// inside `contains(where:)`, the element is, and the enclosing closures' variables may not be read.
struct TypedPredicateScope {
    var variables: [PredicateExpressions.VariableID: PredicateOperand] = [:]
    var hidden: Set<PredicateExpressions.VariableID> = []
}

/// A node of a Foundation predicate that Cairn can translate.
protocol TypedPredicateNode {
    func translated(_ scope: TypedPredicateScope) throws -> TypedPredicatePart
}

private func translate(_ node: Any, _ scope: TypedPredicateScope) throws -> TypedPredicatePart {
    guard let node = node as? any TypedPredicateNode else { throw unsupported(unsupportedOperation(node)) }
    return try node.translated(scope)
}

/// An expression Cairn cannot translate, for a message: its operation (the node's type without
/// its generic arguments) and the properties it reads.
private func unsupportedOperation(_ node: Any) -> String {
    let operation = String(describing: type(of: node)).prefix { $0 != "<" }
    var properties: [String] = []
    func collect(_ value: Any, depth: Int) {
        guard depth < 8 else { return }
        if let path = value as? AnyKeyPath {
            properties.append(computedName(path))
            return
        }
        for child in Mirror(reflecting: value).children { collect(child.value, depth: depth + 1) }
    }
    collect(node, depth: 0)
    let reads = properties.isEmpty ? "" : " on \(properties.joined(separator: ", "))"
    return "the operation \(operation)\(reads)"
}

extension PredicateExpressions.Variable: TypedPredicateNode {
    func translated(_ scope: TypedPredicateScope) throws -> TypedPredicatePart {
        guard !scope.hidden.contains(key) else {
            throw unsupported("reading the enclosing object inside contains(where:) (the condition may read only the element)")
        }
        return .expression(scope.variables[key] ?? .evaluatedObject)
    }
}

extension PredicateExpressions.KeyPath: TypedPredicateNode {
    func translated(_ scope: TypedPredicateScope) throws -> TypedPredicatePart {
        let base = try translate(root, scope)
        // A persisted property of a typed class (the common case, checked first).
        if let naming = Root.Output.self as? any PredicateKeyPathNaming.Type, let property = naming.predicateProperty(for: keyPath) {
            switch base {
            case .expression(.evaluatedObject): return .expression(.keyPath([property.name]))
            case .expression(.keyPath(let prefix)): return .expression(.keyPath(prefix + [property.name]))
            default: throw unsupported("the key path \(keyPath) on a computed value")
            }
        }
        // `.count` and `.isEmpty` of a string or a to-many relationship.
        if let measure = CollectionMeasure(Root.Output.self, keyPath) {
            guard case .expression(.keyPath(let path)) = base else { throw unsupported("\(measure) of a computed value") }
            // An array kept as JSON text: empty is the text `[]`; its count is not stored.
            if let property = root as? any JSONPropertyNode, try property.jsonPropertyPath(scope) != nil {
                guard measure == .isEmpty else {
                    throw unsupported("count of \(path.joined(separator: ".")), which is stored as JSON text: compare the whole value with == or !=")
                }
                return .predicate(.comparison(.keyPath(path), .equal, .constant(.string("[]"))))
            }
            let count = PredicateOperand.collectionOperation(.count, collection: path, keyPath: [])
            switch measure {
            case .count: return .expression(count)
            case .isEmpty: return .predicate(.comparison(count, .equal, .constant(.integer(0))))
            }
        }
        let names = try Self.names(keyPath, of: Root.Output.self, on: base)
        switch base {
        case .expression(.evaluatedObject): return .expression(.keyPath(names))
        case .expression(.keyPath(let prefix)): return .expression(.keyPath(prefix + names))
        default: throw unsupported("the key path \(keyPath) on a computed value")
        }
    }

    /// The stored names a key path stands for: those a naming type gives, or, for a plain
    /// struct, those its description shows (`\Person.address?.city`).
    private static func names(_ keyPath: AnyKeyPath, of root: Any.Type, on base: TypedPredicatePart) throws -> [String] {
        if let naming = root as? any PredicateKeyPathNaming.Type {
            guard let property = naming.predicateProperty(for: keyPath) else {
                throw unsupported("\(described(base, root)).\(computedName(keyPath)): only persisted properties can be queried, not computed or transient ones")
            }
            return [property.name]
        }
        // A member of a stored value (a string's, a number's, an array's) names nothing stored.
        if root is any Collection.Type || root is any AttributeValue.Type {
            throw unsupported("\(computedName(keyPath)) of \(described(base, root))")
        }
        let text = String(describing: keyPath)
        let names = text.split(separator: ".").dropFirst().map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "?!")) }
        guard !names.isEmpty, names.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" } }) else {
            throw unsupported("\(computedName(keyPath)) of \(described(base, root))")
        }
        return names
    }
}

/// `.count` or `.isEmpty` of a string or an array.
enum CollectionMeasure: CustomStringConvertible {
    case count, isEmpty

    init?(_ type: Any.Type, _ keyPath: AnyKeyPath) {
        let paths: (count: AnyKeyPath, isEmpty: AnyKeyPath)
        if type == String.self {
            paths = (\String.count, \String.isEmpty)
        } else if let array = type as? any MeasuredArray.Type {
            paths = (array.countPath, array.isEmptyPath)
        } else {
            return nil
        }
        if keyPath == paths.count {
            self = .count
        } else if keyPath == paths.isEmpty {
            self = .isEmpty
        } else {
            return nil
        }
    }

    var description: String { self == .count ? "count" : "isEmpty" }
}

/// An array, whose `count` and `isEmpty` key paths a predicate compares with its own.
protocol MeasuredArray {
    static var countPath: AnyKeyPath { get }
    static var isEmptyPath: AnyKeyPath { get }
}

extension Array: MeasuredArray {
    static var countPath: AnyKeyPath { \[Element].count }
    static var isEmptyPath: AnyKeyPath { \[Element].isEmpty }
}

/// A key path's property for a message: its name when its description shows one, else what
/// it yields (`a computed property (Character?)`).
private func computedName(_ keyPath: AnyKeyPath) -> String {
    if let naming = type(of: keyPath).rootType as? any PredicateKeyPathNaming.Type, let property = naming.predicateProperty(for: keyPath) {
        return property.name
    }
    let text = String(describing: keyPath)
    if let last = text.split(separator: ".").last, !last.contains("<") { return String(last) }
    return "a computed property yielding \(type(of: keyPath).valueType)"
}

/// What a part of a predicate reads, for a message: `Book.title`, or the type.
private func described(_ part: TypedPredicatePart, _ type: Any.Type) -> String {
    if case .expression(.keyPath(let names)) = part { return names.joined(separator: ".") }
    return "\(type)"
}

extension PredicateExpressions.Value: TypedPredicateNode {
    func translated(_ scope: TypedPredicateScope) throws -> TypedPredicatePart {
        guard let argument = value as? any PredicateArgument else {
            if let raw = (value as? any RawRepresentable)?.rawValue as? any AttributeValue, let stored = raw.storedValue {
                return .expression(.constant(stored))  // an enum: its raw value, as stored
            }
            throw unsupported("a value of type \(Output.self)")
        }
        do {
            return .expression(try argument.predicateArgumentValue.expression(describedAs: String(describing: Output.self)))
        } catch {
            throw unsupported("the value \(value) (\(error.expected) expected)")
        }
    }
}

extension PredicateExpressions.NilLiteral: TypedPredicateNode {
    func translated(_ scope: TypedPredicateScope) throws -> TypedPredicatePart { .expression(.constant(.null)) }
}

extension PredicateExpressions.Conjunction: TypedPredicateNode {
    func translated(_ scope: TypedPredicateScope) throws -> TypedPredicatePart {
        let (left, right) = (try translate(lhs, scope).guardedCondition(), try translate(rhs, scope).guardedCondition())
        return .guarding(left.values + right.values, .and([left.condition, right.condition]))
    }
}

extension PredicateExpressions.Disjunction: TypedPredicateNode {
    func translated(_ scope: TypedPredicateScope) throws -> TypedPredicatePart {
        let (left, right) = (try translate(lhs, scope).guardedCondition(), try translate(rhs, scope).guardedCondition())
        return .guarding(left.values + right.values, .or([left.condition, right.condition]))
    }
}

extension PredicateExpressions.Negation: TypedPredicateNode {
    func translated(_ scope: TypedPredicateScope) throws -> TypedPredicatePart {
        let (values, condition) = try translate(wrapped, scope).guardedCondition()
        return .guarding(values, .not(condition))
    }
}

/// A node that compares two operands with one operator of the predicate language.
protocol TypedComparisonNode: TypedPredicateNode {
    /// The left operand, the operator and the right operand (throws for an operator Cairn lacks).
    func comparison() throws -> (lhs: Any, op: PredicateOperator, rhs: Any)
}

extension TypedComparisonNode {
    func translated(_ scope: TypedPredicateScope) throws -> TypedPredicatePart {
        let (lhs, op, rhs) = try comparison()
        if op == .equal || op == .notEqual {
            if let json = try jsonComparison(lhs, op, rhs, scope) ?? jsonComparison(rhs, op, lhs, scope) { return json }
        }
        return try .compare(translate(lhs, scope), op, translate(rhs, scope))
    }

    /// `$0.tags == ["a", "b"]` where `tags` holds JSON text: the constant as the same text.
    private func jsonComparison(
        _ property: Any, _ op: PredicateOperator, _ constant: Any, _ scope: TypedPredicateScope
    ) throws
        -> TypedPredicatePart?
    {
        // (A constant of a type the store holds as it is never meets JSON text: checked first,
        // as it is the common case and the cheapest.)
        guard let constantNode = constant as? any TypedConstantNode, !constantNode.isScalar, let node = property as? any JSONPropertyNode,
            let path = try node.jsonPropertyPath(scope)
        else { return nil }
        let value = constantNode.constant
        if let optional = value as? any TypedOptional, optional.isNone {
            return .predicate(.comparison(.keyPath(path), op, .constant(.null)))
        }
        guard let encodable = value as? any Encodable, let text = try? CodableText.encode(encodable) else {
            throw unsupported("comparing \(path.joined(separator: ".")) with a value that does not encode as JSON")
        }
        return .predicate(.comparison(.keyPath(path), op, .constant(.string(text))))
    }
}

/// A key path node that may name an attribute holding JSON text.
protocol JSONPropertyNode {
    /// The key path's names when its last property holds JSON text; nil otherwise.
    func jsonPropertyPath(_ scope: TypedPredicateScope) throws -> [String]?
}

extension PredicateExpressions.KeyPath: JSONPropertyNode {
    func jsonPropertyPath(_ scope: TypedPredicateScope) throws -> [String]? {
        guard let naming = Root.Output.self as? any PredicateKeyPathNaming.Type, naming.predicateProperty(for: keyPath)?.storesJSON == true,
            case .expression(.keyPath(let names)) = try translated(scope)
        else { return nil }
        return names
    }
}

/// A constant of a predicate, seen without its type.
protocol TypedConstantNode {
    var constant: Any { get }
    /// Whether its type is one the store holds as it is (never compared as JSON text).
    var isScalar: Bool { get }
}

extension PredicateExpressions.Value: TypedConstantNode {
    var constant: Any { value }
    var isScalar: Bool { Output.self is any AttributeValue.Type }
}

/// An optional, seen without its wrapped type.
protocol TypedOptional {
    var isNone: Bool { get }
}

extension Optional: TypedOptional {
    var isNone: Bool { self == nil }
}

extension PredicateExpressions.Equal: TypedComparisonNode {
    func comparison() -> (lhs: Any, op: PredicateOperator, rhs: Any) { (lhs, .equal, rhs) }
}

extension PredicateExpressions.NotEqual: TypedComparisonNode {
    func comparison() -> (lhs: Any, op: PredicateOperator, rhs: Any) { (lhs, .notEqual, rhs) }
}

extension PredicateExpressions.Comparison: TypedComparisonNode {
    func comparison() throws -> (lhs: Any, op: PredicateOperator, rhs: Any) {
        let operators: [PredicateExpressions.ComparisonOperator: PredicateOperator] = [
            .lessThan: .less, .lessThanOrEqual: .lessOrEqual, .greaterThan: .greater, .greaterThanOrEqual: .greaterOrEqual
        ]
        guard let operation = operators[op] else { throw unsupported("the comparison \(op)") }
        return (lhs, operation, rhs)
    }
}

extension PredicateExpressions.CollectionContainsCollection: TypedComparisonNode {
    func comparison() -> (lhs: Any, op: PredicateOperator, rhs: Any) { (base, .contains, other) }
}

extension PredicateExpressions.SequenceStartsWith: TypedComparisonNode {
    func comparison() -> (lhs: Any, op: PredicateOperator, rhs: Any) { (base, .beginsWith, prefix) }
}

extension PredicateExpressions.SequenceContains: TypedPredicateNode {
    func translated(_ scope: TypedPredicateScope) throws -> TypedPredicatePart {
        if let property = sequence as? any JSONPropertyNode, let path = try property.jsonPropertyPath(scope) {
            throw unsupported(
                "contains on \(path.joined(separator: ".")), which is stored as JSON text: compare the whole value with == or !=")
        }
        return .predicate(.comparison(try translate(element, scope).expression(), .in, try translate(sequence, scope).expression()))
    }
}

extension PredicateExpressions.ClosedRange: TypedPredicateNode {
    func translated(_ scope: TypedPredicateScope) throws -> TypedPredicatePart {
        .expression(.list([try translate(lower, scope).expression(), try translate(upper, scope).expression()]))
    }
}

extension PredicateExpressions.RangeExpressionContains: TypedPredicateNode {
    func translated(_ scope: TypedPredicateScope) throws -> TypedPredicatePart {
        let element = try translate(element, scope).expression()
        if let closed = range as? any TypedPredicateNode, case .expression(.list(let bounds)) = try closed.translated(scope), bounds.count == 2,
            String(describing: type(of: range)).contains("ClosedRange")
        {
            return .predicate(.comparison(element, .between, .list(bounds)))
        }
        if let open = range as? any HalfOpenRangeNode {
            let (lower, upper) = try open.bounds(scope)
            return .predicate(.and([.comparison(element, .greaterOrEqual, lower), .comparison(element, .less, upper)]))
        }
        throw unsupported("the range \(type(of: range))")
    }
}

/// A half-open range `a..<b` of a predicate.
protocol HalfOpenRangeNode {
    func bounds(_ scope: TypedPredicateScope) throws -> (PredicateOperand, PredicateOperand)
}

extension PredicateExpressions.Range: HalfOpenRangeNode {
    func bounds(_ scope: TypedPredicateScope) throws -> (PredicateOperand, PredicateOperand) {
        (try translate(lower, scope).expression(), try translate(upper, scope).expression())
    }
}

extension PredicateExpressions.UnaryMinus: TypedPredicateNode {
    /// `-value` of a constant (a negative literal: `$0.balance < -100`); a property's cannot be
    /// negated in the predicate language.
    func translated(_ scope: TypedPredicateScope) throws -> TypedPredicatePart {
        guard case .expression(.constant(let value)) = try translate(wrapped, scope) else { throw unsupported("negating a property (-x)") }
        switch value {
        case .integer(let number) where number != .min: return .expression(.constant(.integer(-number)))
        case .double(let number): return .expression(.constant(.double(-number)))
        case .float(let number): return .expression(.constant(.float(-number)))
        case .decimal(let number): return .expression(.constant(.decimal(-number)))
        default: throw unsupported("negating \(value)")
        }
    }
}

// MARK: - Optionals

extension PredicateExpressions.NilCoalesce: TypedPredicateNode {
    func translated(_ scope: TypedPredicateScope) throws -> TypedPredicatePart {
        let fallback = try translate(rhs, scope).expression()
        switch try translate(lhs, scope) {
        case .expression(let value): return .coalesced(value, fallback: fallback)
        case .optionalCondition(let value, let condition):
            guard case .constant(.boolean(let flag)) = fallback else { throw unsupported("?? with a fallback that is not a Boolean constant") }
            let present = PredicateSyntax.comparison(value, .notEqual, .constant(.null))
            return .predicate(flag ? .or([.not(present), condition]) : .and([present, condition]))
        default: throw unsupported("?? on a condition")
        }
    }
}

extension PredicateExpressions.ForcedUnwrap: TypedPredicateNode {
    /// `value!`: the value itself; an object where it is nil does not match (where Swift would
    /// stop the program).
    func translated(_ scope: TypedPredicateScope) throws -> TypedPredicatePart {
        switch try translate(inner, scope) {
        case .optionalCondition(let value, let condition):
            return .predicate(.and([.comparison(value, .notEqual, .constant(.null)), condition]))
        case .expression(let value): return .unwrapped(value)
        case let part: return part
        }
    }
}

extension PredicateExpressions.OptionalFlatMap: TypedPredicateNode {
    /// `value?.member` and `value.flatMap { … }`: the transform reads the unwrapped value.
    func translated(_ scope: TypedPredicateScope) throws -> TypedPredicatePart {
        let value = try translate(wrapped, scope).expression()
        var inner = scope
        inner.variables[variable.key] = value
        switch try translate(transform, inner) {
        case .expression(let result): return .expression(result)
        case .predicate(let condition): return .optionalCondition(value, condition)
        default: throw unsupported("an optional chain that yields an optional condition")
        }
    }
}

// MARK: - To-many relationships

extension PredicateExpressions.SequenceContainsWhere: TypedPredicateNode {
    /// `$0.books.contains { $0.year > 2000 }`: some object of the relationship matches (a
    /// `SUBQUERY`); the condition reads the element only.
    func translated(_ scope: TypedPredicateScope) throws -> TypedPredicatePart {
        guard case .expression(.keyPath(let collection)) = try translate(sequence, scope) else {
            throw unsupported("contains(where:) on something other than a to-many relationship")
        }
        var inner = TypedPredicateScope()
        inner.hidden = scope.hidden.union(scope.variables.keys)
        inner.variables[variable.key] = .evaluatedObject
        return .predicate(.subquery(collection: collection, predicate: try translate(self.test, inner).predicate()))
    }
}
