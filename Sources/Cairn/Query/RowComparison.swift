import CairnLog
import Foundation

/// A comparison of one attribute of the evaluated object with a constant, decided on the
/// attribute's encoded bytes in its row without decoding it (no allocation): integers, doubles,
/// booleans, and ASCII text. Returns nil when the bytes do not allow it (non-ASCII text, a value
/// of another kind), and the general evaluation decides.
enum RowComparison: Sendable {
    case integer(position: Int, PredicateOperator, Int64)
    case double(position: Int, PredicateOperator, Double)
    case boolean(position: Int, PredicateOperator, Bool)
    /// ASCII `needle`, already lowercased when `caseInsensitive`; with `diacriticInsensitive`,
    /// only ASCII text is decided here (é would fold to e).
    case text(position: Int, PredicateOperator, needle: [UInt8], caseInsensitive: Bool, diacriticInsensitive: Bool)

    /// The fast form of a comparison, when there is one.
    init?(_ comparison: CompiledComparison) {
        guard comparison.modifier == .direct, case .keyPath(let path) = comparison.lhs, let position = path.directAttribute,
              case .constant(let constant) = comparison.rhs, constant != .null else { return nil }
        let op = comparison.op
        let ordering: Set<PredicateOperator> = [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual]
        switch (path.attributeType, constant) {
        case (let type?, .integer(let number)) where type.integerRange != nil && ordering.contains(op):
            self = .integer(position: position, op, number)
        case (.double?, .double(let number)) where ordering.contains(op) && !number.isNaN:
            self = .double(position: position, op, number)
        case (.boolean?, .bool(let flag)) where op == .equal || op == .notEqual:
            self = .boolean(position: position, op, flag)
        case (.string?, .string(let text)) where text.utf8.allSatisfy({ $0 < 0x80 })
            && [.equal, .notEqual, .contains, .beginsWith, .endsWith].contains(op)
            && comparison.options.subtracting(.normalized).isSubset(of: [.caseInsensitive, .diacriticInsensitive]):
            let caseInsensitive = comparison.options.contains(.caseInsensitive)
            self = .text(position: position, op, needle: caseInsensitive ? Array(text.lowercased().utf8) : Array(text.utf8),
                         caseInsensitive: caseInsensitive, diacriticInsensitive: comparison.options.contains(.diacriticInsensitive))
        default:
            return nil
        }
    }

    /// Decides on `row`, or nil to leave it to the general evaluation.
    func evaluate(_ row: Row) -> Bool? {
        switch self {
        case .integer(let position, let op, let constant):
            return row.withValueBytes(position) { bytes -> Bool? in
                guard let first = bytes.first else { return nil }
                if first == ChangeSetCodec.Tag.null.rawValue { return op == .notEqual }
                guard first == ChangeSetCodec.Tag.integer.rawValue else { return nil }
                var reader = ByteReader(bytes, offset: 1)
                guard let value = try? reader.readSignedVarint() else { return nil }
                return Self.holds(op, value < constant ? .orderedAscending : value > constant ? .orderedDescending : .orderedSame)
            }
        case .double(let position, let op, let constant):
            return row.withValueBytes(position) { bytes -> Bool? in
                guard let first = bytes.first else { return nil }
                if first == ChangeSetCodec.Tag.null.rawValue { return op == .notEqual }
                guard first == ChangeSetCodec.Tag.double.rawValue, bytes.count == 9 else { return nil }
                let value = Double(bitPattern: bytes.loadUnaligned(fromByteOffset: 1, as: UInt64.self).littleEndian)
                guard !value.isNaN else { return nil }
                return Self.holds(op, value < constant ? .orderedAscending : value > constant ? .orderedDescending : .orderedSame)
            }
        case .boolean(let position, let op, let constant):
            return row.withValueBytes(position) { bytes -> Bool? in
                guard let first = bytes.first else { return nil }
                let value: Bool
                switch first {
                case ChangeSetCodec.Tag.trueValue.rawValue: value = true
                case ChangeSetCodec.Tag.falseValue.rawValue: value = false
                case ChangeSetCodec.Tag.null.rawValue: return op == .notEqual
                default: return nil
                }
                return (value == constant) == (op == .equal)
            }
        case .text(let position, let op, let needle, let caseInsensitive, let diacriticInsensitive):
            return row.withValueBytes(position) { bytes -> Bool? in
                guard let first = bytes.first else { return nil }
                if first == ChangeSetCodec.Tag.null.rawValue { return op == .notEqual }
                guard first == ChangeSetCodec.Tag.string.rawValue else { return nil }
                var reader = ByteReader(bytes, offset: 1)
                guard let length = try? reader.readVarint(), Int(exactly: length) == bytes.count - reader.offset else { return nil }
                let text = UnsafeRawBufferPointer(rebasing: bytes[reader.offset...])
                guard Self.comparableAsBytes(text, latin1: !diacriticInsensitive) else { return nil }
                return Self.match(op, text, needle, caseInsensitive)
            }
        }
    }

    /// Whether an ASCII needle can be matched against `text` byte by byte under Unicode rules
    /// (and `[c]`): the text is ASCII, or (when `latin1`) ASCII with precomposed Latin-1 letters
    /// (U+00C0–U+00FF, two bytes starting 0xC3), which normalization leaves alone, which never
    /// lowercase to ASCII and whose bytes never equal an ASCII byte. Anything else (combining
    /// marks, the Kelvin sign…) is left to the general evaluation.
    @inline(__always)
    static func comparableAsBytes(_ text: UnsafeRawBufferPointer, latin1: Bool) -> Bool {
        var index = 0
        let count = text.count
        while index < count {
            let byte = text[index]
            if byte < 0x80 { index += 1; continue }
            guard latin1, byte == 0xC3, index + 1 < count, text[index + 1] >= 0x80, text[index + 1] <= 0xBF else { return false }
            index += 2
        }
        return true
    }

    private static func holds(_ op: PredicateOperator, _ order: ComparisonResult) -> Bool {
        switch op {
        case .equal: order == .orderedSame
        case .notEqual: order != .orderedSame
        case .less: order == .orderedAscending
        case .lessOrEqual: order != .orderedDescending
        case .greater: order == .orderedDescending
        case .greaterOrEqual: order != .orderedAscending
        default: false
        }
    }

    @inline(__always)
    private static func byte(_ text: UnsafeRawBufferPointer, _ index: Int, _ fold: Bool) -> UInt8 {
        let byte = text[index]
        return fold && byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
    }

    private static func equalAt(_ text: UnsafeRawBufferPointer, _ start: Int, _ needle: [UInt8], _ fold: Bool) -> Bool {
        for index in needle.indices where byte(text, start + index, fold) != needle[index] { return false }
        return true
    }

    private static func match(_ op: PredicateOperator, _ text: UnsafeRawBufferPointer, _ needle: [UInt8], _ fold: Bool) -> Bool {
        switch op {
        case .equal, .notEqual:
            return (text.count == needle.count && equalAt(text, 0, needle, fold)) == (op == .equal)
        case .beginsWith:
            return text.count >= needle.count && equalAt(text, 0, needle, fold)
        case .endsWith:
            return text.count >= needle.count && equalAt(text, text.count - needle.count, needle, fold)
        default:
            guard let head = needle.first else { return true }
            guard text.count >= needle.count else { return false }
            for start in 0...(text.count - needle.count) where byte(text, start, fold) == head && equalAt(text, start, needle, fold) {
                return true
            }
            return false
        }
    }
}
