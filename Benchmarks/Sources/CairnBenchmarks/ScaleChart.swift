import Foundation

/// One operation of the scale suite at one size: Cairn's and GRDB's rates (per second).
struct ScalePoint: Sendable {
    var operation: String
    var objects: Int
    var cairn: Double
    var grdb: Double
}

/// The scale suite's rates against the store's size as an SVG: one panel per operation, both
/// axes logarithmic (objects; operations a second), Cairn's line solid and GRDB's dashed. A flat
/// line is a cost that does not grow with the store; a line falling one decade per decade, one
/// that grows as the store does.
func scaleChart(_ points: [ScalePoint], title: String, subtitle: String) -> String {
    let shown = points.filter { $0.cairn > 0 && $0.grdb > 0 && $0.cairn.isFinite && $0.grdb.isFinite && $0.objects > 0 }
    var operations: [String] = []
    for point in shown where !operations.contains(point.operation) { operations.append(point.operation) }
    let columns = 3, panelWidth = 300.0, panelHeight = 190.0, top = 70.0
    let plotLeft = 52.0, plotRight = 14.0, plotTop = 28.0, plotBottom = 34.0
    let rows = (operations.count + columns - 1) / columns
    let width = Double(columns) * panelWidth + 20, height = top + Double(rows) * panelHeight + 30
    let sizes = shown.map { log10(Double($0.objects)) }
    let (xLow, xHigh) = (floor(sizes.min() ?? 5), max(ceil(sizes.max() ?? 6), floor(sizes.min() ?? 5) + 1))

    var body: [String] = []
    for (index, operation) in operations.enumerated() {
        let left = 10 + Double(index % columns) * panelWidth, panelTop = top + Double(index / columns) * panelHeight
        let series = shown.filter { $0.operation == operation }.sorted { $0.objects < $1.objects }
        let rates = series.flatMap { [log10($0.cairn), log10($0.grdb)] }
        let yLow = floor(rates.min() ?? 0), yHigh = max(ceil(rates.max() ?? 1), yLow + 1)
        let x0 = left + plotLeft, x1 = left + panelWidth - plotRight, y0 = panelTop + panelHeight - plotBottom, y1 = panelTop + plotTop
        func x(_ objects: Int) -> Double { x0 + (log10(Double(objects)) - xLow) / (xHigh - xLow) * (x1 - x0) }
        func y(_ rate: Double) -> Double { y0 - (log10(rate) - yLow) / (yHigh - yLow) * (y0 - y1) }
        body.append(text(operation, x: left + 8, y: panelTop + 16, size: 12, weight: "bold"))
        for decade in Int(yLow)...Int(yHigh) {
            let at = y(pow(10, Double(decade)))
            body.append("<line x1=\"\(number(x0))\" y1=\"\(number(at))\" x2=\"\(number(x1))\" y2=\"\(number(at))\" stroke=\"#e4e4e4\"/>")
            body.append(text(rateLabel(pow(10, Double(decade))), x: x0 - 4, y: at + 4, size: 10, anchor: "end", colour: "#555"))
        }
        for decade in Int(xLow)...Int(xHigh) {
            let at = x(Int(pow(10, Double(decade))))
            body.append("<line x1=\"\(number(at))\" y1=\"\(number(y1))\" x2=\"\(number(at))\" y2=\"\(number(y0))\" stroke=\"#e4e4e4\"/>")
            body.append(text(objectsLabel(Int(pow(10, Double(decade)))), x: at, y: y0 + 14, size: 10, anchor: "middle", colour: "#555"))
        }
        for (rate, colour, dash) in [(\ScalePoint.cairn, "#e15759", ""), (\ScalePoint.grdb, "#4e79a7", " stroke-dasharray=\"5,3\"")] {
            let line = series.map { "\(number(x($0.objects))),\(number(y($0[keyPath: rate])))" }.joined(separator: " ")
            body.append("<polyline points=\"\(line)\" fill=\"none\" stroke=\"\(colour)\" stroke-width=\"2\"\(dash)/>")
            for point in series {
                body.append("<circle cx=\"\(number(x(point.objects)))\" cy=\"\(number(y(point[keyPath: rate])))\" r=\"3\" fill=\"\(colour)\"/>")
            }
        }
    }
    return """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(number(width))" height="\(number(height))" viewBox="0 0 \(number(width)) \(number(height))" font-family="Helvetica, Arial, sans-serif">
        <rect width="100%" height="100%" fill="white"/>
        \(text(title, x: 12, y: 26, size: 16, weight: "bold"))
        \(text(subtitle, x: 12, y: 46, size: 12, colour: "#555"))
        \(text("Cairn", x: width - 170, y: 26, size: 12, colour: "#e15759")) \(text("GRDB (dashed)", x: width - 120, y: 26, size: 12, colour: "#4e79a7"))
        \(body.joined(separator: "\n"))
        </svg>

        """
}

/// A rate on the chart's axis: 1, 10, 100, 1k, 10k, 1M…
private func rateLabel(_ rate: Double) -> String {
    if rate >= 1e6 { return String(format: "%gM/s", rate / 1e6) }
    if rate >= 1e3 { return String(format: "%gk/s", rate / 1e3) }
    return String(format: "%g/s", rate)
}

/// A store size on the chart's axis: 100k, 1M, 10M…
private func objectsLabel(_ objects: Int) -> String {
    objects >= 1_000_000 ? "\(objects / 1_000_000)M" : objects >= 1000 ? "\(objects / 1000)k" : "\(objects)"
}
