import CairnLog

/// Human-readable sizes and rates for the command line.
enum Formatting {
    /// `1536` → `1.5 KiB`.
    static func bytes(_ count: UInt64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(count) B" : "\(fixed(value, 1)) \(units[unit])"
    }

    /// A number with `digits` decimals.
    static func fixed(_ value: Double, _ digits: Int) -> String {
        guard value.isFinite else { return "\(value)" }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        var text = String(rounded)
        if let dot = text.firstIndex(of: ".") {
            let decimals = text.distance(from: text.index(after: dot), to: text.endIndex)
            if decimals < digits { text += String(repeating: "0", count: digits - decimals) }
        } else if digits > 0 {
            text += "." + String(repeating: "0", count: digits)
        }
        return text
    }

    /// Pads `text` on the left to `width` characters.
    static func right(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }

    /// Pads `text` on the right to `width` characters.
    static func left(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }

    /// `1536` → `1.5 KiB`.
    static func bytes(_ count: Int) -> String { bytes(UInt64(max(0, count))) }

    /// A duration in seconds with three decimals: `1.234 s`.
    static func duration(_ duration: Duration) -> String {
        "\(fixed(duration.inSeconds, 3)) s"
    }
}

extension LogInspection.Base {
    /// The base's status as `stats` and `verify --json` give it: `ok`, or `damaged: …`.
    var statusText: String { damage.map { "damaged: \($0)" } ?? "ok" }
}
