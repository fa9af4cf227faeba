/// The calendar fields of an instant (proleptic Gregorian, at a given offset from UTC), for
/// writing the benchmarks' dates in each convention by hand.
struct CivilTime {
    var year: Int, month: Int, day: Int
    var hour: Int, minute: Int, second: Int
    /// 0 for Monday … 6 for Sunday.
    var weekday: Int

    /// The fields of `seconds` since 1970-01-01T00:00:00Z, seen at `offset` seconds east of UTC.
    init(seconds: Int, offset: Int = 0) {
        let local = seconds + offset
        let days = local >= 0 ? local / 86_400 : -((-local + 86_399) / 86_400)
        let secondOfDay = local - days * 86_400
        hour = secondOfDay / 3600
        minute = secondOfDay % 3600 / 60
        second = secondOfDay % 60
        weekday = ((days + 3) % 7 + 7) % 7  // 1970-01-01 was a Thursday
        // Howard Hinnant's civil_from_days.
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }

    /// 1 for January 1st … 366.
    var dayOfYear: Int {
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let before = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334][month - 1]
        return before + day + (leap && month > 2 ? 1 : 0)
    }

    /// `yyyy-MM-dd`.
    var dayText: String { "\(Self.padded(year, 4))-\(Self.padded(month, 2))-\(Self.padded(day, 2))" }
    /// `HH:mm:ss`.
    var timeText: String { "\(Self.padded(hour, 2)):\(Self.padded(minute, 2)):\(Self.padded(second, 2))" }

    static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    static let dayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]

    /// `value` in decimal with leading zeros to `width` digits.
    static func padded(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    /// An offset as `+hh:mm` (`colon`) or `+hhmm`.
    static func offsetText(_ offset: Int, colon: Bool) -> String {
        let magnitude = abs(offset)
        return (offset < 0 ? "-" : "+") + padded(magnitude / 3600, 2) + (colon ? ":" : "") + padded(magnitude % 3600 / 60, 2)
    }
}
