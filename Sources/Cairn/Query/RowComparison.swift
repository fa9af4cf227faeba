import CCairnSupport
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

    /// The position of the attribute compared.
    var position: Int {
        switch self {
        case .integer(let position, _, _), .double(let position, _, _, _), .boolean(let position, _, _), .text(let position, _, _, _, _):
            position
        }
    }

    /// Decides on `row`, or nil to leave it to the general evaluation.
    @inline(__always)
    func evaluate(_ row: RowBytes) -> Bool? { evaluate(value: row.value(position)) }

    /// Decides on the attribute's encoded value, or nil to leave it to the general evaluation.
    @inline(__always)
    func evaluate(value bytes: UnsafeRawBufferPointer) -> Bool? {
        switch self {
        case .integer(_, let op, let constant):
            if ValueEncoding.isNull(bytes) { return ComparisonRules.holdsForNil(op) }
            guard let value = ValueEncoding.integer(bytes) else { return nil }
            return ComparisonRules.holds(op, ComparisonRules.order(value, constant))
        case .double(_, let op, let constant, let isDate):
            if ValueEncoding.isNull(bytes) { return ComparisonRules.holdsForNil(op) }
            guard let value = isDate ? ValueEncoding.dateSeconds(bytes) : ValueEncoding.double(bytes), !value.isNaN else { return nil }
            return ComparisonRules.holds(op, ComparisonRules.order(value, constant))
        case .boolean(_, let op, let constant):
            if ValueEncoding.isNull(bytes) { return ComparisonRules.holdsForNil(op) }
            guard let value = ValueEncoding.boolean(bytes) else { return nil }
            return ComparisonRules.holds(op, ComparisonRules.order(value ? 1 : 0, constant ? 1 : 0))
        case .text(_, let op, let needle, let caseInsensitive, let diacriticInsensitive):
            if ValueEncoding.isNull(bytes) { return ComparisonRules.holdsForNil(op) }
            guard let text = ValueEncoding.text(bytes) else { return nil }
            // CONTAINS on ASCII text: the check and the search in one pass.
            if op == .contains, let found = Self.asciiContains(text, needle, caseInsensitive) { return found }
            guard Self.comparableAsBytes(text, latin1: !diacriticInsensitive) else { return nil }
            return Self.match(op, text, needle, caseInsensitive)
        }
    }

    /// Decides for `slots` of a chunk on the attribute's column (which must be of ``position``):
    /// the slots it holds for, and those it leaves to the general evaluation. The same answers as
    /// ``evaluate(value:)`` on each slot's value; a `CONTAINS` on ASCII text searches the whole
    /// column at once (``columnContains(_:_:_:_:)``).
    func evaluate(_ column: ChunkColumn, _ slots: SlotMask) -> (holds: SlotMask, undecided: SlotMask) {
        if case .text(_, .contains, let needle, let caseInsensitive, let diacriticInsensitive) = self {
            // Text compared byte by byte as ``evaluate(value:)`` compares it: ASCII, and Latin-1
            // letters unless `[d]` folds them.
            let searched = slots & (diacriticInsensitive ? column.asciiTexts : column.latin1Texts)
            let found = Self.columnContains(column, searched, needle, caseInsensitive)
            // Null never contains anything; what is neither null nor ASCII text is left over.
            return (found, slots & ~searched & ~column.nulls)
        }
        switch self {
        case .integer(_, let op, let constant):
            if let values = column.integerValues { return Self.decide(op, constant, values, column.integers, column, slots) }
        case .double(_, let op, let constant, let isDate):
            if let values = column.doubleValues { return Self.decide(op, constant, values, isDate ? column.dates : column.doubles, column, slots) }
        case .boolean(_, let op, let constant):
            let same = constant ? column.trues : column.falses, other = constant ? column.falses : column.trues
            let holds = op == .equal ? same : other | column.nulls  // nil != a constant
            return (slots & holds, slots & ~column.trues & ~column.falses & ~column.nulls)
        case .text:
            break
        }
        var holds = SlotMask.none, undecided = SlotMask.none
        slots.forEach { slot in
            switch evaluate(value: column.value(slot)) {
            case true?: holds.insert(slot)
            case false?: break
            case nil: undecided.insert(slot)
            }
        }
        return (holds, undecided)
    }

    /// An ordering comparison decided for every slot of a column's decoded `values` at once (a
    /// loop the compiler can vectorize), kept for the slots of `decoded` (values of the kind
    /// compared); null slots hold as ``ComparisonRules/holdsForNil(_:)`` says; the rest is left.
    private static func decide<T: Comparable>(
        _ op: PredicateOperator, _ constant: T, _ values: UnsafeMutablePointer<T>, _ decoded: SlotMask, _ column: ChunkColumn, _ slots: SlotMask
    ) -> (holds: SlotMask, undecided: SlotMask) {
        let compared: SlotMask
        switch op {
        case .equal: compared = everySlot(values) { $0 == constant }
        case .notEqual: compared = everySlot(values) { $0 != constant }
        case .less: compared = everySlot(values) { $0 < constant }
        case .lessOrEqual: compared = everySlot(values) { $0 <= constant }
        case .greater: compared = everySlot(values) { $0 > constant }
        case .greaterOrEqual: compared = everySlot(values) { $0 >= constant }
        default: return (.none, slots)
        }
        let nulls = ComparisonRules.holdsForNil(op) ? column.nulls : .none
        return (slots & ((compared & decoded) | nulls), slots & ~decoded & ~column.nulls)
    }

    /// The slots (of a chunk's 256) whose value passes `test`, without a branch per slot.
    @inline(__always)
    private static func everySlot<T>(_ values: UnsafeMutablePointer<T>, _ test: (T) -> Bool) -> SlotMask {
        var mask = SlotMask.none
        for word in 0..<4 {
            var bits: UInt64 = 0
            for bit in 0..<64 { bits |= (test(values[word << 6 | bit]) ? 1 : 0) << UInt64(bit) }
            mask.words[word] = bits
        }
        return mask
    }

    /// The slots of `slots` (text values comparable as bytes) whose text contains `needle` (lowercase when
    /// `fold`): the column's bytes are searched for the needle's first two bytes (either case) at
    /// once, and each place found is checked against the value it falls in (its text, not its
    /// encoding's header, nor the next value).
    private static func columnContains(_ column: ChunkColumn, _ slots: SlotMask, _ needle: UnsafeBufferPointer<UInt8>, _ fold: Bool) -> SlotMask {
        guard !slots.isEmpty else { return .none }
        guard let head = needle.first else { return slots }
        guard let base = column.bytes.baseAddress else { return .none }
        let bytes = base.assumingMemoryBound(to: UInt8.self)
        let count = column.count
        func upper(_ byte: UInt8) -> UInt8 { fold && byte >= 0x61 && byte <= 0x7A ? byte - 0x20 : byte }
        let headUpper = upper(head)
        let second = needle.count > 1 ? needle[1] : 0, secondUpper = upper(second)
        let all = UnsafeRawBufferPointer(start: base, count: count)
        var found = SlotMask.none
        var offset = 0, slot = 0
        while offset < count {
            offset =
                needle.count > 1
                ? cairn_find_byte_pair(bytes, count, offset, head, headUpper, second, secondUpper)
                : cairn_find_either_byte(bytes, count, offset, head, headUpper)
            guard offset < count else { break }
            // Most places found are not the needle: checked on the bytes before anything else.
            guard offset + needle.count <= count, equalAt(all, offset, needle, fold) else {
                offset += 1
                continue
            }
            slot = column.slot(holding: offset, from: slot)
            let end = column.end(slot)
            guard slots.contains(slot), let text = ValueEncoding.text(column.value(slot)), let textBase = text.baseAddress else {
                offset = end  // not searched: on to the next value
                continue
            }
            if offset >= textBase - UnsafeRawPointer(base), offset + needle.count <= end {
                found.insert(slot)
                offset = end
            } else {
                offset += 1
            }
        }
        return found
    }

    /// Whether `text` is ASCII only.
    @inline(__always)
    static func isASCII(_ text: UnsafeRawBufferPointer) -> Bool { comparableAsBytes(text, latin1: false) }

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
