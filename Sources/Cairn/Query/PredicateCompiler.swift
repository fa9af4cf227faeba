/// Resolves a ``PredicateSyntax`` against an entity: key paths, the types of the values
/// compared, patterns. Every problem is a ``StoreError`` naming the key concerned.
struct PredicateCompiler {
    let model: Model
    let entity: EntityDescription

    func compile(_ predicate: PredicateSyntax) throws -> CompiledPredicate {
        switch predicate {
        case .truePredicate: return .constant(true)
        case .falsePredicate: return .constant(false)
        case .and(let parts): return .and(try parts.map(compile))
        case .or(let parts): return .or(try parts.map(compile))
        case .not(let part): return .not(try compile(part))
        case .comparison(let lhs, let op, let rhs, let options, let modifier):
            return .comparison(try comparison(lhs, op, rhs, options, modifier))
        case .subquery(let keys, let inner):
            let collection = try CompiledKeyPath.resolve(keys, from: entity, in: model)
            guard collection.isToMany, let destination = collection.destination else {
                throw fail("SUBQUERY needs a to-many relationship; \(collection.name) is not one", key: collection.name)
            }
            return .someMatch(collection, try PredicateCompiler(model: model, entity: model.descriptions[destination]).compile(inner))
        }
    }

    private func fail(_ message: String, key: String? = nil) -> StoreError {
        StoreError(.invalidPredicate, "predicate: " + message, entity: entity.name, property: key)
    }

    private func expression(_ expression: PredicateOperand) throws -> CompiledExpression {
        switch expression {
        case .keyPath(let keys): return .keyPath(try CompiledKeyPath.resolve(keys, from: entity, in: model))
        case .constant(let value): return .constant(QueryValue.normalized(value))
        case .evaluatedObject: return .evaluatedObject
        case .object(let id): return .object(id)
        case .variable(let name): throw fail("variable $\(name) has no value (substitute it first)")
        case .list(let items):
            let objects = items.compactMap { item -> ObjectID? in if case .object(let id) = item { id } else { nil } }
            if !objects.isEmpty {
                guard objects.count == items.count else { throw fail("a list holds values or objects, not both") }
                return .objects(objects)
            }
            return .list(
                try items.map { item in
                    guard case .constant(let value) = item else { throw fail("a list may only hold values, not \(item)") }
                    return QueryValue.normalized(value)
                })
        case .collectionOperation(let operation, let collectionKeys, let elementKeys):
            let collection = try CompiledKeyPath.resolve(collectionKeys, from: entity, in: model)
            // `text.@count`: the number of characters of a string attribute.
            if operation == .count, elementKeys.isEmpty, !collection.isToMany, collection.attributeType == .string {
                return .collection(.count, collection, nil)
            }
            guard collection.isToMany, let destination = collection.destination else {
                throw fail("@\(operation.rawValue) needs a to-many relationship; \(collection.name) is not one", key: collection.name)
            }
            guard !elementKeys.isEmpty else {
                guard operation == .count else {
                    throw fail("@\(operation.rawValue) over \(collection.name) needs a key path to an attribute after it", key: collection.name)
                }
                return .collection(.count, collection, nil)
            }
            let element = try CompiledKeyPath.resolve(elementKeys, from: model.descriptions[destination], in: model)
            guard let type = element.attributeType, !element.isToMany else {
                throw fail("@\(operation.rawValue) needs an attribute after it; \(element.name) is not one", key: element.name)
            }
            if operation == .sum || operation == .average, !QueryValue.isNumber(type) {
                throw fail("@\(operation.rawValue) needs a number; \(element.name) is \(type)", key: element.name)
            }
            return .collection(operation, collection, element)
        }
    }

    /// The attribute type an expression yields, when it is typed by the model.
    private func type(of expression: CompiledExpression) -> (AttributeType, String)? {
        switch expression {
        case .keyPath(let path): return path.attributeType.map { ($0, path.name) }
        case .collection(.count, let path, _): return (.integer64, path.name + ".@count")
        case .collection(let operation, let path, let element?):
            let name = path.name + ".@" + operation.rawValue + "." + element.name
            guard let type = element.attributeType else { return nil }
            return (operation == .average && type.integerRange != nil ? .double : type, name)
        default: return nil
        }
    }

    /// Converts the constants of `expression` to `type`, or fails naming the key.
    private func coerce(_ expression: CompiledExpression, to type: AttributeType, key: String) throws -> CompiledExpression {
        func one(_ value: Value) throws -> Value {
            guard let converted = QueryValue.coerce(value, to: type) else {
                throw StoreError(
                    .typeMismatch, "predicate: \(entity.name).\(key) is \(type); cannot compare it with \(value.typeName) \(value)",
                    entity: entity.name, property: key)
            }
            return converted
        }
        switch expression {
        case .constant(let value): return .constant(try one(value))
        case .list(let values): return .list(try values.map(one))
        case .object, .objects:
            throw StoreError(
                .typeMismatch, "predicate: \(entity.name).\(key) is \(type); an object compares with a relationship or SELF",
                entity: entity.name, property: key)
        default: return expression
        }
    }

    private func comparison(
        _ lhsSyntax: PredicateOperand, _ op: PredicateOperator, _ rhsSyntax: PredicateOperand,
        _ options: ComparisonOptions, _ modifier: ComparisonModifier
    ) throws -> CompiledComparison {
        var lhs = try expression(lhsSyntax)
        var rhs = try expression(rhsSyntax)
        let leftPath: CompiledKeyPath? = { if case .keyPath(let path) = lhs { return path } else { return nil } }()
        if modifier != .direct && leftPath == nil {
            throw fail("ANY, ALL and NONE need a key path on the left, not \(lhsSyntax)")
        }
        if let leftPath, leftPath.isToMany, modifier == .direct, op != .contains {
            throw fail("\(leftPath.name) reaches many objects: write ANY, ALL or NONE before it, or use @count", key: leftPath.name)
        }
        if case .keyPath(let path) = rhs, path.isToMany, op != .in {
            throw fail("\(path.name) reaches many objects; on the right it can only follow IN", key: path.name)
        }
        // Typed by the attribute on either side.
        let typed = type(of: lhs) ?? type(of: rhs)
        let stringOperator = [.beginsWith, .endsWith, .like, .matches].contains(op) || (op == .contains && leftPath?.isToMany != true)
        if let (attributeType, key) = typed {
            if stringOperator && attributeType != .string && attributeType != .uri {
                throw fail("\(op.rawValue) compares text; \(entity.name).\(key) is \(attributeType)", key: key)
            }
            if !stringOperator && !(op == .in && rhsIsText(rhs)) {
                lhs = try coerce(lhs, to: attributeType, key: key)
                rhs = try coerce(rhs, to: attributeType, key: key)
            }
        }
        for (side, other) in [(lhs, rhs), (rhs, lhs)] {
            guard case .keyPath(let path) = side, case .relationship = path.terminal else { continue }
            switch (op, other) {
            case (.equal, .constant(.null)), (.notEqual, .constant(.null)), (.equal, .evaluatedObject), (.notEqual, .evaluatedObject),
                (.equal, .object), (.notEqual, .object), (.in, _), (.contains, _):
                continue
            default:
                throw fail("\(path.name) is a relationship: compare it with nil, SELF or an object", key: path.name)
            }
        }
        switch op {
        case .between:
            guard case .list(let bounds) = rhs, bounds.count == 2 else { throw fail("BETWEEN needs a list of two values: {lower, upper}") }
        case .in:
            switch rhs {
            case .list, .objects, .keyPath, .constant(.string), .constant(.uri), .constant(.null): break
            default: throw fail("IN needs a list, a to-many key path or a string on the right")
            }
        default:
            if case .list = rhs { throw fail("\(op.rawValue) compares with one value, not a list") }
        }
        let compiled = CompiledComparison(lhs: lhs, op: op, rhs: rhs, options: options, modifier: modifier)
        if op == .in, options.isEmpty, case .list(let items) = rhs, items.count > 4 {
            compiled.listIndex = Dictionary(grouping: items, by: IndexKey.hash)
        }
        if op == .in, case .objects(let objects) = rhs, objects.count > 8 { compiled.objectSet = Set(objects) }
        if stringOperator, case .constant(let value) = rhs {
            guard let text = value.text else {
                if value == .null { return compiled }
                throw fail("\(op.rawValue) needs a string on the right, not \(value.typeName) \(value)")
            }
            let folded = TextComparison.fold(text, options)
            compiled.foldedConstant = folded
            if op == .like { compiled.likePattern = TextComparison.likePattern(folded) }
            if op == .matches {
                do {
                    compiled.regularExpression = try WholeStringPattern(text, caseInsensitive: options.contains(.caseInsensitive))
                } catch {
                    throw fail("MATCHES: \"\(text)\" is not a valid regular expression")
                }
            }
        }
        return compiled
    }

    private func rhsIsText(_ rhs: CompiledExpression) -> Bool {
        if case .constant(let value) = rhs { return value.text != nil }
        return false
    }
}
