import Foundation

/// Sums, averages, minimums and maximums of values, as collection operators (`@sum`…) and
/// aggregate queries compute them.
enum Aggregation {
    /// Combines non-nil values; nil for an empty list (except `@count` and `@sum`, 0).
    static func combine(_ operation: CollectionOperator, _ values: [Value]) -> Value {
        var accumulator = AggregateAccumulator(operation)
        for value in values { accumulator.add(value) }
        return accumulator.result
    }
}
