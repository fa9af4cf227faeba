import CairnLog
import Foundation
import Glibc

// Cairn benchmarks. Usage (from the repository root):
//
//     swift run -c release --package-path Benchmarks cairn-benchmarks [log|graph|typed|query|import|values|relations|import-memory|compaction|observe|history|scale|paged|all]... [--quick] [--dir PATH] [--chart PATH] [--scale-chart PATH]
//
// Runs each suite named (the log's when none is), in the order above. Prints markdown tables:
// figures, and each target as met or NOT MET. A run that compared Cairn with a peer writes the
// ratios as a chart, to `Benchmarks/chart.svg` of the current directory or `--chart PATH`.

let arguments = CommandLine.arguments.dropFirst()
// The GRDB peer of the whole-process import benchmarks: `cairn-benchmarks grdb-import FILE DATABASE`
// (`grdb-import-app` for the app-style people of the values suite).
if let style = PeopleStyle(grdbCommand: arguments.first), arguments.count == 3 {
    let database = arguments[arguments.startIndex + 2]
    try PersonJSON.grdbImport(arguments[arguments.startIndex + 1], into: try grdbQueue(database, style: style), style: style)
    exit(0)
}
// The GRDB peer of the whole-process cold open: `cairn-benchmarks grdb-load DATABASE` fetches
// every person into structs.
if arguments.first == "grdb-load", arguments.count == 2 {
    exit(try PersonJSON.grdbLoad(arguments[arguments.startIndex + 1]) > 0 ? 0 : 1)
}
// The child of the paged base benchmark: `cairn-benchmarks paged-probe FILE COUNT OUTPUT`.
if arguments.first == "paged-probe", arguments.count == 4, let count = Int(arguments[arguments.startIndex + 2]) {
    try pagedProbe(arguments[arguments.startIndex + 1], count: count, output: arguments[arguments.startIndex + 3])
    exit(0)
}
let quick = arguments.contains("--quick")
/// The value given after `option`, if any.
func optionValue(_ option: String) -> String? {
    guard let index = arguments.firstIndex(of: option), arguments.index(after: index) < arguments.endIndex else { return nil }
    return arguments[arguments.index(after: index)]
}
let root = optionValue("--dir") ?? FileManager.default.currentDirectoryPath + "/.cairn-bench-data"
let chartPath = optionValue("--chart") ?? FileManager.default.currentDirectoryPath + "/Benchmarks/chart.svg"
try? FileManager.default.removeItem(atPath: root)
try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
// CAIRN_BENCH_KEEP=1 keeps the data (the JSON files, the model file, the stores) for profiling.
defer { if ProcessInfo.processInfo.environment["CAIRN_BENCH_KEEP"] == nil { try? FileManager.default.removeItem(atPath: root) } }

var report = Report()
print("Cairn benchmarks — \(ProcessInfo.processInfo.activeProcessorCount) cores, data in \(root)\(quick ? " (quick run)" : "")\n")

let suites = ["log", "graph", "typed", "query", "import", "values", "relations", "import-memory", "compaction", "observe", "history", "scale", "paged", "all"]
let named = Set(suites.filter { arguments.contains($0) })
/// Whether the run includes `suite`.
func runs(_ suite: String) -> Bool { named.contains(suite) || named.contains("all") || (named.isEmpty && suite == "log") }
if runs("log") { report = try await logBenchmarks(report, root: root, quick: quick) }
if runs("graph") { report = try await graphBenchmarks(report, root: root, quick: quick) }
if runs("typed") { report = try await typedModelBenchmarks(report, root: root, quick: quick) }
if runs("query") { report = try await queryBenchmarks(report, root: root, quick: quick) }
if runs("import") { report = try await importBenchmarks(report, root: root, quick: quick) }
if runs("values") { report = try await importValueBenchmarks(report, root: root, quick: quick) }
if runs("relations") { report = try await relationshipImportBenchmarks(report, root: root, quick: quick) }
if runs("import-memory") { report = try await importMemoryBenchmarks(report, root: root, quick: quick) }
if runs("compaction") { report = try await compactionBenchmarks(report, root: root, quick: quick) }
if runs("observe") { report = try await observationBenchmarks(report, root: root, quick: quick) }
if runs("history") {
    report = try await historyBenchmarks(report, root: root, quick: quick)
    report = try await followerBenchmarks(report, root: root, quick: quick)
}
if runs("scale") {
    report = try await scaleBenchmarks(report, root: root, quick: quick)
    let path = optionValue("--scale-chart") ?? (chartPath as NSString).deletingLastPathComponent + "/scale.svg"
    let chart = scaleChart(
        report.scalePoints, title: "Cairn and GRDB as the store grows",
        subtitle: "Each operation's rate against the number of objects, in the same run; logarithmic scales")
    try chart.write(toFile: path, atomically: true, encoding: .utf8)
    print("\nThe scale suite's rates as a chart: \(path)")
}

if runs("paged") { report = try await pagedBaseBenchmarks(report, root: root, quick: quick) }

print(report.markdown)

if !report.comparisons.isEmpty {
    let subtitle =
        "How many times as fast as its peer Cairn ran each operation, in the same run"
        + " (\(ProcessInfo.processInfo.activeProcessorCount) cores\(quick ? ", --quick" : "")); logarithmic scale"
    let chart = comparisonChart(report.comparisons, title: "Cairn against its peers", subtitle: subtitle)
    try chart.write(toFile: chartPath, atomically: true, encoding: .utf8)
    print("\nThe comparisons as a chart: \(chartPath)")
}
