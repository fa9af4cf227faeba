import CairnSupport
import Foundation

/// Bytes that do not decode as what they must be: a damaged or foreign record, row or base
/// file. The message says what was found; callers add where (LSN, file, offset, object).
struct EncodingProblem: Error {
    var message: String
}

extension ValueEncoding {
    /// Reads the attribute value whose tag (already read) is `tag`.
    ///
    /// - Throws: ``EncodingProblem`` for a relationship's tag or an invalid decimal; the
    ///   reader's overrun when the bytes end early.
    static func readAttribute(_ tag: ValueTag, _ reader: inout ByteReader) throws -> Value {
        // Strings are decoded leniently (invalid UTF-8 becomes U+FFFD): the frame checksum
        // already vouches for the bytes, and this never fails on a forged record.
        func text() throws -> String { String(decoding: try reader.readLengthPrefixed(), as: UTF8.self) }
        switch tag {
        case .null: return .null
        case .string: return .string(try text())
        case .integer: return .integer(try reader.readSignedVarint())
        case .double: return .double(Double(bitPattern: try reader.read()))
        case .float: return .float(Float(bitPattern: try reader.read()))
        case .decimal:
            let description = try text()
            guard let number = decimal(description) else { throw EncodingProblem(message: "invalid decimal \(description)") }
            return .decimal(number)
        case .falseValue: return .boolean(false)
        case .trueValue: return .boolean(true)
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try reader.read())))
        case .binary: return .binary(Array(try reader.readLengthPrefixed()))
        case .uuid:
            let bytes = try reader.readBytes(16)
            var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: bytes) }
            return .uuid(UUID(uuid: uuid))
        case .uri: return .uri(try text())
        case .noObject, .object, .objects: throw EncodingProblem(message: "a relationship value where an attribute value belongs")
        }
    }

    /// The property value (an attribute's, or a relationship's targets) of one stored value,
    /// checked when its row was built; bytes that do not decode read as null rather than trap.
    package static func decodeProperty(_ bytes: UnsafeRawBufferPointer) -> PropertyValue {
        var reader = ByteReader(bytes)
        do {
            let tagByte = try reader.readByte()
            guard let tag = ValueTag(rawValue: tagByte) else { return .attribute(.null) }
            switch tag {
            case .noObject: return .toOne(nil)
            case .object: return .toOne(ObjectID(entity: Int(try reader.readVarint()), key: try reader.readVarint()))
            case .objects:
                let count = try reader.readCount(limit: reader.remaining)
                var ids: [ObjectID] = []
                ids.reserveCapacity(count)
                for _ in 0..<count { ids.append(ObjectID(entity: Int(try reader.readVarint()), key: try reader.readVarint())) }
                return .toMany(ids)
            case .null, .string, .integer, .double, .float, .decimal, .falseValue, .trueValue, .date, .binary, .uuid, .uri:
                return .attribute(try readAttribute(tag, &reader))
            }
        } catch {
            return .attribute(.null)
        }
    }

    /// The attribute value the bytes encode (nil: they encode a relationship's targets).
    package static func decode(_ bytes: UnsafeRawBufferPointer) -> Value? {
        guard case .attribute(let value) = decodeProperty(bytes) else { return nil }
        return value
    }

    /// A decimal written as `Decimal.description` writes it: an optional `-`, digits, and
    /// optionally `.` and digits. Anything else, NaN too (no attribute holds it), is refused (`Decimal(string:)` alone
    /// reads the longest number at the start and ignores the rest: `12.x.3` would read as 12).
    static func decimal(_ text: String) -> Decimal? {
        var bytes = Substring(text).utf8[...]
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        let digits = { (part: Substring.UTF8View.SubSequence) in !part.isEmpty && part.allSatisfy { $0 >= 48 && $0 <= 57 } }
        let parts = bytes.split(separator: UInt8(ascii: "."), maxSplits: 1, omittingEmptySubsequences: false)
        guard (parts.count == 1 || parts.count == 2), parts.allSatisfy(digits) else { return nil }
        return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
    }
}
