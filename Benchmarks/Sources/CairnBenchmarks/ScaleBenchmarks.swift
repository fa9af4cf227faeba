import Cairn
import CairnLog
import Foundation
import GRDB

/// How each cost grows with the store: the same operations on the Person objects at 1M and 3M
/// objects (`CAIRN_BENCH_SCALE_SIZES=1000000,3000000,10000000` for others; `--quick`: 100k and
/// 300k), Cairn and GRDB at each size in the same run. Whole processes: the import of a JSON
/// array in one save (one transaction), a reopen from the log and from a base (GRDB: every row
/// fetched), resident bytes per object. In process: lookups by unique key (beside a Swift
/// `Dictionary` of the keys in the same loop), an indexed range, a full scan (beside what the
/// machine's memory bandwidth needs for the column it reads), a sort of 10%, an aggregate, and
/// an update of 1% saved, and the longest save while an online compaction runs.
func scaleBenchmarks(_ initial: Report, root: String, quick: Bool) async throws -> Report {
    var report = initial
    guard
        let (cairn, modelFile, sizes) = try scaleSetup(
            root: root, &report, measuring: "scale", sizes: "CAIRN_BENCH_SCALE_SIZES", quick ? [100_000, 300_000] : [1_000_000, 3_000_000])
    else { return report }
    let bandwidth = copyBandwidth(bytes: 256 << 20)
    report.row("memory copy bandwidth", "\(fixed(bandwidth / 1e9, 1)) GB/s", note: "memcpy of 256 MiB, best of 5")
    // What a process that opens a store of one object holds: taken off each reopen's peak, so
    // that bytes per object are the objects'.
    let tiny = freshStore(root, "scale-one")
    _ = try PersonJSON.write(count: 1, to: root + "/scale-one.json")
    _ = try runProcess(cairn, ["import", tiny, "--entity", "Person", root + "/scale-one.json", "--model", modelFile])
    let baseline = try runProcess(cairn, ["query", tiny, "--entity", "Person", "--count"]).peakResidentBytes
    report.row("peak resident of a process that opens a store of one object", "\(baseline >> 20) MiB", note: "taken off the reopens' peaks below")
    var opens: [(seconds: Double, residentRatio: Double)] = []
    for count in sizes {
        let open: (Double, Double)
        (report, open) = try await scaleRound(
            report, count: count, root: root, cairn: cairn, modelFile: modelFile, bandwidth: bandwidth, baseline: baseline)
        opens.append(open)
    }
    // The targets, on the largest size: against the smallest, and absolute.
    guard let smallest = sizes.first, let largest = sizes.last, let open = opens.last else { return report }
    let ratios = { (count: Int) in
        Dictionary(report.comparisons.filter { $0.suite == "Scale, \(grouped(count)) objects" }.map { ($0.operation, $0.ratio) }, uniquingKeysWith: { $1 })
    }
    let (first, last) = (ratios(smallest), ratios(largest))
    if largest > smallest {
        for (operation, ratio) in last.sorted(by: { $0.key < $1.key }) {
            guard let before = first[operation] else { continue }
            report.target(
                "scale: \(operation) at \(grouped(largest)), against GRDB ≥ at \(grouped(smallest))", met: ratio >= before,
                figure: "\(fixed(ratio, 2))× against \(fixed(before, 2))×")
        }
    }
    report.target("scale: reopen from a base ≤ 3 s at \(grouped(largest))", met: open.seconds <= 3, figure: "\(fixed(open.seconds, 2)) s")
    report.target(
        "scale: resident ≤ 1.6× the attribute data at \(grouped(largest))", met: open.residentRatio <= 1.6, figure: "\(fixed(open.residentRatio, 2))×")
    let importRatio = last["import in one save, whole process"] ?? 0
    report.target("scale: import ≥ 5× GRDB at \(grouped(largest))", met: importRatio >= 5, figure: "\(fixed(importRatio, 2))×")
    return report
}

/// What the scale and paged suites start from: the release CLI, the indexed people model
/// written to a file, and the sizes the environment variable `variable` lists (`defaults`
/// without it); nil (a row says why) without the CLI.
func scaleSetup(
    root: String, _ report: inout Report, measuring what: String, sizes variable: String, _ defaults: [Int]
) throws -> (cli: String, modelFile: String, sizes: [Int])? {
    guard let (cairn, _) = try releasedCommandLine(root: root, &report, measuring: what) else { return nil }
    let modelFile = root + "/person-indexed.json"
    try Person.model(indexed: true).jsonData().write(to: URL(fileURLWithPath: modelFile))
    let sizes = ProcessInfo.processInfo.environment[variable].map { $0.split(separator: ",").compactMap { Int($0) } } ?? defaults
    return (cairn, modelFile, sizes)
}

/// The scale suite's operations at one size; also the seconds of the reopen from the base and
/// its resident bytes over the attribute data's.
private func scaleRound(
    _ initial: Report, count: Int, root: String, cairn: String, modelFile: String, bandwidth: Double, baseline: Int
) async throws -> (Report, (Double, Double)) {
    var report = initial
    let size = grouped(count)
    let group = "Scale, \(size) objects"
    func compare(_ operation: String, cairn: Double, grdb: Double, unit: String, note: String = "") {
        report.compare(group, operation, ratio: cairn / grdb)
        report.scalePoints.append(ScalePoint(operation: operation, objects: count, cairn: cairn, grdb: grdb))
        report.row(
            "\(operation), \(size)", "Cairn \(fixed(cairn, 1))/s, GRDB \(fixed(grdb, 1))/s",
            note: "\(fixed(cairn / grdb, 2))× (\(unit))" + (note.isEmpty ? "" : "; " + note))
    }

    // Whole processes: the import, the reopens.
    let json = root + "/scale-\(count).json"
    let jsonBytes = try PersonJSON.write(count: count, to: json)
    let store = freshStore(root, "scale-cairn-\(count)")
    let database = root + "/scale-grdb-\(count).sqlite"
    let cairnImport = try runProcess(cairn, ["import", store, "--entity", "Person", json, "--model", modelFile])
    let grdbImport = try runProcess(CommandLine.arguments[0], ["grdb-import", json, database])
    try? FileManager.default.removeItem(atPath: json)
    guard cairnImport.status == 0, grdbImport.status == 0 else {
        throw BenchmarkFailure("scale import of \(count): cairn exited with \(cairnImport.status), the GRDB peer with \(grdbImport.status)")
    }
    compare(
        "import in one save, whole process", cairn: 1 / cairnImport.seconds, grdb: 1 / grdbImport.seconds, unit: "imports",
        note:
            "\(fixed(Double(jsonBytes) / 1e6, 0)) MB of JSON; Cairn \(fixed(cairnImport.seconds, 1)) s, peak \(cairnImport.peakResidentBytes >> 20) MiB; "
            + "GRDB \(fixed(grdbImport.seconds, 1)) s, peak \(grdbImport.peakResidentBytes >> 20) MiB")
    let fromLog = try runProcess(cairn, ["query", store, "--entity", "Person", "--count"])
    let grdbLoad = try runProcess(CommandLine.arguments[0], ["grdb-load", database])
    compare(
        "reopen from the log, whole process", cairn: 1 / fromLog.seconds, grdb: 1 / grdbLoad.seconds, unit: "opens",
        note:
            "Cairn \(fixed(fromLog.seconds, 2)) s (\(fixed(Double(count) / fromLog.seconds / 1e6, 2))M objects/s), "
            + "\((fromLog.peakResidentBytes - baseline) / count) resident bytes an object; GRDB every row fetched: \(fixed(grdbLoad.seconds, 2)) s")
    let compaction = try runProcess(cairn, ["compact", store, "--level", "high"])
    let fromBase = try runProcess(cairn, ["query", store, "--entity", "Person", "--count"])
    report.row(
        "compact (high) and reopen from the base, \(size)", "\(fixed(compaction.seconds, 1)) s, then \(fixed(fromBase.seconds, 2)) s",
        note:
            "\((fromBase.peakResidentBytes - baseline) / count) resident bytes an object, "
            + "\(fixed(Double(fromBase.peakResidentBytes - baseline) / Double(count * dataBytesPerPerson), 2))× the attribute data")

    // In process, on what the imports made.
    let pool = try DatabasePool(path: database)
    try await pool.write { db in try db.execute(sql: "CREATE INDEX person_visits ON person(visits); CREATE INDEX person_born ON person(born); ANALYZE") }
    let opened = try Store(at: store, model: try Person.model(indexed: true))
    let view = opened.viewContext

    // Lookups by unique key, beside a Dictionary of the keys in the same loop.
    let lookups = min(count, 200_000)
    var keys: [String: Int] = [:]
    keys.reserveCapacity(count)
    for number in 0..<count { keys[Person.key(number)] = number }
    let dictionary = runsPerSecond(lookups) { index in precondition(keys[PersonQueries.lookupKey(index, count: count)] != nil) }
    keys = [:]
    let cairnLookup = try runsPerSecond(lookups) { index in try PersonQueries.lookup(view, index, count: count) }
    let grdbLookup = try await runsPerSecond(lookups, on: pool) { db, index in try PersonQueries.lookup(db, index, count: count) }
    compare(
        "lookup by unique key", cairn: cairnLookup, grdb: grdbLookup, unit: "lookups",
        note: "a Dictionary of the keys: \(fixed(dictionary / 1e6, 2))M/s, \(fixed(dictionary / cairnLookup, 1))× Cairn")
    report.target(
        "scale: lookup by unique key within 2× a Dictionary at \(size)", met: dictionary / cairnLookup <= 2,
        figure: "\(fixed(dictionary / cairnLookup, 1))× slower")
    report.target("scale: lookup by unique key ≥ 10× GRDB at \(size)", met: cairnLookup / grdbLookup >= 10, figure: "\(fixed(cairnLookup / grdbLookup, 2))×")
    let batchLookups = try runsPerSecond(lookups / 1000) { batch in
        let values = (0..<1000).map { Value.string(PersonQueries.lookupKey(batch * 1000 + $0 + lookups, count: count)) }
        let found = try view.fetch("Person", key: "key", in: values)
        precondition(found.allSatisfy { $0 != nil })
    }
    report.row(
        "lookup by unique key, 1,000 keys a call, \(size)", "\(fixed(batchLookups * 1000 / 1e6, 2))M keys/s",
        note: "\(fixed(dictionary / (batchLookups * 1000), 1))× slower than the Dictionary")

    // A range on an indexed attribute: about 1% of the objects (births spread over count × 997
    // seconds, wrapping at 1.2e9).
    let span = Double(min(count * 997, 1_200_000_000)) / 100
    var matched = 0
    let cairnRange = try runsPerSecond(20) { index in matched = try PersonQueries.range(view, index, span: span) }
    let grdbRange = try await runsPerSecond(20, on: pool) { db, index in try PersonQueries.range(db, index, span: span) }
    compare("indexed range of 1%", cairn: cairnRange, grdb: grdbRange, unit: "ranges of \(matched) objects")

    // A full scan, an aggregate and a sort, each beside the time the bytes of the attributes it
    // reads take at the copy bandwidth. The first scan makes the columns it reads (timed, and
    // their memory measured, apart).
    func bandwidthNote(_ best: Double, bytes: Int) -> (String, Double) {
        let floor = Double(bytes) / bandwidth
        return (
            "best \(fixed(best * 1000, 1)) ms; \(bytes >> 20) MiB at the copy bandwidth: \(fixed(floor * 1000, 1)) ms, \(fixed(best / floor, 1))× that",
            best / floor
        )
    }
    func timed(_ times: inout [Double], _ body: () throws -> Void) rethrows {
        let start = ContinuousClock.now
        try body()
        times.append(seconds(ContinuousClock.now - start))
    }
    let emailBytes = (0..<count).reduce(0) { $0 + Person(number: $1).email.utf8.count }
    let heapBefore = heapInUse()
    var firstScan: [Double] = []
    try timed(&firstScan) { matched = try PersonQueries.scan(view) }
    let columnMemory = heapInUse() - heapBefore
    var scanSeconds: [Double] = []
    let cairnScan = try runsPerSecond(5) { _ in try timed(&scanSeconds) { matched = try PersonQueries.scan(view) } }
    let grdbScan = try await runsPerSecond(3, on: pool) { db, _ in try PersonQueries.scan(db) }
    let (scanNote, scanRatio) = bandwidthNote(scanSeconds.min() ?? 0, bytes: emailBytes)
    compare("full scan, email CONTAINS[c]", cairn: cairnScan, grdb: grdbScan, unit: "scans, \(matched) match", note: scanNote)
    report.row(
        "first scan of the email column, \(size)", "\(fixed((firstScan.first ?? 0) * 1000, 0)) ms",
        note:
            "makes the column it reads: \(columnMemory >> 20) MiB more resident, \(fixed(Double(columnMemory) / Double(max(1, emailBytes)), 2))× the email bytes"
    )

    // A sort of 10% (reads visits of every object, score and key of the matches) and an
    // aggregate (active and score of every object).
    var sortSeconds: [Double] = []
    let cairnSort = try runsPerSecond(3) { _ in try timed(&sortSeconds) { matched = try PersonQueries.sort(view) } }
    let grdbSort = try await runsPerSecond(3, on: pool) { db, _ in try PersonQueries.sort(db) }
    let keyBytes = (0..<count).reduce(0) { $0 + ($1 % 500 < 50 ? Person.key($1).utf8.count + 8 : 0) }
    let (sortNote, _) = bandwidthNote(sortSeconds.min() ?? 0, bytes: count * 8 + keyBytes)
    compare("sort of 10% by score, key", cairn: cairnSort, grdb: grdbSort, unit: "sorts of \(matched)", note: sortNote)
    var aggregateSeconds: [Double] = []
    let cairnAggregate = try runsPerSecond(5) { _ in try timed(&aggregateSeconds) { _ = try PersonQueries.aggregate(view) } }
    let grdbAggregate = try await runsPerSecond(3, on: pool) { db, _ in try PersonQueries.aggregate(db) }
    let (aggregateNote, aggregateRatio) = bandwidthNote(aggregateSeconds.min() ?? 0, bytes: count * 9)
    compare("aggregate over the active two thirds", cairn: cairnAggregate, grdb: grdbAggregate, unit: "aggregates", note: aggregateNote)
    // (A sort's time is its comparisons': its bytes are printed, not held to the bandwidth.)
    for (operation, ratio) in [("full scan", scanRatio), ("aggregate", aggregateRatio)] {
        report.target("scale: \(operation) ≤ 3× the bandwidth time of its bytes at \(size)", met: ratio <= 3, figure: "\(fixed(ratio, 1))×")
    }

    // An update of 1% of the objects, by key, saved.
    let changed = stride(from: 0, to: count, by: 100).map { $0 }
    var start = ContinuousClock.now
    let updater = opened.newBackgroundContext()
    for number in changed {
        try updater.fetchFirst(FetchRequest("Person", predicate: .equal("key", .string(Person.key(number)))))?.setValue(.integer(7), forKey: "visits")
    }
    try await updater.save()
    let cairnUpdate = seconds(ContinuousClock.now - start)
    start = ContinuousClock.now
    try await pool.write { db in
        let statement = try db.cachedStatement(sql: "UPDATE person SET visits = 7 WHERE key = ?")
        for number in changed { try statement.execute(arguments: [Person.key(number)]) }
    }
    let grdbUpdate = seconds(ContinuousClock.now - start)
    compare("update 1% by key and save", cairn: 1 / cairnUpdate, grdb: 1 / grdbUpdate, unit: "saves of \(changed.count) changes")

    // Online compaction's longest save stall: steady saves of 10 updates while a compaction
    // (fast) writes the whole store into a base.
    let stop = StopFlag()
    let busy = Task { try await steadySaves(opened, count: count, until: stop, round: 0, counter: Counter()) }
    try await Task.sleep(for: .milliseconds(200))
    let onlineCompaction = try await opened.compact(level: .fast)
    try await Task.sleep(for: .milliseconds(200))
    stop.set()
    let stalls = try await busy.value
    report.row(
        "longest save during online compaction, \(size)", "\(fixed(stalls.max() ?? 0, 2)) ms",
        note:
            "durable saves of 10 updates 1 ms apart: \(stalls.count), median \(fixed(median(stalls), 2)) ms, during a fast compaction of \(onlineCompaction.objects) objects in \(fixed(seconds(onlineCompaction.duration), 2)) s"
    )

    try await opened.close()
    try pool.close()
    try? FileManager.default.removeItem(atPath: store)
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) }
    return (report, (fromBase.seconds, Double(fromBase.peakResidentBytes - baseline) / Double(count * dataBytesPerPerson)))
}

/// A Person's attribute bytes on average (``Person/dataSize`` of the first 10,000).
let dataBytesPerPerson = (0..<10_000).reduce(0) { $0 + Person(number: $1).dataSize } / 10_000

/// Bytes a second `memcpy` moves between two buffers of `bytes` (best of five): the bound a scan
/// of a column that size cannot beat by much.
func copyBandwidth(bytes: Int) -> Double {
    let source = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
    let destination = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
    defer {
        source.deallocate()
        destination.deallocate()
    }
    memset(source, 1, bytes)
    memset(destination, 0, bytes)
    var best = Double.infinity
    for _ in 0..<5 {
        let start = ContinuousClock.now
        memcpy(destination, source, bytes)
        best = min(best, seconds(ContinuousClock.now - start))
    }
    return Double(bytes) / best
}
