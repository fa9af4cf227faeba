import CairnLog
import Foundation

/// A comparison of one attribute of the evaluated object with a constant, decided on the
/// attribute's encoded bytes in its row without decoding it (no allocation): integers, doubles,
/// booleans, and ASCII text. Returns nil when the bytes do not allow it (non-ASCII text, a value
/// of another kind), and the general evaluation decides.
///
/// Plain data (the needle of a text comparison lives in memory its ``CompiledComparison``
/// allocates and frees), so that copying one for every row touches no reference count.
enum RowComparison: @unchecked Sendable {
    // Safety: the needle's memory is written once, before the comparison is used, and freed
    // with the comparison that owns it.
    case integer(position: Int, PredicateOperator, Int64)
    /// A double, or a date (`isDate` says which: a date is compared by its seconds since 2001).
    case double(position: Int, PredicateOperator, Double, isDate: Bool)
    case boolean(position: Int, PredicateOperator, Bool)
    /// ASCII `needle`, already lowercased when `caseInsensitive`; with `diacriticInsensitive`,
    /// only ASCII text is decided here (é would fold to e).
    case text(position: Int, PredicateOperator, needle: UnsafeBufferPointer<UInt8>, caseInsensitive: Bool, diacriticInsensitive: Bool)

    /// The fast form of a comparison, when there is one.
    init?(lhs: CompiledExpression, op: PredicateOperator, rhs: CompiledExpression, options: ComparisonOptions, modifier: ComparisonModifier) {
        guard modifier == .direct, case .keyPath(let path) = lhs, let position = path.directAttribute,
            case .constant(let constant) = rhs, constant != .null
        else { return nil }
        let ordering: Set<PredicateOperator> = [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual]
        switch (path.attributeType, constant) {
        case (let type?, .integer(let number)) where type.integerRange != nil && ordering.contains(op):
            self = .integer(position: position, op, number)
        case (.double?, .double(let number)) where ordering.contains(op) && !number.isNaN:
            self = .double(position: position, op, number, isDate: false)
        case (.date?, .date(let date)) where ordering.contains(op) && !date.timeIntervalSinceReferenceDate.isNaN:
            self = .double(position: position, op, date.timeIntervalSinceReferenceDate, isDate: true)
        case (.boolean?, .boolean(let flag)) where op == .equal || op == .notEqual:
            self = .boolean(position: position, op, flag)
        case (.string?, .string(let text))
        where text.utf8.allSatisfy({ $0 < 0x80 })
            && [.equal, .notEqual, .contains, .beginsWith, .endsWith].contains(op)
            && options.subtracting(.normalized).isSubset(of: [.caseInsensitive, .diacriticInsensitive]):
            let caseInsensitive = options.contains(.caseInsensitive)
            let bytes = caseInsensitive ? Array(text.lowercased().utf8) : Array(text.utf8)
            let needle = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: bytes.count)
            _ = needle.initialize(from: bytes)
            self = .text(
                position: position, op, needle: UnsafeBufferPointer(needle),
                caseInsensitive: caseInsensitive, diacriticInsensitive: options.contains(.diacriticInsensitive))
        default:
            return nil
        }
    }

    /// Frees the needle (by the comparison that owns this one, when it goes).
    func deallocate() {
        if case .text(_, _, let needle, _, _) = self { needle.deallocate() }
    }

    /// Decides on `row`, or nil to leave it to the general evaluation.
    @inline(__always)
    func evaluate(_ row: RowBytes) -> Bool? {
        switch self {
        case .integer(let position, let op, let constant):
            let bytes = row.value(position)
            if ValueEncoding.isNull(bytes) { return ComparisonRules.holdsForNil(op) }
            guard let value = ValueEncoding.integer(bytes) else { return nil }
            return ComparisonRules.holds(op, ComparisonRules.order(value, constant))
        case .double(let position, let op, let constant, let isDate):
            let bytes = row.value(position)
            if ValueEncoding.isNull(bytes) { return ComparisonRules.holdsForNil(op) }
            guard let value = isDate ? ValueEncoding.dateSeconds(bytes) : ValueEncoding.double(bytes), !value.isNaN else { return nil }
            return ComparisonRules.holds(op, ComparisonRules.order(value, constant))
        case .boolean(let position, let op, let constant):
            let bytes = row.value(position)
            if ValueEncoding.isNull(bytes) { return ComparisonRules.holdsForNil(op) }
            guard let value = ValueEncoding.boolean(bytes) else { return nil }
            return ComparisonRules.holds(op, ComparisonRules.order(value ? 1 : 0, constant ? 1 : 0))
        case .text(let position, let op, let needle, let caseInsensitive, let diacriticInsensitive):
            let bytes = row.value(position)
            if ValueEncoding.isNull(bytes) { return ComparisonRules.holdsForNil(op) }
            guard let text = ValueEncoding.text(bytes) else { return nil }
            // CONTAINS on ASCII text: the check and the search in one pass.
            if op == .contains, let found = Self.asciiContains(text, needle, caseInsensitive) { return found }
            guard Self.comparableAsBytes(text, latin1: !diacriticInsensitive) else { return nil }
            return Self.match(op, text, needle, caseInsensitive)
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
        // Eight bytes at a time while they are all ASCII.
        while index + 8 <= count, text.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 { index += 8 }
        while index < count {
            let byte = text[index]
            if byte < 0x80 { index += 1; continue }
            guard latin1, byte == 0xC3, index + 1 < count, text[index + 1] >= 0x80, text[index + 1] <= 0xBF else { return false }
            index += 2
        }
        return true
    }

    @inline(__always)
    private static func byte(_ text: UnsafeRawBufferPointer, _ index: Int, _ fold: Bool) -> UInt8 {
        fold ? ComparisonRules.foldedASCII(text[index]) : text[index]
    }

    private static func equalAt(_ text: UnsafeRawBufferPointer, _ start: Int, _ needle: UnsafeBufferPointer<UInt8>, _ fold: Bool) -> Bool {
        for index in needle.indices where byte(text, start + index, fold) != needle[index] { return false }
        return true
    }

    private static func match(_ op: PredicateOperator, _ text: UnsafeRawBufferPointer, _ needle: UnsafeBufferPointer<UInt8>, _ fold: Bool) -> Bool {
        switch op {
        case .equal, .notEqual:
            return (text.count == needle.count && equalAt(text, 0, needle, fold)) == (op == .equal)
        case .beginsWith:
            return text.count >= needle.count && equalAt(text, 0, needle, fold)
        case .endsWith:
            return text.count >= needle.count && equalAt(text, text.count - needle.count, needle, fold)
        default:
            return contains(text, needle, fold)
        }
    }

    /// Whether `needle` (lowercase when `fold`) occurs in `text`, when the text is all ASCII; nil
    /// as soon as a byte is not (the caller then checks the text and searches it as before).
    /// Eight bytes at a time: a word with a byte ≥ 0x80 stops it; bytes equal to the needle's
    /// first byte (in either case) are found with the zero-byte trick (it may flag a byte above
    /// a real one, never miss one: each flagged position is checked).
    private static func asciiContains(_ text: UnsafeRawBufferPointer, _ needle: UnsafeBufferPointer<UInt8>, _ fold: Bool) -> Bool? {
        guard let head = needle.first else { return true }
        let count = text.count
        let last = count - needle.count
        let upper = fold && head >= 0x61 && head <= 0x7A ? head - 0x20 : head
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let heads = ones &* UInt64(head), uppers = ones &* UInt64(upper)
        var found = false
        // Checks the word at `index` (8 bytes): false when a byte is not ASCII.
        func check(_ index: Int) -> Bool {
            let word = text.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            if word & highs != 0 { return false }
            if !found {
                let x = word ^ heads, y = word ^ uppers
                var flagged = ((x &- ones) & ~x & highs) | ((y &- ones) & ~y & highs)
                while flagged != 0 {
                    let start = index &+ flagged.trailingZeroBitCount / 8
                    if start <= last, byte(text, start, fold) == head, equalAt(text, start, needle, fold) {
                        found = true
                        break
                    }
                    flagged &= flagged &- 1
                }
            }
            return true
        }
        if count >= 8 {
            var index = 0
            while index &+ 8 <= count {
                guard check(index) else { return nil }
                index &+= 8
            }
            // The last bytes as one more word, overlapping the one before.
            if index < count, !check(count &- 8) { return nil }
            return found
        }
        for index in 0..<count {
            let value = text[index]
            if value >= 0x80 { return nil }
            if !found, index <= last, value == head || value == upper, equalAt(text, index, needle, fold) { found = true }
        }
        return found
    }

    /// Whether `needle` (lowercase when `fold`) occurs in `text`: candidates are found by the
    /// needle's first byte in either case, with `memchr` when it has only one.
    private static func contains(_ text: UnsafeRawBufferPointer, _ needle: UnsafeBufferPointer<UInt8>, _ fold: Bool) -> Bool {
        guard let head = needle.first else { return true }
        guard text.count >= needle.count, let base = text.baseAddress else { return false }
        let last = text.count - needle.count
        let upper = fold && head >= 0x61 && head <= 0x7A ? head - 0x20 : head
        var start = 0
        if upper == head {
            while start <= last {
                guard let found = memchr(base + start, Int32(head), last - start + 1) else { return false }
                start = UnsafeRawPointer(found) - base
                if equalAt(text, start, needle, fold) { return true }
                start += 1
            }
            return false
        }
        while start <= last {
            let byte = text[start]
            if (byte == head || byte == upper) && equalAt(text, start, needle, fold) { return true }
            start += 1
        }
        return false
    }
}
