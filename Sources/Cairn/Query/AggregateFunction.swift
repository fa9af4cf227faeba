/// A value computed over the objects that match a request: how many, or the sum, average,
/// minimum or maximum of an attribute (a key path across to-one relationships is allowed).
/// Nil values are left out; over no values, the sum is 0 and the others are nil.
public enum AggregateFunction: Sendable, Hashable, CustomStringConvertible {
    case count
    case sum(String)
    case average(String)
    case minimum(String)
    case maximum(String)

    /// The key path it reads (nil for ``count``).
    public var key: String? {
        switch self {
        case .count: nil
        case .sum(let key), .average(let key), .minimum(let key), .maximum(let key): key
        }
    }

    var operation: CollectionOperator {
        switch self {
        case .count: .count
        case .sum: .sum
        case .average: .average
        case .minimum: .minimum
        case .maximum: .maximum
        }
    }

    public var description: String {
        key.map { "\(operation.rawValue)(\($0))" } ?? "count"
    }
}

/// One group of a grouped aggregate: the values of the grouping keys, how many objects share
/// them, and the aggregates over those objects (in the order asked).
public struct AggregateGroup: Sendable, Hashable {
    /// The grouping key paths' values, in the order of the keys.
    public var keys: [Value]
    /// The aggregates, in the order of the functions.
    public var values: [Value]
}
