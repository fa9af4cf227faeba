import Cairn
import CairnSupport
import Foundation

/// The fields of a compiled date pattern and the bytes of its literal text: what reads a date
/// (``date(_:offset:)``). Two forms: ``DateFields``, inline, for every pattern of common size,
/// and ``DateFieldArrays`` for any pattern.
protocol DateFieldList {
    /// The number of fields.
    var count: Int { get }
    /// The number of literal bytes.
    var literalCount: Int { get }
    /// Field `index` (below ``count``).
    subscript(index: Int) -> DatePattern.Field { get }
    /// Literal byte `index` (below ``literalCount``).
    func literal(_ index: Int) -> UInt8
}

/// A compiled date pattern's fields and literal bytes held inline: a plain value of fixed size
/// (about 200 bytes), so that reading a date with it touches no reference, and a copy (as every
/// value a flat record reads makes of its reader) bumps no count that two cores would bounce
/// between them. A pattern of more than ``capacity`` fields or ``literalCapacity`` literal bytes
/// has none, and is read through its ``DateFieldArrays`` (by ``ValueReader``, off the fast path).
struct DateFields: DateFieldList, BitwiseCopyable {
    /// The most fields it holds.
    static let capacity = 24
    /// The most bytes of literal text it holds.
    static let literalCapacity = 40

    private var fields = InlineArray<24, DatePattern.Field>(repeating: .amPm)
    private var literals = InlineArray<40, UInt8>(repeating: 0)
    private(set) var count = 0
    private(set) var literalCount = 0

    /// The fields of `list` inline, or nil when they do not fit.
    init?(_ list: some DateFieldList) {
        guard list.count <= Self.capacity, list.literalCount <= Self.literalCapacity else { return nil }
        for index in 0..<list.count { fields[index] = list[index] }
        for index in 0..<list.literalCount { literals[index] = list.literal(index) }
        (count, literalCount) = (list.count, list.literalCount)
        checkAfterMutation { () throws(InvariantViolation) in try checkInvariants() }
    }

    subscript(index: Int) -> DatePattern.Field { fields[index] }

    func literal(_ index: Int) -> UInt8 { literals[index] }
}

/// A compiled date pattern's fields and literal bytes in arrays, for a pattern of any size:
/// what ``DatePattern`` compiles and writes dates with.
struct DateFieldArrays: DateFieldList, Sendable {
    /// The fields (internal so that a test can damage them; only the methods change them).
    var fields: [DatePattern.Field] = []
    /// The literal bytes.
    var literals: [UInt8] = []

    var count: Int { fields.count }
    var literalCount: Int { literals.count }

    subscript(index: Int) -> DatePattern.Field { fields[index] }

    func literal(_ index: Int) -> UInt8 { literals[index] }

    /// Appends a field.
    mutating func append(_ field: DatePattern.Field) {
        fields.append(field)
        checkAfterMutation { () throws(InvariantViolation) in try checkInvariants() }
    }

    /// Appends literal text, to the last field when it is literal text too; false, appending
    /// nothing, beyond 65,535 bytes of literal text in all.
    mutating func append(literal text: [UInt8]) -> Bool {
        guard literals.count + text.count <= Int(UInt16.max) else { return false }
        var start = literals.count
        if case .literal(let lastStart, _)? = fields.last {
            start = Int(lastStart)
            fields.removeLast()
        }
        literals += text
        fields.append(.literal(start: UInt16(truncatingIfNeeded: start), count: UInt16(truncatingIfNeeded: literals.count - start)))
        checkAfterMutation { () throws(InvariantViolation) in try checkInvariants() }
        return true
    }
}

extension DateFieldList {
    /// The rules the fields keep: each literal field's bytes among those written and after the
    /// previous one's, and no two literal fields side by side (text appended after literal text
    /// joins it).
    func checkInvariants() throws(InvariantViolation) {
        var literalEnd = 0
        var previousWasLiteral = false
        for index in 0..<count {
            guard case .literal(let start, let length) = self[index] else {
                previousWasLiteral = false
                continue
            }
            try require(!previousWasLiteral, "DateFieldList", "literal fields \(index - 1) and \(index) side by side")
            try require(Int(start) == literalEnd && length > 0, "DateFieldList", "literal field \(index) at \(start) (\(length) bytes), not \(literalEnd)")
            literalEnd = Int(start) + Int(length)
            previousWasLiteral = true
        }
        try require(literalEnd == literalCount, "DateFieldList", "literal fields end at \(literalEnd) of \(literalCount) bytes")
    }

    /// The date the bytes write, or nil. `offset` (seconds east of UTC) applies when the pattern
    /// has no zone or the text gives none. The year written, the instant in UTC and the instant
    /// at `offset` (where an export writes it) must lie in years 1 to 9999 (``DateRange``).
    func date(_ bytes: UnsafeRawBufferPointer, offset defaultOffset: Int) -> Date? {
        var index = 0
        var year = 1970
        var month = 1
        var day = 1
        var hour = 0
        var minute = 0
        var second = 0
        var nanoseconds = 0
        var pm: Bool?
        var twelveHour = false
        var offset = defaultOffset
        func digits(_ width: Int, maximum: Int = 9) -> Int? {
            var value = 0
            var count = 0
            while index < bytes.count, count < (width == 0 ? maximum : width), (48...57).contains(bytes[index]) {
                value = value * 10 + Int(bytes[index] - 48)
                index += 1
                count += 1
            }
            return count == 0 || (width != 0 && count != width) ? nil : value
        }
        // The number of the name whose first three letters the text has here, in either case
        // (`number` of their lower-case bytes, the first in the lowest bits); its whole name
        // (`full`) is read when the text goes on with the rest of it.
        func name(_ number: (UInt32) -> Int?, _ full: (Int) -> StaticString) -> Int? {
            guard index + 3 <= bytes.count else { return nil }
            // `| 0x20` makes an ASCII capital lower case and no other byte a letter.
            let key = UInt32(bytes[index] | 0x20) | UInt32(bytes[index + 1] | 0x20) << 8 | UInt32(bytes[index + 2] | 0x20) << 16
            guard let found = number(key) else { return nil }
            let whole = full(found)
            var length = 3
            while length < whole.utf8CodeUnitCount, index + length < bytes.count, bytes[index + length] | 0x20 == whole.utf8Start[length] {
                length += 1
            }
            index += length == whole.utf8CodeUnitCount ? length : 3
            return found
        }
        for fieldIndex in 0..<count {
            switch self[fieldIndex] {
            case .year(let width):
                let width = Int(width)
                guard let value = digits(width, maximum: 4) else { return nil }
                year = width == 2 ? DatePattern.year(twoDigits: value) : value
            case .month(let width):
                guard let value = digits(Int(width), maximum: 2) else { return nil }
                month = value
            case .monthName:
                guard let value = name(DateNames.monthNumber, DateNames.monthName) else { return nil }
                month = value + 1
            case .day(let width):
                guard let value = digits(Int(width), maximum: 2) else { return nil }
                day = value
            case .hour24(let width):
                guard let value = digits(Int(width), maximum: 2), value < 24 else { return nil }
                hour = value
            case .hour12(let width):
                guard let value = digits(Int(width), maximum: 2), (1...12).contains(value) else { return nil }
                hour = value % 12
                twelveHour = true
            case .minute(let width):
                guard let value = digits(Int(width), maximum: 2), value < 60 else { return nil }
                minute = value
            case .second(let width):
                guard let value = digits(Int(width), maximum: 2), value < 60 else { return nil }
                second = value
            case .fraction:
                var scale = 100_000_000
                var count = 0
                while index < bytes.count, (48...57).contains(bytes[index]) {
                    nanoseconds += Int(bytes[index] - 48) * scale
                    scale /= 10
                    index += 1
                    count += 1
                }
                guard count > 0 else { return nil }
            case .amPm:
                guard index + 2 <= bytes.count, bytes[index + 1] | 0x20 == UInt8(ascii: "m") else { return nil }
                switch bytes[index] | 0x20 {
                case UInt8(ascii: "a"): pm = false
                case UInt8(ascii: "p"): pm = true
                default: return nil
                }
                index += 2
            case .zone:
                guard index < bytes.count else { return nil }
                if bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                    // `±hh:mm`, `±hhmm` or `±hh`: the common form first.
                    let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
                    index += 1
                    guard let hours = digits(2), hours < 24 else { return nil }
                    // Two digits of minutes, or none (`±hh`); after a colon, two.
                    var minutes = 0
                    let colon = index < bytes.count && bytes[index] == UInt8(ascii: ":")
                    if colon { index += 1 }
                    if colon || (index < bytes.count && (48...57).contains(bytes[index])) {
                        guard let value = digits(2), value < 60 else { return nil }
                        minutes = value
                    }
                    offset = sign * (hours * 3600 + minutes * 60)
                } else if bytes[index] | 0x20 == UInt8(ascii: "z") {
                    index += 1
                    offset = 0
                } else if let named = DateNames.universalName(bytes, at: index) {
                    // `GMT`, `UTC` or `UT`, maybe followed by an offset (`GMT+02:00`).
                    index += named
                    offset = 0
                    if index < bytes.count && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) {
                        let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
                        index += 1
                        guard let hours = digits(0, maximum: 2), hours < 24 else { return nil }
                        var minutes = 0
                        if index < bytes.count && bytes[index] == UInt8(ascii: ":") {
                            index += 1
                            guard let value = digits(2), value < 60 else { return nil }
                            minutes = value
                        }
                        offset = sign * (hours * 3600 + minutes * 60)
                    }
                } else {
                    return nil
                }
            case .dayName:
                guard name(DateNames.dayNumber, DateNames.dayName) != nil else { return nil }
            case .literal(let start, let length):
                let (start, length) = (Int(start), Int(length))
                guard index + length <= bytes.count else { return nil }
                for position in 0..<length where bytes[index + position] != literal(start + position) { return nil }
                index += length
            }
        }
        guard index == bytes.count else { return nil }
        if let pm { hour = hour % 12 + (pm ? 12 : 0) } else if twelveHour { return nil }
        return DateRange.date(
            year: year, month: month, day: day, hour: hour, minute: minute, second: second, nanoseconds: nanoseconds, offset: offset,
            defaultOffset: defaultOffset)
    }
}

/// The English month and day names date patterns read and write, and the names of UTC.
enum DateNames {
    /// The English name of month `number` (0: January), in lower case.
    static func monthName(_ number: Int) -> StaticString {
        switch number {
        case 0: "january"
        case 1: "february"
        case 2: "march"
        case 3: "april"
        case 4: "may"
        case 5: "june"
        case 6: "july"
        case 7: "august"
        case 8: "september"
        case 9: "october"
        case 10: "november"
        default: "december"
        }
    }

    /// The month (0: January) whose English name begins with the three lower-case letters of
    /// `key` (the first in the lowest byte), or nil.
    static func monthNumber(_ key: UInt32) -> Int? {
        switch key {
        case 0x6E_616A: 0  // jan
        case 0x62_6566: 1  // feb
        case 0x72_616D: 2  // mar
        case 0x72_7061: 3  // apr
        case 0x79_616D: 4  // may
        case 0x6E_756A: 5  // jun
        case 0x6C_756A: 6  // jul
        case 0x67_7561: 7  // aug
        case 0x70_6573: 8  // sep
        case 0x74_636F: 9  // oct
        case 0x76_6F6E: 10  // nov
        case 0x63_6564: 11  // dec
        default: nil
        }
    }

    /// The weekday (0: Monday) whose English name begins with the three lower-case letters of
    /// `key`, or nil.
    static func dayNumber(_ key: UInt32) -> Int? {
        switch key {
        case 0x6E_6F6D: 0  // mon
        case 0x65_7574: 1  // tue
        case 0x64_6577: 2  // wed
        case 0x75_6874: 3  // thu
        case 0x69_7266: 4  // fri
        case 0x74_6173: 5  // sat
        case 0x6E_7573: 6  // sun
        default: nil
        }
    }

    /// The English name of weekday `number` (0: Monday), in lower case.
    static func dayName(_ number: Int) -> StaticString {
        switch number {
        case 0: "monday"
        case 1: "tuesday"
        case 2: "wednesday"
        case 3: "thursday"
        case 4: "friday"
        case 5: "saturday"
        default: "sunday"
        }
    }

    /// The length of `GMT`, `UTC` or `UT` at `index` (any case), or nil.
    static func universalName(_ bytes: UnsafeRawBufferPointer, at index: Int) -> Int? {
        func letter(_ at: Int) -> UInt8? { at < bytes.count ? bytes[at] | 0x20 : nil }
        if letter(index) == UInt8(ascii: "g") && letter(index + 1) == UInt8(ascii: "m") && letter(index + 2) == UInt8(ascii: "t") { return 3 }
        guard letter(index) == UInt8(ascii: "u") && letter(index + 1) == UInt8(ascii: "t") else { return nil }
        return letter(index + 2) == UInt8(ascii: "c") ? 3 : 2
    }
}
