import Foundation

/// A date pattern read and written by Foundation's `DateFormatter` (POSIX locale, the format's
/// offset): the fallback for the pattern letters ``DatePattern`` does not compile (`G`, `Y`,
/// `w`, `D`, `k`, `K`, zone names…, listed in docs/MAPPING.md). About 100 µs a date on Linux,
/// where a compiled pattern takes well under one.
final class FoundationDatePattern: @unchecked Sendable, Hashable {
    /// The letters of Unicode's pattern language that only this fallback reads.
    static let letters: Set<Character> = ["G", "Y", "U", "r", "Q", "q", "w", "W", "D", "F", "g", "e", "c", "b", "B", "k", "K", "A", "O", "v", "V"]

    let pattern: String
    /// One formatter, used under the lock (`DateFormatter` is not safe to share across threads).
    private let formatter: DateFormatter
    private let lock = NSLock()

    init(_ pattern: String) {
        self.pattern = pattern
        formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.dateFormat = pattern
        formatter.isLenient = false
    }

    /// The date the text writes, a date without a zone at `offset` seconds east of UTC; nil when
    /// the formatter reads none.
    func date(_ bytes: UnsafeRawBufferPointer, offset: Int) -> Date? {
        let text = String(decoding: bytes, as: UTF8.self)
        return lock.withLock {
            formatter.timeZone = TimeZone(secondsFromGMT: offset)
            return formatter.date(from: text)
        }
    }

    /// The text of `date` at `offset` seconds east of UTC.
    func string(from date: Date, offset: Int) -> String {
        lock.withLock {
            formatter.timeZone = TimeZone(secondsFromGMT: offset)
            return formatter.string(from: date)
        }
    }

    static func == (left: FoundationDatePattern, right: FoundationDatePattern) -> Bool { left.pattern == right.pattern }
    func hash(into hasher: inout Hasher) { hasher.combine(pattern) }
}
