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
/// `(a...b).contains(property)` and `(a..<b).contains(property)`. Other expressions throw
/// ``StoreError/Code/invalidPredicate`` naming the expression.
extension FetchPredicate {
    /// Translates a Foundation predicate over a typed model.
    public init<T: StoredModel>(_ predicate: Predicate<T>) throws {
        guard let node = predicate.expression as? any TypedPredicateNode else {
            throw StoreError(.invalidPredicate, "#Predicate: \(type(of: predicate.expression)) is not supported", entity: T.entityName)
        }
        guard case .predicate(let syntax) = try node.translated() else {
            throw StoreError(.invalidPredicate, "#Predicate: the expression is not a condition", entity: T.entityName)
        }
        self = .syntax(syntax)
    }
}

/// What a piece of a Foundation predicate becomes.
enum TypedPredicatePart {
    case predicate(PredicateSyntax)
    case expression(PredicateOperand)

    func expression() throws -> PredicateOperand {
        guard case .expression(let expression) = self else { throw unsupported("a condition where a value was expected") }
        return expression
    }

    func predicate() throws -> PredicateSyntax {
        guard case .predicate(let predicate) = self else { throw unsupported("a value where a condition was expected") }
        return predicate
    }
}

private func unsupported(_ what: String) -> StoreError {
    StoreError(.invalidPredicate, "#Predicate: \(what) is not supported")
}

/// A node of a Foundation predicate that Cairn can translate.
protocol TypedPredicateNode {
    func translated() throws -> TypedPredicatePart
}

private func translate(_ node: Any) throws -> TypedPredicatePart {
    guard let node = node as? any TypedPredicateNode else { throw unsupported(String(describing: type(of: node))) }
    return try node.translated()
}

extension PredicateExpressions.Variable: TypedPredicateNode {
    func translated() throws -> TypedPredicatePart { .expression(.evaluatedObject) }
}

extension PredicateExpressions.KeyPath: TypedPredicateNode {
    func translated() throws -> TypedPredicatePart {
        // `\Person.address?.city` describes itself as such: the property names after the type.
        let text = String(describing: keyPath)
        let names = text.split(separator: ".").dropFirst().map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "?!")) }
        guard !names.isEmpty, names.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" } }) else {
            throw unsupported("the key path \(text)")
        }
        switch try translate(root) {
        case .expression(.evaluatedObject): return .expression(.keyPath(names))
        case .expression(.keyPath(let prefix)): return .expression(.keyPath(prefix + names))
        default: throw unsupported("the key path \(text) on a computed value")
        }
    }
}

extension PredicateExpressions.Value: TypedPredicateNode {
    func translated() throws -> TypedPredicatePart {
        guard let argument = value as? any PredicateArgument else { throw unsupported("a value of type \(Output.self)") }
        do {
            return .expression(try argument.predicateArgumentValue.expression(describedAs: String(describing: Output.self)))
        } catch {
            throw unsupported("the value \(value) (\(error.expected) expected)")
        }
    }
}

extension PredicateExpressions.NilLiteral: TypedPredicateNode {
    func translated() throws -> TypedPredicatePart { .expression(.constant(.null)) }
}

extension PredicateExpressions.Conjunction: TypedPredicateNode {
    func translated() throws -> TypedPredicatePart {
        .predicate(.and([try translate(lhs).predicate(), try translate(rhs).predicate()]))
    }
}

extension PredicateExpressions.Disjunction: TypedPredicateNode {
    func translated() throws -> TypedPredicatePart {
        .predicate(.or([try translate(lhs).predicate(), try translate(rhs).predicate()]))
    }
}

extension PredicateExpressions.Negation: TypedPredicateNode {
    func translated() throws -> TypedPredicatePart { .predicate(.not(try translate(wrapped).predicate())) }
}

extension PredicateExpressions.Equal: TypedPredicateNode {
    func translated() throws -> TypedPredicatePart {
        .predicate(.comparison(try translate(lhs).expression(), .equal, try translate(rhs).expression()))
    }
}

extension PredicateExpressions.NotEqual: TypedPredicateNode {
    func translated() throws -> TypedPredicatePart {
        .predicate(.comparison(try translate(lhs).expression(), .notEqual, try translate(rhs).expression()))
    }
}

extension PredicateExpressions.Comparison: TypedPredicateNode {
    func translated() throws -> TypedPredicatePart {
        let operators: [PredicateExpressions.ComparisonOperator: PredicateOperator] = [
            .lessThan: .less, .lessThanOrEqual: .lessOrEqual, .greaterThan: .greater, .greaterThanOrEqual: .greaterOrEqual
        ]
        guard let operation = operators[op] else { throw unsupported("the comparison \(op)") }
        return .predicate(.comparison(try translate(lhs).expression(), operation, try translate(rhs).expression()))
    }
}

extension PredicateExpressions.CollectionContainsCollection: TypedPredicateNode {
    func translated() throws -> TypedPredicatePart {
        .predicate(.comparison(try translate(base).expression(), .contains, try translate(other).expression()))
    }
}

extension PredicateExpressions.SequenceStartsWith: TypedPredicateNode {
    func translated() throws -> TypedPredicatePart {
        .predicate(.comparison(try translate(base).expression(), .beginsWith, try translate(prefix).expression()))
    }
}

extension PredicateExpressions.SequenceContains: TypedPredicateNode {
    func translated() throws -> TypedPredicatePart {
        .predicate(.comparison(try translate(element).expression(), .in, try translate(sequence).expression()))
    }
}

extension PredicateExpressions.ClosedRange: TypedPredicateNode {
    func translated() throws -> TypedPredicatePart {
        .expression(.list([try translate(lower).expression(), try translate(upper).expression()]))
    }
}

extension PredicateExpressions.RangeExpressionContains: TypedPredicateNode {
    func translated() throws -> TypedPredicatePart {
        let element = try translate(element).expression()
        if let closed = range as? any TypedPredicateNode, case .expression(.list(let bounds)) = try closed.translated(), bounds.count == 2,
            String(describing: type(of: range)).contains("ClosedRange")
        {
            return .predicate(.comparison(element, .between, .list(bounds)))
        }
        if let open = range as? any HalfOpenRangeNode {
            let (lower, upper) = try open.bounds()
            return .predicate(.and([.comparison(element, .greaterOrEqual, lower), .comparison(element, .less, upper)]))
        }
        throw unsupported("the range \(type(of: range))")
    }
}

/// A half-open range `a..<b` of a predicate.
protocol HalfOpenRangeNode {
    func bounds() throws -> (PredicateOperand, PredicateOperand)
}

extension PredicateExpressions.Range: HalfOpenRangeNode {
    func bounds() throws -> (PredicateOperand, PredicateOperand) {
        (try translate(lower).expression(), try translate(upper).expression())
    }
}
