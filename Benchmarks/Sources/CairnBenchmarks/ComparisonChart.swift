import Foundation

/// One operation measured for Cairn and for a peer in the same run.
struct Comparison: Sendable, Equatable {
    /// The suite that measured it: a group of the chart.
    var suite: String
    /// The operation, as the suite's row names it.
    var operation: String
    /// The peer: GRDB, the sqlite3 shell, DuckDB.
    var peer: String
    /// How many times faster Cairn was: its rate over the peer's (or the peer's time over
    /// Cairn's). Above 1, Cairn is faster.
    var ratio: Double
}

/// The ratios of `comparisons` as an SVG bar chart: one bar per operation, grouped by suite, on
/// a logarithmic scale from a line at 1× (right: Cairn faster, left: the peer faster), coloured
/// by peer. Comparisons whose ratio is not a positive finite number are left out.
func comparisonChart(_ comparisons: [Comparison], title: String, subtitle: String) -> String {
    let shown = comparisons.filter { $0.ratio.isFinite && $0.ratio > 0 }
    let rowHeight = 24.0, groupHeading = 26.0, top = 86.0, plotWidth = 520.0
    let labels = shown.map { "\($0.operation), vs \($0.peer)" }
    let labelWidth = min(420, Double(labels.map(\.count).max() ?? 10) * 6.3 + 24)
    let left = labelWidth + 12, right = left + plotWidth, width = right + 60
    // Whole decades around the ratios, from 0.1× at least to 10× at least.
    let low = min(floor(log10(shown.map(\.ratio).min() ?? 1)), -1)
    let high = max(ceil(log10(shown.map(\.ratio).max() ?? 1)), 1)
    func x(_ ratio: Double) -> Double { left + (log10(ratio) - low) / (high - low) * plotWidth }

    var body: [String] = []
    var y = top
    var suite: String?
    for (comparison, label) in zip(shown, labels) {
        if comparison.suite != suite {
            suite = comparison.suite
            body.append(text(comparison.suite, x: 12, y: y + 17, size: 13, weight: "bold"))
            y += groupHeading
        }
        let end = x(comparison.ratio), one = x(1)
        let faster = comparison.ratio >= 1
        body.append(text(label, x: left - 10, y: y + 16, anchor: "end"))
        body.append(
            "<rect x=\"\(number(min(one, end)))\" y=\"\(number(y + 4))\" width=\"\(number(max(abs(end - one), 1)))\" height=\"16\" fill=\"\(colour(comparison.peer))\"/>"
        )
        body.append(text(times(comparison.ratio), x: faster ? end + 5 : end - 5, y: y + 16, anchor: faster ? "start" : "end"))
        y += rowHeight
    }
    let bottom = y + 6

    var grid: [String] = []
    for decade in Int(low)...Int(high) {
        for step in [1.0, 2, 5] {
            let ratio = step * pow(10, Double(decade))
            guard ratio <= pow(10, high) * 1.0001 else { continue }
            let at = x(ratio)
            let colour = ratio == 1 ? "#333" : step == 1 ? "#bbb" : "#e4e4e4"
            grid.append(
                "<line x1=\"\(number(at))\" y1=\"\(number(top - 4))\" x2=\"\(number(at))\" y2=\"\(number(bottom))\" stroke=\"\(colour)\" stroke-width=\"\(ratio == 1 ? 1.5 : 1)\"/>"
            )
            grid.append(text(String(format: "%g×", ratio), x: at, y: bottom + 16, size: 11, anchor: "middle", colour: "#555"))
        }
    }
    let one = x(1)
    grid.append(text("← peer faster", x: one - 8, y: top - 10, anchor: "end", colour: "#555"))
    grid.append(text("Cairn faster →", x: one + 8, y: top - 10, colour: "#555"))

    var legend: [String] = []
    var legendX = left
    for peer in shown.map(\.peer).reduce(into: [String](), { peers, peer in if !peers.contains(peer) { peers.append(peer) } }) {
        legend.append("<rect x=\"\(number(legendX))\" y=\"\(number(bottom + 30))\" width=\"12\" height=\"12\" fill=\"\(colour(peer))\"/>")
        legend.append(text(peer, x: legendX + 17, y: bottom + 40))
        legendX += 30 + Double(peer.count) * 7
    }

    let height = bottom + 56
    return
        ([
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(number(width))\" height=\"\(number(height))\" viewBox=\"0 0 \(number(width)) \(number(height))\" font-family=\"sans-serif\">",
            "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>",
            text(title, x: 12, y: 26, size: 16, weight: "bold"),
            text(subtitle, x: 12, y: 46, size: 12, colour: "#555")
        ] + grid + body + legend + ["</svg>"]).joined(separator: "\n") + "\n"
}

/// A ratio as the chart writes it: `3.59×`, `18.2×`, `219×`.
private func times(_ ratio: Double) -> String {
    let digits = ratio >= 100 ? 0 : ratio >= 10 ? 1 : ratio >= 1 ? 2 : 3
    var written = String(format: "%.\(digits)f", ratio)
    if ratio < 1, written.contains(".") {
        while written.hasSuffix("0") { written.removeLast() }
    }
    return written + "×"
}

/// A coordinate with one decimal, the dot as its separator whatever the locale.
func number(_ value: Double) -> String { String(format: "%.1f", value) }

/// Each peer's colour; others grey.
private func colour(_ peer: String) -> String {
    switch peer {
    case "GRDB": "#4e79a7"
    case "sqlite3": "#f28e2b"
    case "DuckDB": "#59a14f"
    default: "#9c9c9c"
    }
}

/// An SVG text element, its content escaped.
func text(
    _ content: String, x: Double, y: Double, size: Int = 12, anchor: String = "start", weight: String = "normal", colour: String = "#222"
) -> String {
    var escaped = ""
    for character in content {
        switch character {
        case "&": escaped += "&amp;"
        case "<": escaped += "&lt;"
        case ">": escaped += "&gt;"
        case "\"": escaped += "&quot;"
        default: escaped.append(character)
        }
    }
    return
        "<text x=\"\(number(x))\" y=\"\(number(y))\" font-size=\"\(size)\" text-anchor=\"\(anchor)\" font-weight=\"\(weight)\" fill=\"\(colour)\">\(escaped)</text>"
}
