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

    /// One comparison of two matches (by index) per key, each holding its column.
    private let comparators: [(Int, Int) -> ComparisonResult]
    private let ascending: [Bool]

    /// The columns of `query`'s sort keys for the matches `ids`, seen through `views`.
    init(_ query: PreparedQuery, ids: [ObjectID], views: [ObjectView], reader: ObjectReader) {
        ascending = query.request.sortKeys.map(\.ascending)
        comparators = query.sortPaths.indices.map { index in
            Self.comparator(Self.column(query, index, ids: ids, views: views, reader: reader))
        }
    }

    /// Column `index`: typed from the rows' bytes when the key is one of the entity's own
    /// numbers, dates or strings, else from each match's value.
    private static func column(_ query: PreparedQuery, _ index: Int, ids: [ObjectID], views: [ObjectView], reader: ObjectReader) -> Column {
        let path = query.sortPaths[index]
        if let position = path.directAttribute, let type = path.attributeType, !query.request.sortKeys[index].caseInsensitive {
            switch type {
            case .double, .date:
                if let numbers = read(views, position, RowBytes.double) { return .numbers(numbers) }
            case .integer16, .integer32, .integer64:
                if let integers = read(views, position, RowBytes.integer) { return .integers(integers) }
            case .string:
                if let texts = read(views, position, { RowBytes.text($0).map { String(decoding: $0, as: UTF8.self) } }) { return .texts(texts) }
            default:
                break
            }
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
                bytes.first == ChangeSetCodec.Tag.null.rawValue ? .some(nil) : decode(bytes).map { .some($0) }
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

    /// How two values compare (nil sorts first).
    @inline(__always)
    private static func order<T: Comparable>(_ x: T?, _ y: T?) -> ComparisonResult {
        switch (x, y) {
        case (nil, nil): .orderedSame
        case (nil, _): .orderedAscending
        case (_, nil): .orderedDescending
        case (let x?, let y?): x < y ? .orderedAscending : y < x ? .orderedDescending : .orderedSame
        }
    }

    private static func comparator(_ column: Column) -> (Int, Int) -> ComparisonResult {
        switch column {
        case .integers(let values): { a, b in order(values[a], values[b]) }
        case .numbers(let values): { a, b in order(values[a], values[b]) }
        case .texts(let values): { a, b in order(values[a], values[b]) }
        case .values(let values): { a, b in QueryValue.order(values[a], values[b]) ?? .orderedSame }
        }
    }

    /// The order of the matches: by the keys, then by `ids` (stable).
    func permutation(ids: [ObjectID]) -> [Int] {
        var order = Array(ids.indices)
        order.sort { a, b in
            for index in comparators.indices {
                let result = comparators[index](a, b)
                if result != .orderedSame { return ascending[index] ? result == .orderedAscending : result == .orderedDescending }
            }
            return ids[a] < ids[b]
        }
        return order
    }
}
