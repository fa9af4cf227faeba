import Cairn
import Foundation
import Glibc

/// A child process's wall time and peak resident size.
struct ProcessRun {
    var seconds: Double
    var peakResidentBytes: Int
    var status: Int32
}

/// Runs `path` with `arguments` (standard output and error to /dev/null) and waits for it,
/// reading its peak resident size from `wait4`.
func runProcess(_ path: String, _ arguments: [String], in directory: String? = nil) throws -> ProcessRun {
    var actions: posix_spawn_file_actions_t = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    var command = [path] + arguments
    if let directory { command = ["/bin/sh", "-c", "cd -- \"$0\" && exec \"$@\"", directory] + command }
    let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    let start = ContinuousClock.now
    let spawned = posix_spawn(&pid, command[0], &actions, nil, argv, environ)
    guard spawned == 0 else { throw BenchmarkFailure("cannot run \(path): \(String(cString: strerror(spawned)))") }
    // The peak resident size is read from the child's VmHWM while it runs: `wait4`'s ru_maxrss
    // counts the parent's memory too (posix_spawn shares it until exec).
    var status: Int32 = 0
    var peak = 0
    while true {
        let done = waitpid(pid, &status, WNOHANG)
        if done == pid || (done < 0 && errno != EINTR) { break }
        peak = max(peak, peakResident(pid))
        usleep(5_000)
    }
    let elapsed = seconds(ContinuousClock.now - start)
    return ProcessRun(seconds: elapsed, peakResidentBytes: peak, status: (status >> 8) & 0xFF)
}

/// A process's peak resident size so far (VmHWM), 0 when it cannot be read.
func peakResident(_ pid: pid_t) -> Int {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
        let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
        let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
    else { return 0 }
    return kilobytes * 1024
}

/// The python3 that has the duckdb module (the one on PATH first, then the system's).
func pythonWithDuckDB() -> String? {
    let candidates = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { $0 + "/python3" } + ["/usr/bin/python3"]
    for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate) {
        if (try? runProcess(candidate, ["-c", "import duckdb"]))?.status == 0 { return candidate }
    }
    return nil
}

struct BenchmarkFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Whole processes on the same file, alternating: `cairn import` into a new store, GRDB's
/// import (this binary's `grdb-import`), the sqlite3 shell's JSON path and DuckDB's `read_json`
/// (both with an upsert), each timed from spawn to exit. `style` says how the people are typed,
/// for Cairn's model file and for each peer.
func importProcessBenchmarks(_ initial: Report, root: String, file: String, count: Int, runs: Int, style: PeopleStyle = .benchmark) throws -> Report {
    var report = initial
    let repository = FileManager.default.currentDirectoryPath
    guard let (cairn, modelFile) = try releasedCommandLine(root: root, &report, measuring: "whole process\(style.label)", style: style) else {
        return report
    }
    let me = CommandLine.arguments[0]
    let sqliteScript = repository + "/Benchmarks/peers/sqlite3-import.sh"
    let duckScript = repository + "/Benchmarks/peers/duckdb-import.py"
    let hasSQLite = FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3")
    let python = pythonWithDuckDB()
    var times: [String: [Double]] = [:]
    var peaks: [String: Int] = [:]
    for run in 0..<runs {
        func measure(_ name: String, _ path: String, _ arguments: [String], clean: [String]) throws {
            for item in clean { try? FileManager.default.removeItem(atPath: item) }
            let result = try runProcess(path, arguments)
            guard result.status == 0 else { throw BenchmarkFailure("\(name) exited with \(result.status)") }
            times[name, default: []].append(result.seconds)
            peaks[name] = max(peaks[name] ?? 0, result.peakResidentBytes)
            for item in clean { try? FileManager.default.removeItem(atPath: item) }
        }
        let store = root + "/process-cairn-\(run)"
        try measure("cairn", cairn, ["import", store, "--entity", "Person", file, "--model", modelFile], clean: [])
        let grdb = root + "/process-grdb-\(run).sqlite"
        try measure("GRDB", me, [style.grdbCommand, file, grdb], clean: [])
        // A cold open of what each imported, whole process: Cairn replays the one big save to
        // its full view; GRDB fetches every row into structs (the benchmark's people only).
        if style == .benchmark {
            try measure("cairn open", cairn, ["query", store, "--entity", "Person", "--count"], clean: [])
            try measure("GRDB open", me, ["grdb-load", grdb], clean: [])
        }
        for item in [store, grdb, grdb + "-wal", grdb + "-shm"] { try? FileManager.default.removeItem(atPath: item) }
        if hasSQLite {
            let database = root + "/process-sqlite-\(run).db"
            try measure("sqlite3", "/bin/sh", [sqliteScript, file, database] + style.sqliteArguments, clean: [database, database + "-wal", database + "-shm"])
        }
        if let python {
            let database = root + "/process-duck-\(run).duckdb"
            try measure("DuckDB", python, [duckScript, file, database] + style.duckDBArguments, clean: [database, database + ".wal"])
        }
    }
    func median(_ name: String) -> Double? { times[name].map { $0.sorted()[$0.count / 2] } }
    func spread(_ name: String) -> String {
        guard let values = times[name]?.sorted(), let first = values.first, let last = values.last else { return "" }
        return "\(fixed(first, 2))–\(fixed(last, 2)) s"
    }
    guard let cairnTime = median("cairn"), let grdbTime = median("GRDB") else { return report }
    var line = "cairn \(fixed(cairnTime, 3)) s (\(spread("cairn"))), GRDB \(fixed(grdbTime, 3)) s (\(spread("GRDB")))"
    if let sqlite = median("sqlite3") { line += ", sqlite3 \(fixed(sqlite, 3)) s" }
    if let duck = median("DuckDB") { line += ", DuckDB \(fixed(duck, 3)) s" }
    report.row(
        "whole process import of \(count) records\(style.label)", line,
        note: "\(fixed(grdbTime / cairnTime, 2))× GRDB; peak resident: cairn \((peaks["cairn"] ?? 0) >> 20) MiB, GRDB \((peaks["GRDB"] ?? 0) >> 20) MiB")
    if let cairnOpen = median("cairn open"), let grdbOpen = median("GRDB open") {
        report.row(
            "whole process cold open of the imported store (one save of \(count))",
            "cairn query --count \(fixed(cairnOpen, 3)) s (\(spread("cairn open"))), GRDB every row into structs \(fixed(grdbOpen, 3)) s (\(spread("GRDB open")))",
            note: "\(fixed(grdbOpen / cairnOpen, 2))× GRDB")
        report.target("cold open of the imported store ≥ 3× GRDB (whole process)", met: grdbOpen >= 3 * cairnOpen, figure: "\(fixed(grdbOpen / cairnOpen, 2))×")
    }
    let suite = "JSON import, \(grouped(count)) records"
    report.compare(suite, "cairn import, whole process\(style.label)", ratio: grdbTime / cairnTime)
    for peer in ["sqlite3", "DuckDB"] {
        if let time = median(peer) { report.compare(suite, "cairn import, whole process\(style.label)", peer: peer, ratio: time / cairnTime) }
    }
    report.target("cairn import ≥ 5× the GRDB peer (whole process)\(style.label)", met: grdbTime >= 5 * cairnTime, figure: "\(fixed(grdbTime / cairnTime, 2))×")
    if let sqlite = median("sqlite3") {
        report.target("cairn import faster than the sqlite3 shell\(style.label)", met: cairnTime < sqlite, figure: "\(fixed(sqlite / cairnTime, 2))×")
    }
    if let duck = median("DuckDB") {
        report.target("cairn import faster than DuckDB\(style.label)", met: cairnTime < duck, figure: "\(fixed(duck / cairnTime, 2))×")
    }
    return report
}

/// The release `cairn` (`CAIRN_CLI`, else `.build/release/cairn` of the repository this runs
/// from) and a model file of `Person` (in `style`) for its `--model`; nil, with a row saying so,
/// when it is not built.
func releasedCommandLine(
    root: String, _ report: inout Report, measuring what: String, style: PeopleStyle = .benchmark
) throws -> (cli: String, modelFile: String)? {
    let cairn = ProcessInfo.processInfo.environment["CAIRN_CLI"] ?? FileManager.default.currentDirectoryPath + "/.build/release/cairn"
    guard FileManager.default.isExecutableFile(atPath: cairn) else {
        report.row(what, "not measured", note: "build the release cairn first: swift build -c release --product cairn")
        return nil
    }
    let modelFile = root + "/" + style.modelFileName
    try Person.model(style: style).jsonData().write(to: URL(fileURLWithPath: modelFile))
    return (cairn, modelFile)
}
