import CairnSupport
import Foundation

/// Rows of an entity's attribute values already in the store's encoding (docs/FORMAT.md §9),
/// for a batch upsert that makes no ``Value``: the JSON mapper reads flat records straight into
/// them. Every row holds every attribute of the entity, in order (a value the record did not give
/// holds the attribute's default, and ``isGiven(_:_:)`` says so); transient attributes hold null.
package struct EncodedRows {
    /// The entity's attribute count: values per row.
    package let attributeCount: Int
    /// Every row's values, end to end.
    private var writer = ByteWriter(capacity: 1 << 16)
    /// Per row, the start of each value and the row's end (`attributeCount + 1` entries a row).
    private var starts: [Int] = []
    /// Per row, a bit per attribute: whether the record gave it.
    private var given: [UInt64] = []
    private let wordsPerRow: Int

    /// No rows yet, for an entity of `attributeCount` attributes.
    package init(attributeCount: Int) {
        self.attributeCount = attributeCount
        wordsPerRow = max(1, (attributeCount + 63) / 64)
    }

    /// The number of rows.
    package var count: Int { starts.count / (attributeCount + 1) }

    /// Appends a row: `value(position, &writer)` writes each attribute's encoded value in order
    /// (with ``ValueEncoding``'s writers) and says whether the record gave it.
    package mutating func append(_ value: (Int, inout ByteWriter) -> Bool) {
        let wordStart = given.count
        given.append(contentsOf: repeatElement(0, count: wordsPerRow))
        for position in 0..<attributeCount {
            starts.append(writer.count)
            if value(position, &writer) { given[wordStart + position >> 6] |= 1 << UInt64(position & 63) }
        }
        starts.append(writer.count)
    }

    /// Appends the rows of `other`, made for the same entity, after these.
    package mutating func append(contentsOf other: EncodedRows) {
        precondition(other.attributeCount == attributeCount, "rows of entities of different attribute counts")  // a caller's mistake, never input
        let base = writer.count
        writer.reserve(other.writer.count)
        other.writer.bytes.withUnsafeBytes { writer.write(bytes: $0) }
        starts.reserveCapacity(starts.count + other.starts.count)
        for start in other.starts { starts.append(base + start) }
        given.append(contentsOf: other.given)
    }

    /// Where attribute `position` of row `row` lies in ``withBytes(_:)``'s buffer.
    func range(_ row: Int, _ position: Int) -> Range<Int> {
        let index = row * (attributeCount + 1) + position
        return starts[index]..<starts[index + 1]
    }

    /// Where row `row` lies (every attribute, in order) in ``withBytes(_:)``'s buffer.
    func rowRange(_ row: Int) -> Range<Int> {
        let first = row * (attributeCount + 1)
        return starts[first]..<starts[first + attributeCount]
    }

    /// Every row's bytes, end to end.
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try writer.bytes.withUnsafeBytes(body)
    }

    /// Whether the record of `row` gave attribute `position`.
    package func isGiven(_ row: Int, _ position: Int) -> Bool {
        given[row * wordsPerRow + position >> 6] & (1 << UInt64(position & 63)) != 0
    }
}
