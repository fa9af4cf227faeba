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
}
