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
    /// One field of a pattern: a width (0: one or more digits) or a letter count in a byte.
    enum Field: Sendable, Hashable, BitwiseCopyable {
        case year(UInt8), month(UInt8), day(UInt8), hour24(UInt8), hour12(UInt8), minute(UInt8), second(UInt8)
        case fraction(UInt8), amPm, zone(UInt8), dayName(UInt8), monthName(UInt8)
        /// Text read as itself: `count` of the literal bytes from `start`.
        case literal(start: UInt16, count: UInt16)
    }

    /// The year a two-digit year (`yy`) names: 1970 to 2069.
    static func year(twoDigits value: Int) -> Int { value < 70 ? 2000 + value : 1900 + value }

    /// The compiled fields (none when `DateFormatter` reads the pattern).
    let fields: DateFieldArrays
    /// The same fields inline (the flat import's reader), when they fit (``DateFields``).
    let inline: DateFields?
    /// The fields' places, when every field is digits of one width (the flat import's reader
    /// of such a pattern: ``FixedDateLayout``).
    let fixed: FixedDateLayout?
    /// The digits of the finest fraction of a second the pattern writes (0 to 9; 0: none).
    let fractionDigits: Int
    /// For a pattern with a letter this reader does not compile (``FoundationDatePattern/letters``):
    /// `DateFormatter`, which then reads and writes every date of the pattern.
    let foundation: FoundationDatePattern?
    /// Whether the pattern is compiled into a byte-level reader (not read by `DateFormatter`).
    public var isCompiled: Bool { foundation == nil }
    /// The pattern as written.
    public let pattern: String

    /// Whether two patterns are written alike (each compiles to one reader).
    /// (By its UTF-8 bytes: canonically equivalent text of other bytes reads other bytes.)
    public static func == (left: DatePattern, right: DatePattern) -> Bool { left.pattern.utf8.elementsEqual(right.pattern.utf8) }

    /// Hashes the pattern's UTF-8 bytes.
    public func hash(into hasher: inout Hasher) {
        for byte in pattern.utf8 { hasher.combine(byte) }
    }

    /// Compiles `pattern`.
    ///
    /// A pattern with a letter of the pattern language that only `DateFormatter` reads (`G`,
    /// `Y`, `w`, `D`, `k`, `K`, zone names) is read and
    /// written by `DateFormatter` instead.
    ///
    /// - Throws: ``MappingError/Code/invalidMapping`` for a letter that is no pattern letter,
    ///   a field wider than a date needs, or an unclosed quote.
    public init(_ pattern: String) throws(MappingError) {
        self.pattern = pattern
        var fields = DateFieldArrays()
        var needsFoundation = false
        var tooLong = false
        let characters = Array(pattern)
        var index = 0
        func append(_ field: Field) { fields.append(field) }
        func literal(_ text: String) {
            if !fields.append(literal: Array(text.utf8)) { tooLong = true }
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
            // (`widest` bounds the count of every letter that makes a field: it fits a byte.)
            let (count8, width8) = (UInt8(truncatingIfNeeded: count), UInt8(truncatingIfNeeded: width))
            switch character {
            case "y", "u": append(.year(count == 2 ? 2 : (count == 1 ? 0 : count8)))
            case "M", "L": append(count >= 3 ? .monthName(count8) : .month(width8))
            case "d": append(.day(width8))
            case "H": append(.hour24(width8))
            case "h": append(.hour12(width8))
            case "m": append(.minute(width8))
            case "s": append(.second(width8))
            case "S": append(.fraction(count8))
            case "a": append(.amPm)
            case "Z", "X", "x", "z": append(.zone(character == "Z" && count < 4 ? 4 : 5))
            case "E": append(.dayName(count8))
            default:
                if character.isLetter && character.isASCII {
                    throw MappingError(.invalidMapping, "the date pattern \"\(pattern)\" uses \(character), which Cairn does not read")
                }
                literal(String(repeating: character, count: count))
            }
            index += count
        }
        guard !tooLong else {
            throw MappingError(.invalidMapping, "the date pattern \"\(pattern.prefix(40))…\" holds more than 65,535 bytes of literal text")
        }
        self.fields = needsFoundation ? DateFieldArrays() : fields
        inline = needsFoundation ? nil : DateFields(fields)
        fixed = needsFoundation ? nil : FixedDateLayout(fields)
        foundation = needsFoundation ? FoundationDatePattern(pattern) : nil
        var finest = 0
        for index in 0..<fields.count {
            if case .fraction(let count) = fields[index] { finest = max(finest, min(Int(count), 9)) }
        }
        fractionDigits = finest
    }

    /// The date the bytes write, or nil. `offset` (seconds east of UTC) applies when the pattern
    /// has no zone or the text gives none. The year written, the instant in UTC and the instant
    /// at `offset` (where an export writes it) must lie in years 1 to 9999.
    public func date(_ bytes: UnsafeRawBufferPointer, offset defaultOffset: Int = 0) -> Date? {
        if let foundation {
            guard let date = foundation.date(bytes, offset: defaultOffset),
                DateRange.contains(secondsSince1970: date.timeIntervalSince1970, offset: defaultOffset)
            else { return nil }
            return date
        }
        return fields.date(bytes, offset: defaultOffset)
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
        for index in 0..<fields.count {
            switch fields[index] {
            case .year(let width): out += width == 2 ? padded(Int(year) % 100, 2) : padded(Int(year), max(Int(width), 1))
            case .month(let width): out += padded(Int(month), Int(width))
            case .monthName(let count):
                let name = DateNames.monthName(Int(month) - 1).description.capitalized
                out += count == 3 ? String(name.prefix(3)) : name
            case .day(let width): out += padded(Int(day), Int(width))
            case .hour24(let width): out += padded(ofDay / 3600, Int(width))
            case .hour12(let width): out += padded((ofDay / 3600 + 11) % 12 + 1, Int(width))
            case .minute(let width): out += padded(ofDay / 60 % 60, Int(width))
            case .second(let width): out += padded(ofDay % 60, Int(width))
            case .fraction(let count): out += String(padded(min(nanoseconds, 999_999_999), 9).prefix(Int(count)))
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
                let name = DateNames.dayName(weekday).description.capitalized
                out += count == 4 ? name : String(name.prefix(3))
            case .literal(let start, let count):
                out += String(decoding: (Int(start)..<Int(start) + Int(count)).map(fields.literal), as: UTF8.self)
            }
        }
        return out
    }
}
