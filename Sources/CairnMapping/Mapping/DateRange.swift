import Foundation

/// The dates JSON carries, one range for every reader and the exporter: instants from
/// 0001-01-01T00:00:00Z up to 10000-01-01T00:00:00Z (not included), years 1 to 9999. ISO 8601,
/// patterns and epoch numbers refuse a date outside it, and export refuses to write one, so
/// that whatever an import takes, its export imports back.
enum DateRange {
    /// Seconds since 1970 of the first instant of year 1 and of year 10000.
    static let seconds: Range<Double> = -62_135_596_800..<253_402_300_800
    /// The range in words, for messages.
    static let description = "years 1 to 9999"

    /// Whether an instant (seconds since 1970) lies in the range in UTC, rounded to the
    /// millisecond as export writes ISO 8601 and milliseconds (`9999-12-31T23:59:59.9996Z` would
    /// be written as year 10000), and at `offset` (seconds east of UTC: where a pattern without a
    /// zone writes it).
    static func contains(secondsSince1970 value: Double, offset: Int = 0) -> Bool {
        seconds.contains(value) && seconds.contains((value * 1000).rounded() / 1000) && seconds.contains(value + Double(offset))
    }

    /// The instant of a civil date and time at `offset` (seconds east of UTC), or nil when a
    /// field is out of its range (month 1 to 12, the day within its month, hour below 24,
    /// minute and second below 60, year from 1) or the instant outside the range in UTC or at
    /// `defaultOffset` (``contains(secondsSince1970:offset:)``): what every date pattern reads.
    static func date(
        year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, nanoseconds: Int, offset: Int, defaultOffset: Int
    ) -> Date? {
        // An offset beyond the range's span leaves every instant out of it (and would overflow
        // the sums below).
        guard offset.magnitude < 1 << 40, defaultOffset.magnitude < 1 << 40 else { return nil }
        guard year >= 1, (1...12).contains(month), day >= 1, day <= ISO8601DateParser.daysIn(month: month, year: year), hour < 24, minute < 60,
            second < 60
        else { return nil }
        let days = ISO8601DateParser.daysSince1970(year: year, month: month, day: day)
        let whole = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        guard nanoseconds == 0 else {
            let seconds = Double(whole) + Double(nanoseconds) / 1e9
            return contains(secondsSince1970: seconds, offset: defaultOffset) ? Date(timeIntervalSince1970: seconds) : nil
        }
        // Whole seconds: the same test on integers (exact as doubles), with nothing to round.
        let range = Int(seconds.lowerBound)..<Int(seconds.upperBound)
        guard range.contains(whole), range.contains(whole + defaultOffset) else { return nil }
        return Date(timeIntervalSince1970: Double(whole))
    }
}
