import Foundation

/// The one form in which Cairn writes a date: ISO 8601 in UTC with milliseconds,
/// `2026-11-24T18:56:34.310Z`, in ``Value/description`` (plans, messages) and in the command
/// line's `dump`, `query` (every format) and any JSON it writes.
///
/// Written by hand: Foundation's date formatting is slow on Linux, and a dump prints a date per
/// object. The calendar is the proleptic Gregorian one (no Julian switch in 1582), as ISO 8601
/// has it. Years outside 0000–9999 take ISO 8601's expanded form: a sign and at least four
/// digits (`-0044-03-15T…`, `+10000-01-01T…`).
package enum DateText {
    /// Milliseconds between 1970-01-01 and 2001-01-01 (`Date`'s reference date).
    private static let referenceMilliseconds: Int64 = 978_307_200_000
    /// The largest distance from the reference date, in milliseconds, that the arithmetic
    /// below takes without overflow (about 290,000 years).
    private static let limit = 9.0e15

    /// `date` as ISO 8601 with milliseconds and `Z`, rounded to the nearest millisecond.
    ///
    /// A date that is not a number, infinite, or more than about 290,000 years from 2001 (only a
    /// damaged or forged store holds one) is written as its seconds since 2001-01-01 instead:
    /// `nan s since 2001-01-01T00:00:00Z`; nothing here traps.
    package static func iso8601(_ date: Date) -> String {
        guard let milliseconds = millisecondsSince1970(date) else { return "\(date.timeIntervalSinceReferenceDate) s since 2001-01-01T00:00:00Z" }
        return iso8601(millisecondsSince1970: milliseconds)
    }

    /// `date` in milliseconds since 1970-01-01, rounded to the nearest millisecond; nil for a
    /// date ``iso8601(_:)`` writes in seconds (not a number, infinite, or too far from 2001).
    package static func millisecondsSince1970(_ date: Date) -> Int64? {
        let milliseconds = (date.timeIntervalSinceReferenceDate * 1000).rounded()
        guard milliseconds.isFinite, abs(milliseconds) <= limit else { return nil }
        return Int64(milliseconds) + referenceMilliseconds
    }

    /// The text of the instant `milliseconds` after 1970-01-01T00:00:00Z (before it when
    /// negative); `milliseconds` is at most about 9 × 10¹⁵ from 0.
    package static func iso8601(millisecondsSince1970 milliseconds: Int64) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        appendISO8601(millisecondsSince1970: milliseconds, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the text ``iso8601(millisecondsSince1970:)`` makes to `bytes`, without making a
    /// String (export writes dates this way).
    package static func appendISO8601(millisecondsSince1970 milliseconds: Int64, to bytes: inout [UInt8]) {
        let time = fields(millisecondsSince1970: milliseconds)
        // Four digits for years 0–9999; a sign and at least four digits otherwise.
        if time.year < 0 { bytes.append(UInt8(ascii: "-")) } else if time.year > 9999 { bytes.append(UInt8(ascii: "+")) }
        appendDigits(time.year.magnitude, atLeast: 4, to: &bytes)
        func field(_ separator: Unicode.Scalar, _ value: Int64, _ width: Int) {
            bytes.append(UInt8(ascii: separator))
            appendDigits(value.magnitude, atLeast: width, to: &bytes)
        }
        field("-", time.month, 2)
        field("-", time.day, 2)
        field("T", time.hour, 2)
        field(":", time.minute, 2)
        field(":", time.second, 2)
        field(".", time.millisecond, 3)
        bytes.append(UInt8(ascii: "Z"))
    }

    /// The UTC calendar fields of the instant `milliseconds` after 1970-01-01T00:00:00Z (at most
    /// about 9 × 10¹⁵ from 0).
    package static func fields(
        millisecondsSince1970 milliseconds: Int64
    ) -> (year: Int64, month: Int64, day: Int64, hour: Int64, minute: Int64, second: Int64, millisecond: Int64) {
        let perDay: Int64 = 86_400_000
        let days = milliseconds >= 0 ? milliseconds / perDay : (milliseconds + 1) / perDay - 1
        let ofDay = milliseconds - days * perDay
        let (year, month, day) = civil(daysSince1970: days)
        return (year, month, day, ofDay / 3_600_000, ofDay / 60_000 % 60, ofDay / 1000 % 60, ofDay % 1000)
    }

    /// The proleptic Gregorian year, month (1–12) and day (1–31) of a day counted from
    /// 1970-01-01 (Howard Hinnant's `civil_from_days`: 400-year eras of 146,097 days).
    package static func civil(daysSince1970 days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468  // days since 0000-03-01
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097  // 0...146096
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365  // 0...399
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)  // 0...365, from March 1
        let monthFromMarch = (5 * dayOfYear + 2) / 153  // 0...11
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    /// `number` in decimal, with leading zeros up to `width` digits.
    private static func appendDigits(_ number: UInt64, atLeast width: Int, to bytes: inout [UInt8]) {
        var divisor: UInt64 = 1
        var count = 1
        while count < width || number / divisor >= 10 {
            divisor *= 10
            count += 1
        }
        var rest = number
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }
}
