import CairnLog
import Foundation
import Glibc

// Cairn benchmarks. Usage (from the repository root):
//
//     swift run -c release --package-path Benchmarks cairn-benchmarks [log|graph|query|import|import-memory|compaction|all] [--quick] [--dir PATH]
//
// Prints markdown tables: figures, and each target as met or NOT MET.

let arguments = CommandLine.arguments.dropFirst()
// The GRDB peer of the whole-process import benchmark: `cairn-benchmarks grdb-import FILE DATABASE`.
if arguments.first == "grdb-import", arguments.count == 3 {
    let database = arguments[arguments.startIndex + 2]
    try PersonJSON.grdbImport(arguments[arguments.startIndex + 1], into: try grdbQueue(database))
    exit(0)
}
let quick = arguments.contains("--quick")
let root: String = {
    if let index = arguments.firstIndex(of: "--dir"), arguments.index(after: index) < arguments.endIndex {
        return arguments[arguments.index(after: index)]
    }
    return FileManager.default.currentDirectoryPath + "/.cairn-bench-data"
}()
try? FileManager.default.removeItem(atPath: root)
try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
// CAIRN_BENCH_KEEP=1 keeps the data (the JSON files, the model file, the stores) for profiling.
defer { if ProcessInfo.processInfo.environment["CAIRN_BENCH_KEEP"] == nil { try? FileManager.default.removeItem(atPath: root) } }

var report = Report()
print("Cairn benchmarks — \(ProcessInfo.processInfo.activeProcessorCount) cores, data in \(root)\(quick ? " (quick run)" : "")\n")

let suites = ["log", "graph", "query", "import", "import-memory", "compaction", "all"].filter { arguments.contains($0) }
let suite = suites.first ?? "log"
if suite == "log" || suite == "all" { report = try await logBenchmarks(report, root: root, quick: quick) }
if suite == "graph" || suite == "all" { report = try await graphBenchmarks(report, root: root, quick: quick) }
if suite == "query" || suite == "all" { report = try await queryBenchmarks(report, root: root, quick: quick) }
if suite == "import" || suite == "all" { report = try await importBenchmarks(report, root: root, quick: quick) }
if suite == "import-memory" || suite == "all" { report = try await importMemoryBenchmarks(report, root: root, quick: quick) }
if suite == "compaction" || suite == "all" { report = try await compactionBenchmarks(report, root: root, quick: quick) }

print(report.markdown)
