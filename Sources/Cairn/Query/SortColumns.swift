import Foundation

/// The sort keys of the matches of a fetch, one typed column per key, so that sorting compares
/// plain doubles, integers and strings rather than ``Value``s.
struct SortColumns {
    enum Column {
        case numbers([Double?])
        case integers([Int64?])
        case texts([String?])
        case values([Value])
    }

    let columns: [Column]
    let ascending: [Bool]

    /// Columns from the matches' values (one array of key values per match).
    init(_ rows: [[Value]], keys: [SortKey]) {
        ascending = keys.map(\.ascending)
        columns = keys.indices.map { index in
            let values = rows.map { $0[index] }
            if values.allSatisfy({ if case .integer = $0 { true } else { $0 == .null } }) {
                return .integers(values.map { if case .integer(let n) = $0 { n } else { nil } })
            }
            if values.allSatisfy({ switch $0 { case .double, .float, .date, .null: true; default: false } }) {
                return .numbers(values.map { value in
                    switch QueryValue.normalized(value) {
                    case .double(let number): number
                    case .date(let date): date.timeIntervalSinceReferenceDate
                    default: nil
                    }
                })
            }
            if values.allSatisfy({ if case .string = $0 { true } else { $0 == .null } }) {
                return .texts(values.map { if case .string(let text) = $0 { text } else { nil } })
            }
            return .values(values)
        }
    }

    /// How rows `a` and `b` compare on column `index` (nil sorts first).
    @inline(__always)
    private func order(_ index: Int, _ a: Int, _ b: Int) -> ComparisonResult {
        func compare<T: Comparable>(_ x: T?, _ y: T?) -> ComparisonResult {
            switch (x, y) {
            case (nil, nil): .orderedSame
            case (nil, _): .orderedAscending
            case (_, nil): .orderedDescending
            case (let x?, let y?): x < y ? .orderedAscending : y < x ? .orderedDescending : .orderedSame
            }
        }
        switch columns[index] {
        case .integers(let values): return compare(values[a], values[b])
        case .numbers(let values): return compare(values[a], values[b])
        case .texts(let values): return compare(values[a], values[b])
        case .values(let values): return QueryValue.order(values[a], values[b]) ?? .orderedSame
        }
    }

    /// The row order: by the keys, then by `ids` (stable).
    func permutation(ids: [ObjectID]) -> [Int] {
        var order = Array(ids.indices)
        order.sort { a, b in
            for index in columns.indices {
                let result = self.order(index, a, b)
                if result != .orderedSame { return ascending[index] ? result == .orderedAscending : result == .orderedDescending }
            }
            return ids[a] < ids[b]
        }
        return order
    }
}
