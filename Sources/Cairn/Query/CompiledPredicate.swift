import Foundation

/// A predicate resolved against an entity: key paths resolved, constants converted to the
/// types of the attributes they are compared with, patterns compiled. Evaluating it reads only
/// the values it needs.
indirect enum CompiledPredicate: Sendable {
    case comparison(CompiledComparison)
    case and([CompiledPredicate])
    case or([CompiledPredicate])
    case not(CompiledPredicate)
    case constant(Bool)
    /// Some object of a to-many key path matches a predicate of its entity (`SUBQUERY`).
    case someMatch(CompiledKeyPath, CompiledPredicate)

    /// Whether the object seen through `view` matches.
    func evaluate(_ id: ObjectID, _ view: ObjectView, _ reader: ObjectReader) -> Bool {
        switch self {
        case .comparison(let comparison): comparison.evaluate(id, view, reader)
        case .and(let parts): parts.allSatisfy { $0.evaluate(id, view, reader) }
        case .or(let parts): parts.contains { $0.evaluate(id, view, reader) }
        case .not(let part): !part.evaluate(id, view, reader)
        case .constant(let flag): flag
        case .someMatch(let collection, let inner):
            if case .objects(let ids) = collection.evaluate(id, view, reader) {
                ids.contains { target in reader.view(target).map { inner.evaluate(target, $0, reader) } ?? false }
            } else {
                false
            }
        }
    }
}

/// A compiled expression: one side of a comparison.
enum CompiledExpression: Sendable {
    case constant(Value)
    case list([Value])
    case keyPath(CompiledKeyPath)
    /// `collection.@op.keyPath`: over the objects of a to-many key path.
    case collection(CollectionOperator, CompiledKeyPath, CompiledKeyPath?)
    case evaluatedObject
    /// An object given as an argument, or a list of them.
    case object(ObjectID)
    case objects([ObjectID])

    func evaluate(_ id: ObjectID, _ view: ObjectView, _ reader: ObjectReader) -> Operand {
        switch self {
        case .constant(let value): return .value(value)
        case .list(let values): return .values(values)
        case .keyPath(let path): return path.evaluate(id, view, reader)
        case .evaluatedObject: return .object(id)
        case .object(let object): return .object(object)
        case .objects(let objects): return .objects(objects)
        case .collection(let operation, let collection, let element):
            let operand = collection.evaluate(id, view, reader)
            if operation == .count, case .value(let text) = operand {
                guard case .string(let characters) = text else { return .value(.null) }
                return .value(.integer(Int64(characters.count)))
            }
            guard case .objects(let ids) = operand else { return .value(.null) }
            if operation == .count { return .value(.integer(Int64(ids.count))) }
            var values: [Value] = []
            for target in ids {
                guard let element, let targetView = reader.view(target) else { continue }
                switch element.evaluate(target, targetView, reader) {
                case .value(let value) where value != .null: values.append(value)
                case .values(let more): values += more.filter { $0 != .null }
                default: continue
                }
            }
            return .value(AggregateAccumulator.combine(operation, values))
        }
    }
}

/// `lhs op rhs` with its options, modifier and compiled pattern. A class, so that evaluating a
/// predicate does not copy (and retain) every part of each comparison for every object.
final class CompiledComparison: @unchecked Sendable {
    // Safety: the `var`s are set by the compiler before the comparison is used, never after.
    let lhs: CompiledExpression
    let op: PredicateOperator
    let rhs: CompiledExpression
    let options: ComparisonOptions
    let modifier: ComparisonModifier
    /// For `LIKE` with a constant pattern.
    var likePattern: [TextComparison.LikeToken]?
    /// For `MATCHES` with a constant pattern.
    var regularExpression: WholeStringPattern?
    /// The folded constant for string comparisons with options.
    var foldedConstant: String?
    /// The same comparison decided on row bytes, when it can be.
    let rowComparison: RowComparison?
    /// For `IN` with a constant list and no options: the list by ``IndexKey`` hash, so that a
    /// value is checked against the few items that can equal it.
    var listIndex: [UInt64: [Value]]?
    /// For `IN` with a constant list of more than 8 objects: the list as a set.
    var objectSet: Set<ObjectID>?

    init(lhs: CompiledExpression, op: PredicateOperator, rhs: CompiledExpression, options: ComparisonOptions, modifier: ComparisonModifier) {
        self.lhs = lhs
        self.op = op
        self.rhs = rhs
        self.options = options
        self.modifier = modifier
        rowComparison = RowComparison(lhs: lhs, op: op, rhs: rhs, options: options, modifier: modifier)
    }

    deinit { rowComparison?.deallocate() }

    func evaluate(_ id: ObjectID, _ view: ObjectView, _ reader: ObjectReader) -> Bool {
        if let rowComparison, view.changes == nil, case .row(let row) = view.base,
            let result = row.withBytes({ rowComparison.evaluate(RowBytes(bytes: $0, count: row.count)) })
        {
            return result
        }
        let left = lhs.evaluate(id, view, reader)
        let right = rhs.evaluate(id, view, reader)
        switch modifier {
        case .direct:
            switch left {
            case .value(let value): return test(value, right)
            case .object(let object): return test(object, right)
            case .values(let values):
                // `collection CONTAINS x`, as NSPredicate reads it.
                guard op == .contains, case .value(let needle) = right else { return false }
                return values.contains { equal($0, needle) }
            case .objects(let ids):
                // `relationship CONTAINS object`.
                guard op == .contains, case .object(let needle?) = right else { return false }
                return ids.contains(needle)
            }
        case .any, .all, .none:
            let results: [Bool]
            switch left {
            case .values(let values): results = values.map { test($0, right) }
            case .objects(let ids): results = ids.map { test($0, right) }
            case .value(let value): results = [test(value, right)]
            case .object(let object): results = object.map { [test($0, right)] } ?? []
            }
            switch modifier {
            case .all: return results.allSatisfy { $0 }
            case .none: return !results.contains(true)
            default: return results.contains(true)
            }
        }
    }

    /// An object (or none) against the right-hand side: equality with nil, or with SELF.
    private func test(_ object: ObjectID?, _ right: Operand) -> Bool {
        let same: Bool
        switch right {
        case .value(.null): same = object == nil
        case .object(let other): same = object == other
        case .objects(let others) where op == .in: return object.map { objectSet?.contains($0) ?? others.contains($0) } ?? false
        default: return false
        }
        switch op {
        case .equal: return same
        case .notEqual: return !same
        default: return false
        }
    }

    private func test(_ value: Value, _ right: Operand) -> Bool {
        switch op {
        case .in:
            switch right {
            case .values(let candidates):
                if let listIndex { return listIndex[IndexKey.hash(value)]?.contains { equal(value, $0) } ?? false }
                return candidates.contains { equal(value, $0) }
            case .value(.string(let text)):
                guard case .string(let needle) = value else { return false }
                return TextComparison.contains(fold(text), fold(needle))
            default: return false
            }
        case .between:
            // A nil bound, like a nil value, matches nothing (as in SQL).
            guard case .values(let bounds) = right, bounds.count == 2, value != .null, !bounds.contains(.null) else { return false }
            return compare(value, bounds[0]).map { $0 != .orderedAscending } == true
                && compare(value, bounds[1]).map { $0 != .orderedDescending } == true
        default:
            guard case .value(let other) = right else { return false }
            return test(value, other)
        }
    }

    private func test(_ value: Value, _ other: Value) -> Bool {
        switch op {
        case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual:
            if value == .null || other == .null {
                // Nil equals only nil and is not ordered; against a value, only != holds.
                return value == other ? op == .equal : ComparisonRules.holdsForNil(op)
            }
            if op == .equal || op == .notEqual { return equal(value, other) == (op == .equal) }
            guard let order = compare(value, other) else { return false }
            return ComparisonRules.holds(op, order)
        case .beginsWith, .endsWith, .contains, .like, .matches:
            guard let text = value.text, let pattern = other.text else { return false }
            let folded = fold(text)
            switch op {
            // Byte prefixes and suffixes of the folded (NFC) text, as CONTAINS and the row fast path.
            case .beginsWith: return folded.utf8.starts(with: (foldedConstant ?? fold(pattern)).utf8)
            case .endsWith: return folded.utf8.reversed().starts(with: (foldedConstant ?? fold(pattern)).utf8.reversed())
            case .contains: return TextComparison.contains(folded, foldedConstant ?? fold(pattern))
            case .like: return TextComparison.like(folded, pattern: likePattern ?? TextComparison.likePattern(fold(pattern)))
            default:
                let expression = regularExpression ?? (try? WholeStringPattern(pattern, caseInsensitive: options.contains(.caseInsensitive)))
                return expression?.matches(options.contains(.diacriticInsensitive) ? folded : text) ?? false
            }
        case .between, .in:
            return false
        }
    }

    private func fold(_ text: String) -> String { TextComparison.fold(text, options) }

    /// Equality: strings by Unicode rules under the options; numbers by value; nil only with nil.
    func equal(_ a: Value, _ b: Value) -> Bool {
        if a == .null || b == .null { return a == b }
        if let left = a.text, let right = b.text {
            return options.isEmpty ? left == right : fold(left) == fold(right)
        }
        return QueryValue.order(a, b) == .orderedSame
    }

    /// Order: strings by Unicode rules under the options, numbers by value.
    func compare(_ a: Value, _ b: Value) -> ComparisonResult? {
        if let left = a.text, let right = b.text, !options.isEmpty {
            return ComparisonRules.order(fold(left), fold(right))
        }
        return QueryValue.order(a, b)
    }
}

extension Value {
    /// The text of a string or URI value.
    var text: String? {
        switch self {
        case .string(let text), .uri(let text): text
        default: nil
        }
    }
}
