import CairnSupport
import Foundation

/// Rows of an entity's attribute values already in the store's encoding (docs/FORMAT.md §9),
/// for a batch upsert that makes no ``Value``: the JSON mapper reads flat records straight into
/// them. Every row holds every attribute of the entity, in order (a value the record did not give
/// holds the attribute's default, and ``isGiven(_:_:)`` says so); transient attributes hold null.
/// After the attributes, a row may hold one value per reference (``EncodedReference``): the
/// unique key of the object a to-one relationship is to point to, or null to empty it.
package struct EncodedRows {
    /// The entity's attribute count.
    package let attributeCount: Int
    /// The references after the attributes.
    package let referenceCount: Int
    /// Values per row: the attributes, then the references.
    private let valueCount: Int
    /// Every row's values, end to end.
    private var writer = ByteWriter(capacity: 1 << 16)
    /// Per row, the start of each value and the row's end (`valueCount + 1` entries a row).
    private var starts: [Int] = []
    /// Per row, a bit per value: whether the record gave it.
    private var given: [UInt64] = []
    private let wordsPerRow: Int

    /// No rows yet, for an entity of `attributeCount` attributes, with `referenceCount`
    /// references after them.
    package init(attributeCount: Int, referenceCount: Int = 0) {
        self.attributeCount = attributeCount
        self.referenceCount = referenceCount
        valueCount = attributeCount + referenceCount
        wordsPerRow = max(1, (valueCount + 63) / 64)
    }

    /// The number of rows.
    package var count: Int { starts.count / (valueCount + 1) }

    /// Appends a row: `value(position, &writer)` writes each value's encoding in order (the
    /// attributes with ``ValueEncoding``'s writers, then each reference's key) and says whether
    /// the record gave it.
    package mutating func append(_ value: (Int, inout ByteWriter) -> Bool) {
        let wordStart = given.count
        given.append(contentsOf: repeatElement(0, count: wordsPerRow))
        for position in 0..<valueCount {
            starts.append(writer.count)
            if value(position, &writer) { given[wordStart + position >> 6] |= 1 << UInt64(position & 63) }
        }
        starts.append(writer.count)
    }

    /// Appends the rows of `other`, made for the same entity, after these.
    package mutating func append(contentsOf other: EncodedRows) {
        precondition(other.valueCount == valueCount, "rows of entities of different value counts")  // a caller's mistake, never input
        let base = writer.count
        writer.reserve(other.writer.count)
        other.writer.bytes.withUnsafeBytes { writer.write(bytes: $0) }
        starts.reserveCapacity(starts.count + other.starts.count)
        for start in other.starts { starts.append(base + start) }
        given.append(contentsOf: other.given)
    }

    /// Where value `position` of row `row` lies in ``withBytes(_:)``'s buffer (reference
    /// `r`'s key is value `attributeCount + r`).
    func range(_ row: Int, _ position: Int) -> Range<Int> {
        let index = row * (valueCount + 1) + position
        return starts[index]..<starts[index + 1]
    }

    /// Where row `row`'s attributes lie (every one, in order) in ``withBytes(_:)``'s buffer.
    func rowRange(_ row: Int) -> Range<Int> {
        let first = row * (valueCount + 1)
        return starts[first]..<starts[first + attributeCount]
    }

    /// Every row's bytes, end to end.
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try writer.bytes.withUnsafeBytes(body)
    }

    /// The key reference `reference` of row `row` holds, decoded (nil: null, or not a value).
    package func key(_ row: Int, reference: Int) -> Value? {
        guard row >= 0, row < count, reference >= 0, reference < referenceCount else { return nil }
        return withBytes { ValueEncoding.decode($0.piece(range(row, attributeCount + reference))) }.flatMap { $0 == .null ? nil : $0 }
    }

    /// Whether the record of `row` gave value `position` (an attribute, or a reference after them).
    package func isGiven(_ row: Int, _ position: Int) -> Bool {
        given[row * wordsPerRow + position >> 6] & (1 << UInt64(position & 63)) != 0
    }
}
