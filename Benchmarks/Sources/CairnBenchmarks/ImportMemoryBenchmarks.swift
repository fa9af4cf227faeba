import Cairn
import CairnLog
import CairnMapping
import Foundation

/// Memory and latency of large imports: the peak resident size of `cairn import` for a
/// single-save import of 1M records, a chunked import of 5M and the same 5M in one save, beside the resident size of the
/// store each makes (a process that opens it and counts its objects), and the longest wait of a
/// view-context fetch while a background import of 1M records runs.
func importMemoryBenchmarks(_ initial: Report, root: String, quick: Bool) async throws -> Report {
    var report = initial
    guard let (cairn, modelFile) = try releasedCommandLine(root: root, &report, measuring: "import memory") else { return report }
    let single = quick ? 200_000 : 1_000_000
    let chunked = quick ? 1_000_000 : 5_000_000

    // One save of 1M records.
    let singleFile = root + "/people-1m.jsonl"
    let singleBytes = try PersonJSON.writeLines(count: single, to: singleFile)
    let singleStore = root + "/memory-single"
    // For profiling the waits alone: CAIRN_BENCH_PROFILE=latency runs the background import
    // three times and prints each wait over 4 ms, with when it began after the import started.
    if ProcessInfo.processInfo.environment["CAIRN_BENCH_PROFILE"] == "latency" {
        for _ in 0..<3 {
            let (longest, fetches, waits) = try await fetchWaits(during: singleFile, store: singleStore + "-latency", control: false)
            print(
                "longest \(fixed(seconds(longest) * 1000, 2)) ms of \(fetches) fetches; waits over 4 ms (start s: ms): "
                    + waits.map { "\(fixed($0.0, 3)): \(fixed($0.1, 1))" }.joined(separator: ", "))
        }
        return report
    }
    let singleRun = try runProcess(cairn, ["import", singleStore, "--entity", "Person", singleFile, "--model", modelFile])
    let singleOpen = try runProcess(cairn, ["query", singleStore, "--entity", "Person", "--count"])
    report.row(
        "peak resident, import of \(single) records in one save", "\(singleRun.peakResidentBytes >> 20) MiB",
        note:
            "\(fixed(Double(singleBytes) / 1e6, 0)) MB of JSON Lines in \(fixed(singleRun.seconds, 2)) s; a process holding the store: \(singleOpen.peakResidentBytes >> 20) MiB"
    )

    // The background import of the same file, with fetches in the view context meanwhile.
    try? FileManager.default.removeItem(atPath: singleStore)
    let control = ProcessInfo.processInfo.environment["CAIRN_BENCH_LATENCY_CONTROL"] == "1"
    let (longest, fetches, _) = try await fetchWaits(during: singleFile, store: singleStore + "-latency", control: control)
    let longestMilliseconds = seconds(longest) * 1000
    report.row("longest view-context fetch during a background import of \(single) records", "\(fixed(longestMilliseconds, 2)) ms", note: "\(fetches) fetches")
    report.target("a fetch waits ≤ 16 ms during a background import", met: longestMilliseconds <= 16, figure: "\(fixed(longestMilliseconds, 2)) ms")
    try? FileManager.default.removeItem(atPath: singleFile)

    // 5M records, saved every 50,000.
    let chunkedFile = root + "/people-5m.jsonl"
    let chunkedBytes = try PersonJSON.writeLines(count: chunked, to: chunkedFile)
    let chunkedStore = root + "/memory-chunked"
    let chunkedRun = try runProcess(cairn, ["import", chunkedStore, "--entity", "Person", chunkedFile, "--model", modelFile, "--chunk", "50000"])
    // The same 5M records in one save: one change record of several frames.
    let wholeStore = root + "/memory-whole"
    let wholeRun = try runProcess(cairn, ["import", wholeStore, "--entity", "Person", chunkedFile, "--model", modelFile])
    try? FileManager.default.removeItem(atPath: chunkedFile)
    let wholeOpen = try runProcess(cairn, ["query", wholeStore, "--entity", "Person", "--count"])
    let wholeLog = try LogInspection.inspect(directory: wholeStore)
    try? FileManager.default.removeItem(atPath: wholeStore)
    report.row(
        "peak resident, import of \(chunked) records in one save", "\(wholeRun.peakResidentBytes >> 20) MiB",
        note:
            "\(fixed(wholeRun.seconds, 1)) s; \(wholeLog.frames) frames, LSNs \(wholeLog.lsnRange.map { "\($0)" } ?? "-"); "
            + "reopened and counted in \(fixed(wholeOpen.seconds, 2)) s, holding the store: \(wholeOpen.peakResidentBytes >> 20) MiB"
    )
    let chunkedOpen = try runProcess(cairn, ["query", chunkedStore, "--entity", "Person", "--count"])
    try? FileManager.default.removeItem(atPath: chunkedStore)
    let allowed = chunkedOpen.peakResidentBytes + 256 << 20
    report.row(
        "peak resident, import of \(chunked) records with --chunk 50000", "\(chunkedRun.peakResidentBytes >> 20) MiB",
        note:
            "\(fixed(Double(chunkedBytes) / 1e6, 0)) MB in \(fixed(chunkedRun.seconds, 1)) s; a process holding the store: \(chunkedOpen.peakResidentBytes >> 20) MiB"
    )
    report.target(
        "chunked import of \(chunked) records ≤ the store's resident size + 256 MiB", met: chunkedRun.peakResidentBytes <= allowed,
        figure: "\(chunkedRun.peakResidentBytes >> 20) MiB of \(allowed >> 20) MiB")
    return report
}

/// A flag one task sets and another polls.
final class FinishedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var isSet = false
    func set() { lock.withLock { isSet = true } }
    var value: Bool { lock.withLock { isSet } }
}

extension PersonJSON {
    /// Writes `count` records as JSON Lines, in pieces; returns the file's size.
    static func writeLines(count: Int, to path: String) throws -> Int {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        guard let handle = FileHandle(forWritingAtPath: path) else { throw BenchmarkFailure("cannot write \(path)") }
        defer { try? handle.close() }
        var total = 0
        var piece = ""
        for number in 0..<count {
            let person = Person(number: number)
            piece +=
                #"{"key":"\#(person.key)","givenName":"\#(person.givenName)","familyName":"\#(person.familyName)","email":"\#(person.email)","city":"\#(person.city)","born":"\#(Value.date(person.born).description)","score":\#(person.score),"active":\#(person.active),"visits":\#(person.visits),"created":"\#(Value.date(person.created).description)"}"#
            piece += "\n"
            if piece.utf8.count > 1 << 20 || number == count - 1 {
                let data = Data(piece.utf8)
                try handle.write(contentsOf: data)
                total += data.count
                piece = ""
            }
        }
        return total
    }
}

/// Fetches by unique key in the view context, one after another, while a detached task imports
/// `file` in the background (`control`: two spinning threads instead of an import, the
/// scheduler's share of the wait); the longest fetch, the number made, and each wait over 4 ms
/// (seconds after the import began, milliseconds).
func fetchWaits(during file: String, store path: String, control: Bool) async throws -> (Duration, Int, [(Double, Double)]) {
    try? FileManager.default.removeItem(atPath: path)
    let store = try Store(at: path, model: Person.model())
    _ = try await store.batchInsert("Person", columns: Person.columns, rows: (0..<10_000).map { Person(number: $0 + 10_000_000).row })
    let mapping = try Mapping(model: store.model)
    let finished = FinishedFlag()
    let began = ContinuousClock.now
    // Detached: a task made here would inherit the main actor and run the import's synchronous
    // parts on the thread that fetches.
    let importing = Task.detached {
        defer { finished.set() }
        if control {
            let spinners = (0..<2).map { _ in
                Thread {
                    let end = ContinuousClock.now + .seconds(2)
                    var x = 0
                    while ContinuousClock.now < end { x &+= 1 }
                    _ = x
                }
            }
            for spinner in spinners { spinner.start() }
            try await Task.sleep(for: .seconds(2))
            return ImportResult()
        }
        return try await store.importJSON(contentsOf: URL(fileURLWithPath: file), into: "Person", mapping: mapping)
    }
    var longest = Duration.zero
    var fetches = 0
    var waits: [(Double, Double)] = []
    var generator = SystemRandomNumberGenerator()
    while !finished.value {
        let key = Person.key(10_000_000 + Int.random(in: 0..<10_000, using: &generator))
        let start = ContinuousClock.now
        _ = try store.viewContext.fetchFirst(FetchRequest("Person", predicate: .equal("key", .string(key))))
        let wait = ContinuousClock.now - start
        longest = max(longest, wait)
        if wait > .milliseconds(4) { waits.append((seconds(start - began), seconds(wait) * 1000)) }
        fetches += 1
        if fetches % 64 == 0 { await Task.yield() }
    }
    _ = try await importing.value
    try await store.close()
    try? FileManager.default.removeItem(atPath: path)
    return (longest, fetches, waits)
}
