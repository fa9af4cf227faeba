/// The tag byte that begins every encoded value, in change records and in rows alike
/// (docs/FORMAT.md §9), and the layout of the bytes that follow it.
///
/// This is the one table of the value encoding: the change-record codec writes and reads values
/// by these tags, the row reader (``RowBytes``) finds where each value ends from ``layout``,
/// comparisons and hashes read values in place by them. A new value type is a new case here
/// with its layout; the tag numbers are the file format and never change.
enum ValueTag: UInt8, CaseIterable, Sendable {
    case null = 0, string, integer, double, float, decimal, falseValue, trueValue, date, binary, uuid, uri
    case noObject, object, objects

    /// What follows a tag byte.
    enum Layout: Equatable, Sendable {
        /// Nothing: the tag is the value.
        case tagOnly
        /// A fixed number of bytes (little-endian numbers, a UUID's 16 bytes).
        case fixed(Int)
        /// One varint (an integer, zigzag-encoded).
        case varint
        /// A varint length, then that many bytes (UTF-8 text, a decimal's text, binary data).
        case lengthPrefixed
        /// Two varints: an object's entity and key.
        case objectID
        /// A varint count, then that many pairs of varints (entity, key).
        case objectIDs
    }

    /// The layout of each tag's value: the table.
    var layout: Layout {
        switch self {
        case .null, .falseValue, .trueValue, .noObject: .tagOnly
        case .double, .date: .fixed(8)
        case .float: .fixed(4)
        case .uuid: .fixed(16)
        case .integer: .varint
        case .string, .decimal, .binary, .uri: .lengthPrefixed
        case .object: .objectID
        case .objects: .objectIDs
        }
    }

    /// The whole size of a value with this tag when the tag fixes it (tag byte included), or 0
    /// when the value encodes its size.
    var fixedSize: Int {
        switch layout {
        case .tagOnly: 1
        case .fixed(let bytes): 1 + bytes
        case .varint, .lengthPrefixed, .objectID, .objectIDs: 0
        }
    }

    /// ``fixedSize`` of tags 0–7 and 8–15, a byte each (tag 0 in the lowest byte), for the row
    /// reader's lookup without a branch per tag (``fixedSize(ofTag:)``). Literals, so that the
    /// lookup reads constants (a table built at first use costs a check at every read);
    /// `ValueTagTests` checks them against ``layout``.
    static let packedFixedSizes: (low: UInt64, high: UInt64) = (0x0101_0005_0900_0001, 0x0000_0001_0011_0009)

    /// The fixed size of the value a tag byte begins (see ``fixedSize``); 0 when the value
    /// encodes its size or the tag is unknown.
    @inline(__always)
    static func fixedSize(ofTag tag: UInt8) -> Int {
        let packed = packedFixedSizes
        return Int(truncatingIfNeeded: tag < 8 ? packed.low >> (UInt64(tag) &* 8) : tag < 16 ? packed.high >> (UInt64(tag &- 8) &* 8) : 0) & 0xFF
    }
}
