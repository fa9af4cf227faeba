/// A value computed over the objects that match a request: how many, or the sum, average,
/// minimum or maximum of an attribute (a key path across to-one relationships is allowed).
/// Nil values are left out; over no values, the sum is 0 and the others are nil.
public enum AggregateFunction: Sendable, Hashable, CustomStringConvertible {
    /// How many objects match.
    case count
    /// The sum of the values at a key path (0 over none).
    case sum(String)
    /// The mean of the values at a key path (nil over none).
    case average(String)
    /// The smallest value at a key path (nil over none).
    case minimum(String)
    /// The largest value at a key path (nil over none).
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

    /// The function as `count`, `sum(price)`, `avg(price)`, `min(year)` or `max(year)`.
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
