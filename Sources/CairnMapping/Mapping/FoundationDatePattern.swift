import Cairn
import Foundation

/// A date pattern read and written by Foundation's `DateFormatter` (POSIX locale, the format's
/// offset): the fallback for the pattern letters ``DatePattern`` does not compile (`G`, `Y`,
/// `w`, `D`, `k`, `K`, zone names…, listed in docs/MAPPING.md). About 100 µs a date on Linux,
/// where a compiled pattern takes well under one.
final class FoundationDatePattern: @unchecked Sendable, Hashable {
    /// The letters of Unicode's pattern language that only this fallback reads.
    static let letters: Set<Character> = ["G", "Y", "U", "r", "Q", "q", "w", "W", "D", "F", "g", "e", "c", "b", "B", "k", "K", "A", "O", "v", "V"]

    /// The widest offset from UTC a `TimeZone` holds (±18 hours).
    static let widestOffset = 18 * 3600

    let pattern: String
    /// One formatter, used under the lock (`DateFormatter` is not safe to share across threads).
    private let formatter: DateFormatter
    /// The offset the formatter's zone is at (its zone is set only when another is asked for).
    private var offset = 0
    private let lock = NSLock()

    init(_ pattern: String) {
        self.pattern = pattern
        formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        // The proleptic Gregorian calendar, as every other date reader and writer of Cairn's
        // (not Julian dates before October 1582).
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0) ?? calendar.timeZone
        formatter.calendar = calendar
        formatter.gregorianStartDate = Date(timeIntervalSince1970: -1e13)
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.dateFormat = pattern
        formatter.isLenient = false
    }

    /// Runs `body` with the formatter at `offset` seconds east of UTC; nil beyond ±18 hours,
    /// which `TimeZone` does not hold (the mapping refuses such a format: ``widestOffset``).
    private func withFormatter<R>(at offset: Int, _ body: (DateFormatter) -> R?) -> R? {
        lock.withLock {
            if offset != self.offset {
                guard let zone = TimeZone(secondsFromGMT: offset) else { return nil }
                formatter.timeZone = zone
                self.offset = offset
            }
            return body(formatter)
        }
    }

    /// The date the text writes, a date without a zone at `offset` seconds east of UTC; nil when
    /// the formatter reads none.
    func date(_ bytes: UnsafeRawBufferPointer, offset: Int) -> Date? {
        let text = String(decoding: bytes, as: UTF8.self)
        return withFormatter(at: offset) { $0.date(from: text) }
    }

    /// The text of `date` at `offset` seconds east of UTC (ISO 8601 at an offset `TimeZone`
    /// cannot hold, which the mapping refuses beforehand).
    func string(from date: Date, offset: Int) -> String {
        withFormatter(at: offset) { $0.string(from: date) } ?? DateText.iso8601(date)
    }

    static func == (left: FoundationDatePattern, right: FoundationDatePattern) -> Bool { left.pattern == right.pattern }
    func hash(into hasher: inout Hasher) { hasher.combine(pattern) }
}
