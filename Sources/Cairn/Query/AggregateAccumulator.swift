import Foundation

/// A running aggregate: count, sum, minimum and maximum of the non-nil values added, kept
/// without holding the values, and mergeable (one accumulator per thread, merged at the end).
struct AggregateAccumulator: Sendable {
    let operation: CollectionOperator
    private(set) var count = 0
    private var integers: Int64 = 0
    private var spilled = 0.0
    private var doubles = 0.0
    private var decimals = Decimal(0)
    private var sawDouble = false, sawDecimal = false, overflowed = false, notNumber = false
    private var minimum: Value?
    private var maximum: Value?

    init(_ operation: CollectionOperator) { self.operation = operation }

    /// The aggregate of `values` (as a collection operator computes it).
    static func combine(_ operation: CollectionOperator, _ values: [Value]) -> Value {
        var accumulator = AggregateAccumulator(operation)
        for value in values { accumulator.add(value) }
        return accumulator.result
    }

    mutating func add(_ value: Value) {
        guard value != .null else { return }
        count += 1
        switch operation {
        case .count: return
        case .minimum:
            if minimum.map({ QueryValue.order(value, $0) == .orderedAscending }) ?? true { minimum = value }
            return
        case .maximum:
            if maximum.map({ QueryValue.order(value, $0) == .orderedDescending }) ?? true { maximum = value }
            return
        case .sum, .average:
            switch QueryValue.normalized(value) {
            case .integer(let number):
                addToSum(number)
            case .double(let number):
                doubles += number
                sawDouble = true
            case .decimal(let number):
                decimals += number
                sawDecimal = true
            default:
                notNumber = true
            }
        }
    }

    private mutating func addToSum(_ number: Int64) {
        let (result, overflow) = integers.addingReportingOverflow(number)
        if overflow {
            spilled += Double(integers) + Double(number)
            integers = 0
            overflowed = true
        } else {
            integers = result
        }
    }

    /// Adds an attribute's value as encoded in a row (docs/FORMAT.md §9): integers and doubles
    /// go straight into a count, sum or average; anything else is decoded first.
    @inline(__always)
    mutating func add(encoded bytes: UnsafeRawBufferPointer) {
        switch operation {
        case .count, .sum, .average:
            if let number = ValueEncoding.integer(bytes) {
                count += 1
                if operation != .count { addToSum(number) }
                return
            }
            if let number = ValueEncoding.double(bytes) {
                count += 1
                if operation != .count {
                    doubles += number
                    sawDouble = true
                }
                return
            }
        case .minimum, .maximum:
            break
        }
        if case .attribute(let value) = ValueEncoding.decodeProperty(bytes) { add(QueryValue.normalized(value)) }
    }

    /// Adds the values of a chunk's column at the slots of `matches`, as ``add(encoded:)`` would
    /// one by one in slot order: a count, sum or average adds the decoded integers and doubles
    /// straight from the column's arrays.
    mutating func add(_ column: ChunkColumn, _ matches: SlotMask) {
        guard operation == .count || operation == .sum || operation == .average else {
            matches.forEach { add(encoded: column.value($0)) }
            return
        }
        if let values = column.integerValues {
            let found = matches & column.integers
            count += found.count
            if operation != .count { found.forEach { addToSum(values[$0]) } }
        }
        if let values = column.doubleValues {
            let found = matches & column.doubles
            count += found.count
            if operation != .count, !found.isEmpty {
                // Summed in a local (the column's memory could alias this accumulator's, so the
                // property would be stored and read back at every addition).
                var sum = doubles
                found.forEach { sum += values[$0] }
                doubles = sum
                sawDouble = true
            }
        }
        // Anything else (null, NaN, a date, another kind) is read from its encoded bytes.
        (matches & ~column.integers & ~column.doubles).forEach { add(encoded: column.value($0)) }
    }

    mutating func merge(_ other: AggregateAccumulator) {
        count += other.count
        let (result, overflow) = integers.addingReportingOverflow(other.integers)
        if overflow { spilled += Double(integers) + Double(other.integers); integers = 0; overflowed = true } else { integers = result }
        spilled += other.spilled
        doubles += other.doubles
        decimals += other.decimals
        sawDouble = sawDouble || other.sawDouble
        sawDecimal = sawDecimal || other.sawDecimal
        overflowed = overflowed || other.overflowed
        notNumber = notNumber || other.notNumber
        if let value = other.minimum { if minimum.map({ QueryValue.order(value, $0) == .orderedAscending }) ?? true { minimum = value } }
        if let value = other.maximum { if maximum.map({ QueryValue.order(value, $0) == .orderedDescending }) ?? true { maximum = value } }
    }

    /// The aggregate: over no values, a count or sum of 0, otherwise nil.
    var result: Value {
        switch operation {
        case .count: return .integer(Int64(count))
        case .minimum: return minimum ?? .null
        case .maximum: return maximum ?? .null
        case .sum, .average:
            guard !notNumber else { return .null }
            let total: Value
            if sawDecimal {
                total = .decimal(decimals + Decimal(integers) + Decimal(spilled) + Decimal(doubles))
            } else if sawDouble || overflowed {
                total = .double(spilled + Double(integers) + doubles)
            } else {
                total = .integer(integers)
            }
            guard operation == .average else { return total }
            guard count > 0 else { return .null }
            switch total {
            case .integer(let number): return .double(Double(number) / Double(count))
            case .double(let number): return .double(number / Double(count))
            case .decimal(let number): return .decimal(number / Decimal(count))
            default: return .null
            }
        }
    }
}
