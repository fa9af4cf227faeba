import Foundation

/// Sums, averages, minimums and maximums of values, as collection operators (`@sum`…) and
/// aggregate queries compute them.
enum Aggregation {
    /// Combines non-nil values; nil for an empty list (except `@count` and `@sum`, 0).
    static func combine(_ operation: CollectionOperator, _ values: [Value]) -> Value {
        switch operation {
        case .count: return .integer(Int64(values.count))
        case .sum: return sum(values) ?? .integer(0)
        case .average:
            guard let total = sum(values), !values.isEmpty else { return .null }
            switch total {
            case .integer(let number): return .double(Double(number) / Double(values.count))
            case .decimal(let number): return .decimal(number / Decimal(values.count))
            case .double(let number): return .double(number / Double(values.count))
            default: return .null
            }
        case .minimum: return values.min { (QueryValue.order($0, $1) ?? .orderedSame) == .orderedAscending } ?? .null
        case .maximum: return values.max { (QueryValue.order($0, $1) ?? .orderedSame) == .orderedAscending } ?? .null
        }
    }

    /// The sum: an integer while every value is an integer and the total fits, a decimal when
    /// any value is a decimal, else a double; nil when a value is not a number.
    static func sum(_ values: [Value]) -> Value? {
        var integers: Int64 = 0
        var spilled = 0.0          // integer totals that overflowed
        var doubles = 0.0
        var decimals = Decimal(0)
        var sawDouble = false, sawDecimal = false, overflowed = false
        for value in values {
            switch QueryValue.normalized(value) {
            case .integer(let number):
                let (result, overflow) = integers.addingReportingOverflow(number)
                if overflow {
                    spilled += Double(integers) + Double(number)
                    integers = 0
                    overflowed = true
                } else {
                    integers = result
                }
            case .double(let number):
                doubles += number
                sawDouble = true
            case .decimal(let number):
                decimals += number
                sawDecimal = true
            case .null: continue
            default: return nil
            }
        }
        if sawDecimal { return .decimal(decimals + Decimal(integers) + Decimal(spilled) + Decimal(doubles)) }
        if sawDouble || overflowed { return .double(spilled + Double(integers) + doubles) }
        return .integer(integers)
    }
}
