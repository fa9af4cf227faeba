/// Per encoded row, the top-level record it was read from: its number and the offset of its
/// first byte (for the errors and warnings that name a row's record, its path and offset).
struct RowRecords {
    /// Per row, its record's number.
    private(set) var numbers: [Int] = []
    /// Per row, the offset of its record's `{`.
    private(set) var offsets: [Int] = []

    var count: Int { numbers.count }

    /// Notes the record of the next row.
    mutating func append(number: Int, offset: Int) {
        numbers.append(number)
        offsets.append(offset)
    }

    /// Appends the rows of a second reader, whose record numbers count from `first`.
    mutating func append(contentsOf other: RowRecords, numbersFrom first: Int) {
        numbers.append(contentsOf: other.numbers.lazy.map { $0 + first })
        offsets.append(contentsOf: other.offsets)
    }
}
