import CairnSupport
import Foundation

/// The stored encoding of values (docs/FORMAT.md §9), in change records, rows and base files
/// alike: the one place that writes, reads, measures and checks a value's bytes.
///
/// A value is a tag byte (``ValueTag``, the one table) and the bytes its layout says. This type
/// owns every piece of that knowledge:
/// - writing a ``Value`` or ``PropertyValue`` (``write(_:_:)-(Value,_)``), and the scalar writers
///   the JSON mapper uses to write flat records without making a ``Value`` (``writeInteger(_:_:)``…);
/// - decoding bytes back (``decodeProperty(_:)``, ``decode(_:)``);
/// - reading scalars in place, for comparisons, sorts, aggregates and export
///   (``integer(_:)``, ``number(_:)``, ``text(_:)``, ``scalar(_:)``…), and a value's length
///   (``length(_:available:)``);
/// - checking a value against what its property may hold, at replay
///   (``skipChecked(_:model:entity:position:)``).
///
/// Nothing outside this folder reads or writes a tag byte (`ValueEncodingTests` checks it).
/// A new attribute type is a new ``ValueTag`` case with its layout, a ``StoredKind``, and the
/// cases the compiler then asks for in the switches here.
package enum ValueEncoding {
    // MARK: Writing

    /// Writes a property's value: an attribute's, or a relationship's targets.
    static func write(_ value: PropertyValue, _ writer: inout ByteWriter) {
        switch value {
        case .attribute(let attribute): write(attribute, &writer)
        case .toOne(nil): writer.writeByte(ValueTag.noObject.rawValue)
        case .toOne(let id?):
            writer.writeByte(ValueTag.object.rawValue)
            writeID(id, &writer)
        case .toMany(let ids):
            writer.writeByte(ValueTag.objects.rawValue)
            writer.writeVarint(UInt64(ids.count))
            for id in ids { writeID(id, &writer) }
        }
    }

    /// Writes an attribute value.
    package static func write(_ value: Value, _ writer: inout ByteWriter) {
        switch value {
        case .null: writeNull(&writer)
        case .string(let text):
            writer.writeByte(ValueTag.string.rawValue)
            writer.writeLengthPrefixed(utf8: text)
        case .integer(let number): writeInteger(number, &writer)
        case .double(let number): writeDouble(number, &writer)
        case .float(let number):
            writer.writeByte(ValueTag.float.rawValue)
            writer.write(number.bitPattern)
        case .decimal(let number):
            writer.writeByte(ValueTag.decimal.rawValue)
            writer.writeLengthPrefixed(Array(number.description.utf8))
        case .boolean(let flag): writeBoolean(flag, &writer)
        case .date(let date): writeDate(date, &writer)
        case .binary(let bytes):
            writer.writeByte(ValueTag.binary.rawValue)
            writer.writeLengthPrefixed(bytes)
        case .uuid(let id): writeUUID(id.uuid, &writer)
        case .uri(let text):
            writer.writeByte(ValueTag.uri.rawValue)
            writer.writeLengthPrefixed(utf8: text)
        }
    }

    /// An object ID, as records and relationship values hold it: two varints, entity and key.
    static func writeID(_ id: ObjectID, _ writer: inout ByteWriter) {
        writer.writeVarint(UInt64(id.entity))
        writer.writeVarint(id.key)
    }

    /// Writes null.
    package static func writeNull(_ writer: inout ByteWriter) { writer.writeByte(ValueTag.null.rawValue) }

    /// Writes a boolean.
    package static func writeBoolean(_ flag: Bool, _ writer: inout ByteWriter) {
        writer.writeByte((flag ? ValueTag.trueValue : ValueTag.falseValue).rawValue)
    }

    /// Writes an integer (of any integer attribute type: zigzag varint).
    package static func writeInteger(_ number: Int64, _ writer: inout ByteWriter) {
        writer.writeByte(ValueTag.integer.rawValue)
        writer.writeSignedVarint(number)
    }

    /// Writes a double (its IEEE 754 bits, little-endian).
    package static func writeDouble(_ number: Double, _ writer: inout ByteWriter) {
        writer.writeByte(ValueTag.double.rawValue)
        writer.write(number.bitPattern)
    }

    /// Writes a date: `Date`'s own representation (seconds since 2001 as a double), exact.
    package static func writeDate(_ date: Date, _ writer: inout ByteWriter) {
        writer.writeByte(ValueTag.date.rawValue)
        writer.write(date.timeIntervalSinceReferenceDate.bitPattern)
    }

    /// Writes a string given as UTF-8 bytes (checked by the caller).
    package static func writeString(utf8 bytes: UnsafeRawBufferPointer, _ writer: inout ByteWriter) {
        writer.writeByte(ValueTag.string.rawValue)
        writer.writeLengthPrefixed(bytes)
    }

    /// Writes a UUID (its 16 bytes).
    package static func writeUUID(_ uuid: uuid_t, _ writer: inout ByteWriter) {
        writer.writeByte(ValueTag.uuid.rawValue)
        withUnsafeBytes(of: uuid) { writer.write(bytes: $0) }
    }

    /// Writes a URI given as UTF-8 bytes (checked by the caller).
    package static func writeURI(utf8 bytes: UnsafeRawBufferPointer, _ writer: inout ByteWriter) {
        writer.writeByte(ValueTag.uri.rawValue)
        writer.writeLengthPrefixed(bytes)
    }

    /// Writes binary data of `count` bytes, which `fill` appends to the writer (decoding them
    /// from text, say, without an array between).
    package static func writeBinary(count: Int, _ writer: inout ByteWriter, _ fill: (inout ByteWriter) -> Void) {
        writer.writeByte(ValueTag.binary.rawValue)
        writer.writeVarint(UInt64(count))
        let start = writer.count
        fill(&writer)
        assert(writer.count - start == count, "binary data of \(count) bytes")
    }

    /// The encoded bytes of one value.
    package static func encoded(_ value: Value) -> [UInt8] {
        var writer = ByteWriter(capacity: 16)
        write(value, &writer)
        return writer.bytes
    }

    /// Calls `body` with a value's encoded bytes (as ``encoded(_:)``): a string shorter than 128
    /// bytes (the common key) is encoded on the stack, without an array.
    static func withEncoded<R>(_ value: Value, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        if case .string(var text) = value, text.utf8.count < 0x80 {
            text.makeContiguousUTF8()
            let count = text.utf8.count
            let result = text.utf8.withContiguousStorageIfAvailable { utf8 in
                withUnsafeTemporaryAllocation(byteCount: count + 2, alignment: 1) { buffer -> R in
                    buffer[0] = ValueTag.string.rawValue
                    buffer[1] = UInt8(count)  // a one-byte varint
                    if count > 0, let base = buffer.baseAddress, let source = utf8.baseAddress {
                        (base + 2).copyMemory(from: source, byteCount: count)
                    }
                    return body(UnsafeRawBufferPointer(buffer))
                }
            }
            if let result { return result }
        }
        return encoded(value).withUnsafeBytes(body)
    }
}
