import Foundation
import Cairn

/// A Unicode date pattern (`M/d/yyyy H-mm-ss`, `dd MMM yyyy`, `yyyy-MM-dd'T'HH:mm:ssZ`) compiled
/// once and applied by hand, in the POSIX locale: Foundation's `DateFormatter` costs about 100 µs
/// a date on Linux.
///
/// Fields: `y`/`yyyy` (year), `M`/`MM` (month), `MMM`/`MMMM` (English month names), `d`/`dd`,
/// `H`/`HH` (0–23), `h`/`hh` (1–12) with `a` (AM/PM), `m`/`mm`, `s`/`ss`, `S…` (fraction),
/// `Z`/`ZZZZZ`/`X`/`XXX`/`x`/`z` (a zone: `Z`, `±hh:mm`, `±hhmm`, `GMT`/`UTC`/`UT` alone or with
/// an offset), `EEE`/`EEEE` (a day name, read and
/// ignored), `'quoted text'` and any other character as itself. A single letter reads one or more
/// digits; a doubled one exactly that many.
public struct DatePattern: Sendable, Hashable {
    enum Field: Sendable, Hashable {
        case year(Int), month(Int), day(Int), hour24(Int), hour12(Int), minute(Int), second(Int)
        case fraction(Int), amPm, zone(Int), dayName(Int), monthName(Int)
        /// Text read as itself: ``literals``' bytes in the range (a field is a plain value, so
        /// that reading a date copies no reference).
        case literal(Range<Int>)
    }

    let fields: [Field]
    /// The bytes of every literal field, one after another.
    let literals: [UInt8]
    /// The digits of the finest fraction of a second the pattern writes (0 to 9; 0: none).
    let fractionDigits: Int
    /// For a pattern with a letter this reader does not compile (``FoundationDatePattern/letters``):
    /// `DateFormatter`, which then reads and writes every date of the pattern.
    let foundation: FoundationDatePattern?
    /// Whether the pattern is compiled into a byte-level reader (not read by `DateFormatter`).
    public var isCompiled: Bool { foundation == nil }
    /// The pattern as written.
    public let pattern: String

    /// Compiles `pattern`.
    ///
    /// A pattern with a letter of the pattern language that only `DateFormatter` reads (`G`,
    /// `Y`, `w`, `D`, `k`, `K`, zone names: ``FoundationDatePattern/letters``) is read and
    /// written by `DateFormatter` instead.
    ///
    /// - Throws: ``MappingError/Code/invalidMapping`` for a letter that is no pattern letter,
    ///   a field wider than a date needs, or an unclosed quote.
    public init(_ pattern: String) throws(MappingError) {
        self.pattern = pattern
        var fields: [Field] = []
        var literals: [UInt8] = []
        var needsFoundation = false
        let characters = Array(pattern)
        var index = 0
        func literal(_ text: String) {
            literals += Array(text.utf8)
            if case .literal(let range)? = fields.last {
                fields[fields.count - 1] = .literal(range.lowerBound..<literals.count)
            } else {
                fields.append(.literal(literals.count - text.utf8.count..<literals.count))
            }
        }
        while index < characters.count {
            let character = characters[index]
            if character == "'" {
                guard let close = characters[(index + 1)...].firstIndex(of: "'") else {
                    throw MappingError(.invalidMapping, "the date pattern \"\(pattern)\" has an unclosed quote")
                }
                literal(close == index + 1 ? "'" : String(characters[(index + 1)..<close]))
                index = close + 1
                continue
            }
            var count = 1
            while index + count < characters.count && characters[index + count] == character { count += 1 }
            // Fields wider than any date needs would read numbers that overflow.
            let widest: Int? =
                switch character {
                case "y", "u": 4
                case "M", "L", "E": 4
                case "d", "H", "h", "m", "s": 2
                case "S": 9
                case "a": 1
                case "Z", "X", "x", "z": 5
                default: nil
                }
            if FoundationDatePattern.letters.contains(character) || (character == "z" && count == 4) {
                needsFoundation = true
                index += count
                continue
            }
            if let widest, count > widest {
                throw MappingError(.invalidMapping, "the date pattern \"\(pattern)\" repeats \(character) \(count) times; at most \(widest)")
            }
            let width = count == 1 ? 0 : count  // 0: one or more digits
            switch character {
            case "y", "u": fields.append(.year(count == 2 ? 2 : (count == 1 ? 0 : count)))
            case "M", "L": fields.append(count >= 3 ? .monthName(count) : .month(width))
            case "d": fields.append(.day(width))
            case "H": fields.append(.hour24(width))
            case "h": fields.append(.hour12(width))
            case "m": fields.append(.minute(width))
            case "s": fields.append(.second(width))
            case "S": fields.append(.fraction(count))
            case "a": fields.append(.amPm)
            case "Z", "X", "x", "z": fields.append(.zone(character == "Z" && count < 4 ? 4 : 5))
            case "E": fields.append(.dayName(count))
            default:
                if character.isLetter && character.isASCII {
                    throw MappingError(.invalidMapping, "the date pattern \"\(pattern)\" uses \(character), which Cairn does not read")
                }
                literal(String(repeating: character, count: count))
            }
            index += count
        }
        self.fields = fields
        self.literals = literals
        foundation = needsFoundation ? FoundationDatePattern(pattern) : nil
        fractionDigits = fields.reduce(0) { finest, field in if case .fraction(let count) = field { max(finest, min(count, 9)) } else { finest } }
    }

    /// The English name of month `number` (0: January), in lower case.
    private static func monthName(_ number: Int) -> StaticString {
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
    private static func monthNumber(_ key: UInt32) -> Int? {
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
    private static func dayNumber(_ key: UInt32) -> Int? {
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
    private static func dayName(_ number: Int) -> StaticString {
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
    private static func universalName(_ bytes: UnsafeRawBufferPointer, at index: Int) -> Int? {
        func letter(_ at: Int) -> UInt8? { at < bytes.count ? bytes[at] | 0x20 : nil }
        if letter(index) == UInt8(ascii: "g") && letter(index + 1) == UInt8(ascii: "m") && letter(index + 2) == UInt8(ascii: "t") { return 3 }
        guard letter(index) == UInt8(ascii: "u") && letter(index + 1) == UInt8(ascii: "t") else { return nil }
        return letter(index + 2) == UInt8(ascii: "c") ? 3 : 2
    }

    /// The date the bytes write, or nil. `offset` (seconds east of UTC) applies when the pattern
    /// has no zone or the text gives none. The year written, the instant in UTC and the instant
    /// at `offset` (where an export writes it) must lie in years 1 to 9999 (``DateRange``).
    public func date(_ bytes: UnsafeRawBufferPointer, offset defaultOffset: Int = 0) -> Date? {
        if let foundation {
            guard let date = foundation.date(bytes, offset: defaultOffset),
                DateRange.contains(secondsSince1970: date.timeIntervalSince1970, offset: defaultOffset)
            else { return nil }
            return date
        }
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
        // By index, not by an iterator: an iterator holds the array, which two cores reading
        // with the same pattern would count up and down by turns.
        for fieldIndex in fields.indices {
            switch fields[fieldIndex] {
            case .year(let width):
                guard let value = digits(width, maximum: 4) else { return nil }
                year = width == 2 ? (value < 70 ? 2000 + value : 1900 + value) : value
            case .month(let width):
                guard let value = digits(width, maximum: 2) else { return nil }
                month = value
            case .monthName:
                guard let value = name(Self.monthNumber, Self.monthName) else { return nil }
                month = value + 1
            case .day(let width):
                guard let value = digits(width, maximum: 2) else { return nil }
                day = value
            case .hour24(let width):
                guard let value = digits(width, maximum: 2), value < 24 else { return nil }
                hour = value
            case .hour12(let width):
                guard let value = digits(width, maximum: 2), (1...12).contains(value) else { return nil }
                hour = value % 12
                twelveHour = true
            case .minute(let width):
                guard let value = digits(width, maximum: 2), value < 60 else { return nil }
                minute = value
            case .second(let width):
                guard let value = digits(width, maximum: 2), value < 60 else { return nil }
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
                if bytes[index] | 0x20 == UInt8(ascii: "z") {
                    index += 1
                    offset = 0
                } else if let named = Self.universalName(bytes, at: index) {
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
                    guard bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") else { return nil }
                    let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
                    index += 1
                    guard let hours = digits(2), hours < 24 else { return nil }
                    if index < bytes.count && bytes[index] == UInt8(ascii: ":") { index += 1 }
                    let minutes = digits(2) ?? 0
                    guard minutes < 60 else { return nil }
                    offset = sign * (hours * 3600 + minutes * 60)
                }
            case .dayName:
                guard name(Self.dayNumber, Self.dayName) != nil else { return nil }
            case .literal(let range):
                guard index + range.count <= bytes.count else { return nil }
                for position in range where bytes[index + position - range.lowerBound] != literals[position] { return nil }
                index += range.count
            }
        }
        guard index == bytes.count, year >= 1, (1...12).contains(month), day >= 1, day <= ISO8601DateParser.daysIn(month: month, year: year) else {
            return nil
        }
        if let pm { hour = hour % 12 + (pm ? 12 : 0) } else if twelveHour { return nil }
        let days = ISO8601DateParser.daysSince1970(year: year, month: month, day: day)
        let seconds = Double(days * 86_400 + hour * 3600 + minute * 60 + second - offset) + Double(nanoseconds) / 1e9
        guard DateRange.contains(secondsSince1970: seconds, offset: defaultOffset) else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }

    /// The text of `date` in this pattern, at `offset` (seconds east of UTC), rounded to the
    /// pattern's finest fraction of a second when it has one: what export writes (which first refuses a date
    /// beyond years 1 to 9999 there). Such a date is written as ISO 8601 instead.
    public func string(from date: Date, offset: Int = 0) -> String {
        let seconds = date.timeIntervalSince1970 + Double(offset)
        guard DateRange.seconds.contains(seconds) else { return DateText.iso8601(date) }
        if let foundation { return foundation.string(from: date, offset: offset) }
        // A pattern with a fraction of a second is rounded to its finest one, as ISO 8601 export
        // rounds to the millisecond (0.123 is stored as 0.12299…); without one, the calendar
        // fields are the instant's, as `DateFormatter` writes them.
        var whole = seconds.rounded(.down)
        var scale = 1
        for _ in 0..<fractionDigits { scale *= 10 }
        var fraction = fractionDigits == 0 ? 0 : Int(((seconds - whole) * Double(scale)).rounded())
        if fraction >= scale {
            // (At the last instant of year 9999 the text stays in the range, a fraction short.)
            if DateRange.seconds.contains(whole + 1) {
                whole += 1
                fraction -= scale
            } else {
                fraction = scale - 1
            }
        }
        let nanoseconds = fraction * (1_000_000_000 / scale)
        let total = Int64(whole)
        let days = total >= 0 ? total / 86_400 : (total + 1) / 86_400 - 1
        let ofDay = Int(total - days * 86_400)
        let (year, month, day) = DateText.civil(daysSince1970: days)
        func padded(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
        }
        var out = ""
        for field in fields {
            switch field {
            case .year(let width): out += width == 2 ? padded(Int(year) % 100, 2) : padded(Int(year), max(width, 1))
            case .month(let width): out += padded(Int(month), width)
            case .monthName(let count):
                let name = Self.monthName(Int(month) - 1).description.capitalized
                out += count == 3 ? String(name.prefix(3)) : name
            case .day(let width): out += padded(Int(day), width)
            case .hour24(let width): out += padded(ofDay / 3600, width)
            case .hour12(let width): out += padded((ofDay / 3600 + 11) % 12 + 1, width)
            case .minute(let width): out += padded(ofDay / 60 % 60, width)
            case .second(let width): out += padded(ofDay % 60, width)
            case .fraction(let count): out += String(padded(min(nanoseconds, 999_999_999), 9).prefix(count))
            case .amPm: out += ofDay < 43_200 ? "AM" : "PM"
            case .zone(let style):
                if offset == 0 && style == 5 {
                    out += "Z"
                } else {
                    let magnitude = abs(offset)
                    out += (offset < 0 ? "-" : "+") + padded(magnitude / 3600, 2) + (style == 5 ? ":" : "") + padded(magnitude % 3600 / 60, 2)
                }
            case .dayName(let count):
                // 1970-01-01 was a Thursday (index 3 from Monday).
                let weekday = Int(((days % 7) + 7 + 3) % 7)
                let name = Self.dayName(weekday).description.capitalized
                out += count == 4 ? name : String(name.prefix(3))
            case .literal(let range): out += String(decoding: literals[range], as: UTF8.self)
            }
        }
        return out
    }
}
