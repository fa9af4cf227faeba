import Foundation

/// The sort keys of the matches of a fetch, one typed column per key (doubles, integers or
/// strings, read straight from the rows' bytes when they can be), so that sorting compares
/// plain values rather than ``Value``s.
struct SortColumns {
    enum Column {
        case numbers([Double?])
        case integers([Int64?])
        case texts([String?])
        case values([Value])
    }

    /// The first key's column, compared directly by the final sort.
    private let first: Column
    private let firstAscending: Bool
    /// Each match's rank in each of the other columns (`ranks[match * others + key]`: equal
    /// values share a rank, negated for a descending key), for the ties of the first.
    private let ranks: [Int32]
    private let others: Int

    /// The columns of `query`'s sort keys (at least one) for the matches `ids`, seen through `views`.
    init(_ query: PreparedQuery, ids: [ObjectID], views: [ObjectView], reader: ObjectReader) {
        self.init(query, columns: query.sortPaths.indices.map { Self.column(query, $0, ids: ids, views: views, reader: reader) }, count: ids.count)
    }

    /// The sort keys' columns (one per key, `count` values each), already read.
    init(_ query: PreparedQuery, columns: [Column], count: Int) {
        first = columns.first ?? .integers(Array(repeating: nil, count: count))
        firstAscending = query.request.sortKeys.first?.ascending ?? true
        others = max(0, columns.count - 1)
        var ranks = [Int32](repeating: 0, count: count * others)
        for (index, column) in columns.enumerated().dropFirst() {
            let sign: Int32 = query.request.sortKeys[index].ascending ? 1 : -1
            for (match, rank) in Self.ranks(column).enumerated() { ranks[match * others + index - 1] = sign * rank }
        }
        self.ranks = ranks
    }

    /// How a key's values are read from row bytes: a number, date or string attribute of the
    /// entity's own, sorted by its value (not case-insensitively).
    enum DirectColumn {
        case numbers(position: Int)
        case integers(position: Int)
        case texts(position: Int)

        /// The position of the attribute in the rows.
        var position: Int {
            switch self {
            case .numbers(let position), .integers(let position), .texts(let position): position
            }
        }

        /// Appends the key's encoded value to `buffer`; false when the bytes are not a value this
        /// reading decodes (then the general path sorts).
        @inline(__always)
        func append(_ value: UnsafeRawBufferPointer, to buffer: inout ColumnBuffer) -> Bool {
            switch self {
            case .numbers: Self.add(value, ValueEncoding.number, &buffer.numbers)
            case .integers: Self.add(value, ValueEncoding.integer, &buffer.integers)
            case .texts: Self.add(value, SortColumns.string, &buffer.texts)
            }
        }

        /// The column `buffer` holds for this kind.
        func column(_ buffer: ColumnBuffer) -> Column {
            switch self {
            case .numbers: .numbers(buffer.numbers)
            case .integers: .integers(buffer.integers)
            case .texts: .texts(buffer.texts)
            }
        }

        @inline(__always)
        private static func add<T>(_ bytes: UnsafeRawBufferPointer, _ decode: (UnsafeRawBufferPointer) -> T?, _ values: inout [T?]) -> Bool {
            if ValueEncoding.isNull(bytes) {
                values.append(nil)
                return true
            }
            guard let value = decode(bytes) else { return false }
            values.append(value)
            return true
        }
    }

    /// A column being read by a scan (only the array of its kind is used).
    struct ColumnBuffer {
        var numbers: [Double?] = []
        var integers: [Int64?] = []
        var texts: [String?] = []

        /// Appends another buffer's values (of the same kind).
        mutating func append(_ other: ColumnBuffer) {
            numbers += other.numbers
            integers += other.integers
            texts += other.texts
        }
    }

    /// A string value's text, from its encoded bytes (nil for another kind of value).
    static func string(_ bytes: UnsafeRawBufferPointer) -> String? {
        ValueEncoding.text(bytes).map { String(decoding: $0, as: UTF8.self) }
    }

    /// How each sort key of `query` is read from row bytes, or nil when one cannot be.
    static func directColumns(_ query: PreparedQuery) -> [DirectColumn]? {
        var columns: [DirectColumn] = []
        for index in query.sortPaths.indices {
            guard let column = directColumn(query, index) else { return nil }
            columns.append(column)
        }
        return columns
    }

    private static func directColumn(_ query: PreparedQuery, _ index: Int) -> DirectColumn? {
        let path = query.sortPaths[index]
        guard let position = path.directAttribute, let type = path.attributeType, !query.request.sortKeys[index].caseInsensitive else { return nil }
        switch type {
        case .double, .date: return .numbers(position: position)
        case .integer16, .integer32, .integer64: return .integers(position: position)
        case .string: return .texts(position: position)
        default: return nil
        }
    }

    /// Column `index`: typed from the rows' bytes when the key is one of the entity's own
    /// numbers, dates or strings, else from each match's value.
    private static func column(_ query: PreparedQuery, _ index: Int, ids: [ObjectID], views: [ObjectView], reader: ObjectReader) -> Column {
        switch directColumn(query, index) {
        case .numbers(let position)?:
            if let numbers = read(views, position, ValueEncoding.number) { return .numbers(numbers) }
        case .integers(let position)?:
            if let integers = read(views, position, ValueEncoding.integer) { return .integers(integers) }
        case .texts(let position)?:
            if let texts = read(views, position, Self.string) { return .texts(texts) }
        case nil:
            break
        }
        return classify(views.indices.map { query.sortValue(index, ids[$0], views[$0], reader) })
    }

    /// Every view's value at `position` read from its row's bytes by `decode` (nil bytes for a
    /// nil value), or nil when a view has unsaved changes or a value `decode` cannot read.
    private static func read<T>(_ views: [ObjectView], _ position: Int, _ decode: (UnsafeRawBufferPointer) -> T?) -> [T?]? {
        var column: [T?] = []
        column.reserveCapacity(views.count)
        for view in views {
            guard view.changes == nil, case .row(let row) = view.base else { return nil }
            let value: T?? = row.withValueBytes(position) { bytes in
                ValueEncoding.isNull(bytes) ? .some(nil) : decode(bytes).map { .some($0) }
            }
            guard let value else { return nil }
            column.append(value)
        }
        return column
    }

    /// A column from values: typed when they are all of one kind (or nil).
    private static func classify(_ values: [Value]) -> Column {
        if values.allSatisfy({ if case .integer = $0 { true } else { $0 == .null } }) {
            return .integers(values.map { if case .integer(let n) = $0 { n } else { nil } })
        }
        if values.allSatisfy({
            switch $0 {
            case .double, .float, .date, .null: true;
            default: false
            }
        }) {
            return .numbers(
                values.map { value in
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

    /// Each value's rank in the column's order (nil first; equal values share a rank).
    private static func ranks(_ column: Column) -> [Int32] {
        switch column {
        case .integers(let values): ranks(values)
        case .numbers(let values): ranks(values)
        case .texts(let values): ranks(values)
        case .values(let values): ranks(values.map { Wrapped(value: $0) })
        }
    }

    /// A value ordered as queries order values (for a column of mixed kinds).
    private struct Wrapped: Comparable {
        let value: Value
        static func < (a: Wrapped, b: Wrapped) -> Bool { QueryValue.order(a.value, b.value) == .orderedAscending }
        static func == (a: Wrapped, b: Wrapped) -> Bool { !(a < b) && !(b < a) }
    }

    @inline(__always)
    private static func less<T: Comparable>(_ x: T?, _ y: T?) -> Bool {
        switch (x, y) {
        case (nil, _): y != nil
        case (_, nil): false
        case (let x?, let y?): x < y
        }
    }

    private static func ranks<T: Comparable>(_ column: [T?]) -> [Int32] {
        column.withUnsafeBufferPointer { values in
            var order = Array(values.indices)
            order.sort { less(values[$0], values[$1]) }
            var ranks = [Int32](repeating: 0, count: values.count)
            var rank: Int32 = 0
            for place in order.indices {
                if place > 0, less(values[order[place - 1]], values[order[place]]) { rank += 1 }
                ranks[order[place]] = rank
            }
            return ranks
        }
    }

    private static func ranks<T: Comparable>(_ column: [T]) -> [Int32] {
        ranks(column.map { Optional($0) })
    }

    /// The order of the matches: by the keys, then by `ids` (stable).
    func permutation(ids: [ObjectID]) -> [Int] {
        switch first {
        case .integers(let values): permutation(values, ids)
        case .numbers(let values): permutation(values, ids)
        case .texts(let values): permutation(values, ids)
        case .values: permutation(Self.ranks(first).map { Optional($0) }, ids)
        }
    }

    private func permutation<T: Comparable>(_ column: [T?], _ ids: [ObjectID]) -> [Int] {
        var order = Array(ids.indices)
        let others = others, ascending = firstAscending
        column.withUnsafeBufferPointer { column in
            ranks.withUnsafeBufferPointer { ranks in
                ids.withUnsafeBufferPointer { ids in
                    order.sort { a, b in
                        if Self.less(column[a], column[b]) { return ascending }
                        if Self.less(column[b], column[a]) { return !ascending }
                        for key in 0..<others {
                            let x = ranks[a * others + key], y = ranks[b * others + key]
                            if x != y { return x < y }
                        }
                        return ids[a] < ids[b]
                    }
                }
            }
        }
        return order
    }
}
