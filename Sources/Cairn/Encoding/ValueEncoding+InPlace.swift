import Foundation

/// Reading encoded values in place: a value's length, and its scalar without decoding it (no
/// allocation, no reference counting), for row walks, comparisons, sorts, aggregates and export.
/// Lengths are clamped to the bytes given, so damaged bytes never lead a read past the end.
extension ValueEncoding {
    // MARK: Lengths

    /// The length of the value at `offset` of the bytes at `base` that end at `end`: the common
    /// ones (fixed sizes, short strings) without the general measuring.
    @inline(__always)
    static func skip(_ base: UnsafeRawPointer, _ offset: Int, _ end: Int) -> Int {
        let tag = base.load(fromByteOffset: offset, as: UInt8.self)
        let fixed = ValueTag.fixedSize(ofTag: tag)
        if fixed != 0 { return fixed }
        if tag == ValueTag.string.rawValue, offset + 1 < end, case let size = base.load(fromByteOffset: offset + 1, as: UInt8.self), size < 0x80 {
            return 2 + Int(size)
        }
        return length(base + offset, available: end - offset)
    }

    /// The length of the encoded value at `start`, with `available` bytes from there (at most
    /// `available`; an unknown tag counts one byte).
    @inline(__always)
    static func length(_ start: UnsafeRawPointer, available: Int) -> Int {
        guard available > 0 else { return 0 }
        let tag = start.load(as: UInt8.self)
        var fixed = ValueTag.fixedSize(ofTag: tag)
        if fixed != 0 { return min(fixed, available) }
        guard let layout = ValueTag(rawValue: tag)?.layout else { return 1 }  // an unknown tag: one byte
        switch layout {
        case .tagOnly, .fixed: return 1  // (fixed sizes are found above)
        case .varint:
            let (_, size) = varint(start + 1, available: available - 1)
            fixed = 1 + size
        case .lengthPrefixed:
            let (length, size) = varint(start + 1, available: available - 1)
            fixed = length >= UInt64(available) ? available : 1 + size + Int(length)
        case .objectID:
            let (_, first) = varint(start + 1, available: available - 1)
            let (_, second) = varint(start + 1 + first, available: available - 1 - first)
            fixed = 1 + first + second
        case .objectIDs:
            var (pairs, offset) = varint(start + 1, available: available - 1)
            offset += 1
            while pairs > 0, offset < available {
                offset += varint(start + offset, available: available - offset).size
                offset += varint(start + offset, available: available - offset).size
                pairs -= 1
            }
            fixed = offset
        }
        return min(fixed, available)
    }

    /// An unsigned LEB128 varint at `start` and how many bytes it takes (at most `available`;
    /// an unterminated varint takes them all).
    @inline(__always)
    static func varint(_ start: UnsafeRawPointer, available: Int) -> (value: UInt64, size: Int) {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        var index = 0
        while index < available {
            let byte = start.load(fromByteOffset: index, as: UInt8.self)
            index += 1
            if shift < 64 { result |= UInt64(byte & 0x7F) << shift }
            if byte & 0x80 == 0 { return (result, index) }
            shift += 7
        }
        return (result, max(0, available))
    }

    // MARK: Scalars

    /// Whether the value is null (false for no bytes: no value at all).
    @inline(__always)
    package static func isNull(_ value: UnsafeRawBufferPointer) -> Bool {
        value.count == 1 && value[0] == ValueTag.null.rawValue
    }

    /// An integer value's number, or nil for another kind of value.
    @inline(__always)
    static func integer(_ value: UnsafeRawBufferPointer) -> Int64? {
        guard value.count >= 2, let base = value.baseAddress, value[0] == ValueTag.integer.rawValue else { return nil }
        let raw = varint(base + 1, available: value.count - 1).value
        return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }

    /// A boolean value, or nil for another kind of value.
    @inline(__always)
    static func boolean(_ value: UnsafeRawBufferPointer) -> Bool? {
        guard value.count == 1 else { return nil }
        switch value[0] {
        case ValueTag.trueValue.rawValue: return true
        case ValueTag.falseValue.rawValue: return false
        default: return nil
        }
    }

    /// A double value, or nil for another kind of value (a date included).
    @inline(__always)
    static func double(_ value: UnsafeRawBufferPointer) -> Double? {
        guard value.count == 9, value[0] == ValueTag.double.rawValue else { return nil }
        return eightBytes(value)
    }

    /// A date value's seconds since 2001, or nil for another kind of value.
    @inline(__always)
    static func dateSeconds(_ value: UnsafeRawBufferPointer) -> Double? {
        guard value.count == 9, value[0] == ValueTag.date.rawValue else { return nil }
        return eightBytes(value)
    }

    /// A double value, or a date value's seconds since 2001 (what sorts order them by), or nil.
    @inline(__always)
    static func number(_ value: UnsafeRawBufferPointer) -> Double? {
        guard value.count == 9, value[0] == ValueTag.double.rawValue || value[0] == ValueTag.date.rawValue else { return nil }
        return eightBytes(value)
    }

    @inline(__always)
    private static func eightBytes(_ value: UnsafeRawBufferPointer) -> Double {
        Double(bitPattern: value.loadUnaligned(fromByteOffset: 1, as: UInt64.self).littleEndian)
    }

    /// A string value's UTF-8 bytes, or nil for another kind of value.
    @inline(__always)
    static func text(_ value: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        guard value.count >= 2, let base = value.baseAddress, value[0] == ValueTag.string.rawValue else { return nil }
        let (length, size) = varint(base + 1, available: value.count - 1)
        guard length == UInt64(value.count - 1 - size) else { return nil }
        return UnsafeRawBufferPointer(start: base + 1 + size, count: Int(length))
    }

    /// The value as a scalar read in place, for writers that render values without decoding
    /// them (export); ``StoredScalar/other`` for the kinds that are decoded instead.
    package static func scalar(_ value: UnsafeRawBufferPointer) -> StoredScalar {
        guard let first = value.first else { return .other }
        switch first {
        case ValueTag.null.rawValue where value.count == 1: return .null
        case ValueTag.falseValue.rawValue where value.count == 1: return .boolean(false)
        case ValueTag.trueValue.rawValue where value.count == 1: return .boolean(true)
        case ValueTag.integer.rawValue: return integer(value).map(StoredScalar.integer) ?? .other
        case ValueTag.string.rawValue: return text(value).map(StoredScalar.string) ?? .other
        case ValueTag.double.rawValue: return double(value).map(StoredScalar.double) ?? .other
        case ValueTag.date.rawValue: return dateSeconds(value).map { .date(secondsSince2001: $0) } ?? .other
        default: return .other
        }
    }
}

/// A stored value read in place (``ValueEncoding/scalar(_:)``): the kinds a writer renders
/// straight from the bytes.
package enum StoredScalar {
    case null
    case boolean(Bool)
    case integer(Int64)
    /// A string's UTF-8 bytes, borrowed from the row.
    case string(UnsafeRawBufferPointer)
    case double(Double)
    /// A date, as its seconds since 2001 (`Date(timeIntervalSinceReferenceDate:)`).
    case date(secondsSince2001: Double)
    /// Another kind (decimal, float, binary, UUID, URI, a relationship's targets) or bytes that
    /// do not read: decode it (``ValueEncoding/decodeProperty(_:)``).
    case other
}
