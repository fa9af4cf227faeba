import Foundation

/// How a date is written in JSON.
public enum DateFormat: Sendable, Hashable, CustomStringConvertible {
    /// ISO 8601 / RFC 3339 text (`2024-05-01`, `2024-05-01T09:30:00Z`, with or without a
    /// fraction of a second, `Z` or an offset); a date without a zone is in `defaultOffset`
    /// (seconds east of UTC). The default. Export writes milliseconds and `Z`.
    case iso8601(defaultOffset: Int = 0)
    /// Seconds since 1970-01-01 UTC, as a number (or a string of digits). A number too large to
    /// be seconds of years 1 to 9999 is read as milliseconds, as MagicalRecord reads `UnixTime`.
    case unixSeconds
    /// Milliseconds since 1970-01-01 UTC, as a number (or a string of digits).
    case unixMilliseconds
    /// A Unicode date pattern such as `M/d/yyyy H-mm-ss` (see ``DatePattern``), read in the POSIX
    /// locale; a date without a zone field is in `offset` (seconds east of UTC; UTC by default).
    case pattern(String, offset: Int = 0)

    /// The offset (seconds east of UTC) of a date that names no zone.
    public var offset: Int {
        switch self {
        case .iso8601(let offset), .pattern(_, let offset): offset
        case .unixSeconds, .unixMilliseconds: 0
        }
    }

    /// The default: ISO 8601, UTC when the text names no zone.
    public static let standard = DateFormat.iso8601()

    /// Reads a format as mapping files and model userInfo write it: `iso8601`, `unix`
    /// (`UnixTime`, as MagicalRecord writes it), `unixMilliseconds`, or a pattern. A trailing
    /// `@±hh:mm` sets the offset of a pattern.
    public init(name: String) {
        var text = name
        var offset = 0
        if let at = text.lastIndex(of: "@"), let parsed = Self.offset(text[text.index(after: at)...]) {
            offset = parsed
            text = String(text[..<at])
        }
        switch text.lowercased() {
        case "iso8601", "iso 8601", "rfc3339": self = .iso8601(defaultOffset: offset)
        case "unixtime", "unix", "unixseconds", "epoch": self = .unixSeconds
        case "unixmilliseconds", "unixms", "epochmilliseconds": self = .unixMilliseconds
        default: self = .pattern(text, offset: offset)
        }
    }

    private static func offset(_ text: Substring) -> Int? {
        guard let sign = text.first, sign == "+" || sign == "-" else { return nil }
        let parts = text.dropFirst().split(separator: ":")
        guard (1...2).contains(parts.count), let hours = Int(parts[0]), (0..<24).contains(hours) else { return nil }
        let minutes = parts.count == 2 ? Int(parts[1]) : 0
        guard let minutes, (0..<60).contains(minutes) else { return nil }
        return (sign == "-" ? -1 : 1) * (hours * 3600 + minutes * 60)
    }

    /// The format as a mapping file writes it: `iso8601`, `unix`, `unixMilliseconds`, or the
    /// pattern, with `@+02:00` for an offset other than UTC.
    public var description: String {
        switch self {
        case .iso8601(let offset): offset == 0 ? "iso8601" : "iso8601@\(Self.offsetText(offset))"
        case .unixSeconds: "unix"
        case .unixMilliseconds: "unixMilliseconds"
        case .pattern(let pattern, let offset): offset == 0 ? pattern : "\(pattern)@\(Self.offsetText(offset))"
        }
    }

    private static func offsetText(_ offset: Int) -> String {
        let magnitude = abs(offset)
        let hours = magnitude / 3600
        let minutes = magnitude % 3600 / 60
        return (offset < 0 ? "-" : "+") + (hours < 10 ? "0" : "") + String(hours) + ":" + (minutes < 10 ? "0" : "") + String(minutes)
    }
}
