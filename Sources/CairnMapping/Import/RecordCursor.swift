/// Walks the input to its top-level records: the elements of an array, a single object, or one
/// per value of JSON Lines; under a root key path (`data.people`), what that path names in each
/// top-level value.
struct RecordCursor {
    var scanner: JSONScanner
    let root: [String]
    /// Whether the cursor is inside the array of records.
    private var inArray = false
    /// Top-level records given so far.
    private(set) var count = 0

    /// A cursor from the start of `bytes`; `allowsTrailingCommas`: the scanner's
    /// (``ImportOptions/allowsTrailingCommas``).
    init(_ bytes: UnsafeRawBufferPointer, root: [String], allowsTrailingCommas: Bool) {
        scanner = JSONScanner(bytes, allowsValueSequence: true, allowsTrailingCommas: allowsTrailingCommas)
        self.root = root
    }

    /// A cursor that starts at `offset`, at a record that begins there: an element of the
    /// top-level array (`insideArray`) or a top-level value (JSON Lines). Records are counted
    /// from there (``countRecords(before:)`` adds those before it).
    init(_ bytes: UnsafeRawBufferPointer, resumingAt offset: Int, insideArray: Bool, allowsTrailingCommas: Bool) {
        scanner = JSONScanner(bytes, resumingAt: offset, insideArray: insideArray, allowsTrailingCommas: allowsTrailingCommas)
        root = []
        inArray = insideArray
    }

    /// Whether the cursor is inside the top-level array of records.
    var isInArray: Bool { inArray }

    /// Counts `earlier` records before those this cursor gave.
    mutating func countRecords(before earlier: Int) {
        count += earlier
    }

    /// The first token of the next record (the scanner just after it), or nil at the end.
    mutating func next() throws -> JSONScanner.Token? {
        while true {
            if inArray {
                guard let token = try scanner.next() else { return nil }
                if token == .endArray {
                    inArray = false
                    try unwind()
                    continue
                }
                count += 1
                return token
            }
            guard let token = try scanner.next() else { return nil }
            guard let found = try descend(token) else { continue }
            if found == .beginArray {
                inArray = true
                continue
            }
            count += 1
            return found
        }
    }

    /// After a record that was not inside an array: leaves what encloses it.
    mutating func finishRecord() throws {
        if !inArray { try unwind() }
    }

    /// Follows the root key path from a top-level value's first token to the records; the token
    /// there (`[` or a record's first token), or nil when the path leads nowhere in this value.
    private mutating func descend(_ first: JSONScanner.Token) throws -> JSONScanner.Token? {
        var token = first
        for (depth, key) in root.enumerated() {
            guard token == .beginObject else {
                let place = depth == 0 ? "the input" : root[..<depth].joined(separator: ".")
                throw MappingError(
                    .unexpectedShape, "\(place) is \(RecordReader.describe(token)), where an object holding \(key) belongs", offset: scanner.offset)
            }
            var found: JSONScanner.Token?
            while let next = try scanner.next() {
                guard case .key(let name) = next else { break }
                guard let value = try scanner.next() else { break }
                if scanner.string(name, equals: key) {
                    found = value
                    break
                }
                try scanner.skip(value)
            }
            guard let found else {
                throw MappingError(
                    .unexpectedShape, "no records at \(root.joined(separator: ".")): the input has no \(root[...depth].joined(separator: "."))",
                    offset: scanner.offset)
            }
            token = found
        }
        return token
    }

    /// Skips the rest of the objects around the records, back to the top level.
    private mutating func unwind() throws {
        while scanner.depth > 0 {
            guard let token = try scanner.next() else { return }
            if case .key = token, let value = try scanner.next() { try scanner.skip(value) }
        }
    }
}
