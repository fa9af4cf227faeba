import Foundation

/// Reads an ISO 8601 / RFC 3339 date and time from bytes, by hand: Foundation's formatters cost
/// 1–140 µs a date on Linux, and an import reads one per record and field.
///
/// Accepted: `YYYY-MM-DD`, then optionally `T` (or `t`, or a space) and `hh:mm`, `:ss`, a
/// fraction of any length after `.` or `,`, and a zone: `Z`, `z`, `±hh:mm`, `±hhmm` or `±hh`. A
/// date without a zone is UTC (or the `defaultOffset` given). Every field is range-checked
/// (February 29 only in leap years; no second 60), and the year written and the instant in UTC
/// must both lie in years 1 to 9999, the dates an export writes back (`0000-…` is refused);
/// anything else gives nil.
public enum ISO8601DateParser {
    /// The date `text` writes, or nil.
    public static func date(_ text: String, defaultOffset: Int = 0) -> Date? {
        var text = text
        return text.withUTF8 { date(UnsafeRawBufferPointer($0), defaultOffset: defaultOffset) }
    }

    /// The date the bytes write, or nil. `defaultOffset` (seconds east of UTC) applies when the
    /// text names no zone.
    public static func date(_ bytes: UnsafeRawBufferPointer, defaultOffset: Int = 0) -> Date? {
        var reader = Reader(bytes: bytes)
        guard let year = reader.digits(4), reader.take(UInt8(ascii: "-")), let month = reader.digits(2),
            reader.take(UInt8(ascii: "-")), let day = reader.digits(2),
            year >= 1, (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year)
        else { return nil }
        var seconds = Double(daysSince1970(year: year, month: month, day: day)) * 86_400
        if reader.atEnd { return inRange(seconds - Double(defaultOffset)) }
        guard reader.take(UInt8(ascii: "T")) || reader.take(UInt8(ascii: "t")) || reader.take(UInt8(ascii: " ")),
            let hour = reader.digits(2), reader.take(UInt8(ascii: ":")), let minute = reader.digits(2),
            hour < 24, minute < 60
        else { return nil }
        seconds += Double(hour * 3600 + minute * 60)
        if reader.take(UInt8(ascii: ":")) {
            guard let second = reader.digits(2), second < 60 else { return nil }
            seconds += Double(second)
            if reader.take(UInt8(ascii: ".")) || reader.take(UInt8(ascii: ",")) {
                // The fraction, to the nanosecond (digits beyond it are read and dropped).
                var nanoseconds = 0
                var scale = 100_000_000
                var count = 0
                while let digit = reader.digit() {
                    nanoseconds += digit * scale
                    scale /= 10
                    count += 1
                }
                guard count > 0 else { return nil }
                seconds += Double(nanoseconds) / 1e9
            }
        }
        var offset = defaultOffset
        if reader.take(UInt8(ascii: "Z")) || reader.take(UInt8(ascii: "z")) {
            offset = 0
        } else if let sign = reader.sign() {
            guard let hours = reader.digits(2), hours < 24 else { return nil }
            var minutes = 0
            if reader.take(UInt8(ascii: ":")) {
                guard let value = reader.digits(2) else { return nil }
                minutes = value
            } else if let value = reader.digits(2) {
                minutes = value
            }
            guard minutes < 60 else { return nil }
            offset = sign * (hours * 3600 + minutes * 60)
        }
        guard reader.atEnd else { return nil }
        return inRange(seconds - Double(offset))
    }

    /// The date `seconds` after 1970 when it lies in years 1 to 9999 (``DateRange``), else nil.
    private static func inRange(_ seconds: Double) -> Date? {
        DateRange.contains(secondsSince1970: seconds) ? Date(timeIntervalSince1970: seconds) : nil
    }

    /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (Howard Hinnant's
    /// `days_from_civil`).
    static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Reads the text byte by byte.
    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        var atEnd: Bool { index == bytes.count }

        mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        mutating func digit() -> Int? {
            guard index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) else { return nil }
            index += 1
            return Int(bytes[index - 1] - UInt8(ascii: "0"))
        }

        mutating func digits(_ count: Int) -> Int? {
            var value = 0
            for _ in 0..<count {
                guard let digit = digit() else { return nil }
                value = value * 10 + digit
            }
            return value
        }

        mutating func sign() -> Int? {
            if take(UInt8(ascii: "+")) { return 1 }
            if take(UInt8(ascii: "-")) { return -1 }
            return nil
        }
    }
}
