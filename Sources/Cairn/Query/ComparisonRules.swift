import Foundation

/// The comparison rules of predicates, written once. The fast path that decides on a row's
/// encoded bytes (``RowComparison``) and the evaluator of decoded values (``CompiledPredicate``,
/// through ``QueryValue/order(_:_:)`` and ``Value/order(_:_:)``) both decide through these, so
/// that the two cannot disagree on what an operator means:
/// - an ordering or equality operator holds by the order of its two operands (``holds(_:_:)``);
/// - a nil value against a constant that is not nil satisfies only `!=` (``holdsForNil(_:)``);
/// - two values of one kind are ordered by `<` of that kind (``order(_:_:)``), numbers of
///   different kinds by value (``QueryValue/order(_:_:)``);
/// - `[c]` on ASCII text folds `A`–`Z` to `a`–`z` and nothing else (``foldedASCII(_:)``).
enum ComparisonRules {
    /// Whether `op` holds between two values whose order is `order`: `==`, `!=`, `<`, `<=`,
    /// `>`, `>=`; false for every other operator (they are not decided by order).
    @inline(__always)
    static func holds(_ op: PredicateOperator, _ order: ComparisonResult) -> Bool {
        switch op {
        case .equal: order == .orderedSame
        case .notEqual: order != .orderedSame
        case .less: order == .orderedAscending
        case .lessOrEqual: order != .orderedDescending
        case .greater: order == .orderedDescending
        case .greaterOrEqual: order != .orderedAscending
        default: false
        }
    }

    /// Whether `op` holds between a nil value and a constant that is not nil: only `!=` does
    /// (nil equals only nil, and is neither less nor greater than anything).
    @inline(__always)
    static func holdsForNil(_ op: PredicateOperator) -> Bool { op == .notEqual }

    /// The order of two values of one kind.
    @inline(__always)
    static func order<T: Comparable>(_ a: T, _ b: T) -> ComparisonResult {
        a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame
    }

    /// An ASCII byte as `[c]` compares it: `A`–`Z` lowered, every other byte as it is.
    @inline(__always)
    static func foldedASCII(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
    }
}
