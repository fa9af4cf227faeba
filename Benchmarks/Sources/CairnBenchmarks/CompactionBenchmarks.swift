import Cairn
import CairnLog
import CairnMapping
import Foundation
import GRDB
import Synchronization

/// Compaction, opening from a base and backups (docs/COMPACTION.md): the size of a compacted
/// store against GRDB's SQLite file, the sqlite3 shell's and DuckDB's for the same records;
/// compaction throughput; opening from a base against replaying an insert-only log holding the
/// same live state; the longest save while an online compaction runs; a backup of a 1 GiB
/// store and an incremental one after 1% more.
func compactionBenchmarks(_ initial: Report, root: String, quick: Bool) async throws -> Report {
    // CAIRN_BENCH_PROFILE=open (compaction throughput and opening), open-base|open-log (below)
    // or stalls: one part alone.
    switch ProcessInfo.processInfo.environment["CAIRN_BENCH_PROFILE"] {
    case let profile? where profile.hasPrefix("open"): return try await compactionAndOpen(initial, root: root, quick: quick)
    case "stalls": return try await saveStalls(initial, root: root, quick: quick)
    default: break
    }
    var report = try await compactedSize(initial, root: root, quick: quick)
    report = try await compactionAndOpen(report, root: root, quick: quick)
    report = try await saveStalls(report, root: root, quick: quick)
    report = try await backups(report, root: root, quick: quick)
    return report
}

/// The bytes of a file, or of every file in a directory.
func bytesOnDisk(_ path: String) -> Int {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return 0 }
    guard isDirectory.boolValue else { return (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0 }
    return ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).reduce(0) { $0 + bytesOnDisk(path + "/" + $1) }
}

func megabytes(_ bytes: Int) -> String { "\(fixed(Double(bytes) / 1e6, 1)) MB" }

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

/// "low–high" of `values`, with `digits` decimals.
func spread(_ values: [Double], _ digits: Int) -> String {
    let sorted = values.sorted()
    return "\(fixed(sorted.first ?? 0, digits))–\(fixed(sorted.last ?? 0, digits))"
}

/// "median (low–high)" of `values` times `scale`, with `digits` decimals.
func medianAndSpread(_ values: [Double], scale: Double = 1, digits: Int = 2) -> String {
    let scaled = values.map { $0 * scale }
    return "\(fixed(median(scaled), digits)) (\(spread(scaled, digits)))"
}

/// 200,000 flat person records (the import benchmark's JSON) in each store, and the size of
/// its files afterwards.
private func compactedSize(_ initial: Report, root: String, quick: Bool) async throws -> Report {
    var report = initial
    let count = quick ? 50_000 : 200_000
    let file = root + "/people.json"
    let jsonBytes = try PersonJSON.write(count: count, to: file)

    let directory = freshStore(root, "size-cairn")
    let model = try Person.model()
    let store = try Store(at: directory, model: model)
    _ = try await store.importJSON(contentsOf: URL(fileURLWithPath: file), into: "Person", mapping: try Mapping(model: model))
    let logged = bytesOnDisk(directory)
    let fast = try await store.compact(level: .fast)
    let fastBytes = bytesOnDisk(directory)
    let high = try await store.compact(level: .high)
    let highBytes = bytesOnDisk(directory)
    try await store.close()
    precondition(fast.objects == count && high.objects == count)

    // GRDB: the import benchmark's peer (JSONDecoder, an upsert per record), then the WAL
    // checkpointed into the database file.
    let grdbPath = root + "/size-grdb.sqlite"
    let queue = try grdbQueue(grdbPath)
    try PersonJSON.grdbImport(file, into: queue)
    try await queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
    try queue.close()
    let grdbBytes = bytesOnDisk(grdbPath) + bytesOnDisk(grdbPath + "-wal")

    var peers = ""
    var duckBytes: Int?
    let repository = FileManager.default.currentDirectoryPath
    if FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3") {
        let database = root + "/size-sqlite.db"
        let run = try runProcess("/bin/sh", [repository + "/Benchmarks/peers/sqlite3-import.sh", file, database])
        if run.status == 0 { peers += ", sqlite3 shell \(megabytes(bytesOnDisk(database) + bytesOnDisk(database + "-wal")))" }
    }
    if let python = pythonWithDuckDB() {
        let database = root + "/size-duck.duckdb"
        let run = try runProcess(python, [repository + "/Benchmarks/peers/duckdb-import.py", file, database])
        if run.status == 0 {
            duckBytes = bytesOnDisk(database) + bytesOnDisk(database + ".wal")
            peers += ", DuckDB \(megabytes(duckBytes ?? 0))"
        }
    }
    report.row(
        "store size, \(count) person records", "Cairn log \(megabytes(logged)), compacted fast \(megabytes(fastBytes)), high \(megabytes(highBytes))",
        note: "GRDB \(megabytes(grdbBytes))\(peers); JSON \(megabytes(jsonBytes))")
    let ratio = Double(highBytes) / Double(grdbBytes)
    report.target("size after high compaction ≤ 0.5× GRDB's SQLite file", met: ratio <= 0.5, figure: "\(fixed(ratio, 2))×")
    if let duckBytes {
        report.target(
            "size after high compaction smaller than DuckDB's file", met: highBytes < duckBytes,
            figure: "\(megabytes(highBytes)) vs \(megabytes(duckBytes))")
    }
    return report
}

/// A store of 1M people batch-inserted in saves of 10k (an insert-only log), and two copies
/// compacted fast and high: compaction throughput, then opening each, alternating.
private func compactionAndOpen(_ initial: Report, root: String, quick: Bool) async throws -> Report {
    var report = initial
    let (replayed, model, count) = try await peopleStore(root, "open-log", quick: quick)
    let runs = quick ? 3 : 5
    // CAIRN_BENCH_PROFILE=open-base opens a fast base ten times (`CAIRN_BENCH_ROUNDS`: that many) for `perf record`;
    // open-log replays the insert-only log ten times.
    if let profile = ProcessInfo.processInfo.environment["CAIRN_BENCH_PROFILE"], profile.hasPrefix("open-") {
        if profile == "open-base" {
            let store = try Store(at: replayed, model: model)
            try await store.compact(level: .fast)
            try await store.close()
        }
        for _ in 0..<(ProcessInfo.processInfo.environment["CAIRN_BENCH_ROUNDS"].flatMap(Int.init) ?? 10) {
            let start = ContinuousClock.now
            try await Store(at: replayed, model: model).close()
            print("\(profile): \(fixed(Double(count) / seconds(ContinuousClock.now - start) / 1e6, 2))M objects/s")
        }
        return report
    }

    // Throughput: the same live state compacted again and again (each writes a whole base).
    var rates: [CompactionLevel: [Double]] = [:]
    var liveBytes: UInt64 = 0
    let compacted: [CompactionLevel: String] = [.fast: root + "/open-base-fast", .high: root + "/open-base-high"]
    for path in compacted.values {
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: replayed, toPath: path)
    }
    let stores = try compacted.mapValues { try Store(at: $0, model: model) }
    for _ in 0..<runs {
        for level in [CompactionLevel.fast, .high] {
            guard let store = stores[level] else { continue }
            let compaction = try await store.compact(level: level)
            liveBytes = compaction.liveBytes
            rates[level, default: []].append(Double(compaction.liveBytes) / 1e6 / seconds(compaction.duration))
        }
    }
    for store in stores.values { try await store.close() }
    for level in [CompactionLevel.fast, .high] {
        let values = rates[level] ?? [0]
        report.row(
            "compaction \(level == .fast ? "fast (LZ4)" : "high (LZ4-HC)"), \(count) objects",
            "\(fixed(median(values), 0)) MB/s of live state (\(spread(values, 0)))",
            note: "\(fixed(Double(liveBytes) / 1e6, 1)) MB live, base \(megabytes(bytesOnDisk(compacted[level] ?? "")))")
    }

    // Opening: the insert-only log replayed, the fast base, the high base; alternating.
    var opens: [String: [Double]] = [:]
    let kinds = [("log", replayed), ("fast", compacted[.fast] ?? ""), ("high", compacted[.high] ?? "")]
    for _ in 0..<runs {
        for (kind, path) in kinds {
            let start = ContinuousClock.now
            let store = try Store(at: path, model: model)
            opens[kind, default: []].append(Double(count) / seconds(ContinuousClock.now - start))
            try await store.close()
        }
    }
    let log = median(opens["log"] ?? [0])
    for (kind, _) in kinds {
        let values = opens[kind] ?? [0]
        report.row(
            "open to a full view, \(count) objects, \(kind == "log" ? "replaying an insert-only log" : "from a \(kind) base")",
            "\(fixed(median(values) / 1e6, 2))M objects/s (\(spread(values.map { $0 / 1e6 }, 2))M)",
            note: kind == "log" ? "\(megabytes(bytesOnDisk(replayed))) of log" : "\(fixed(median(values) / log, 2))× the log")
    }
    let fromBase = median(opens["fast"] ?? [0]) / log
    let ratios = zip(opens["fast"] ?? [], opens["log"] ?? []).map { $0 / $1 }
    report.target("open from a base ≥ 1.5× replaying the same live state", met: fromBase >= 1.5, figure: "\(fixed(fromBase, 2))× (\(spread(ratios, 2))×)")
    for path in [replayed] + compacted.values { try? FileManager.default.removeItem(atPath: path) }
    return report
}

/// A store of 1M people (100k quick) batch-inserted in saves of 10k: an insert-only log.
func peopleStore(_ root: String, _ name: String, quick: Bool) async throws -> (path: String, model: Model, count: Int) {
    let count = quick ? 100_000 : 1_000_000
    let model = try Person.model()
    let directory = freshStore(root, name)
    try await batchInsertPeople(count: count, into: directory, model: model)
    return (directory, model, count)
}

func batchInsertPeople(count: Int, into directory: String, model: Model, batch: Int = 10_000) async throws {
    let store = try Store(at: directory, model: model)
    for offset in stride(from: 0, to: count, by: batch) {
        try await store.batchInsert("Person", columns: Person.columns, rows: (offset..<min(count, offset + batch)).map { Person(number: $0).row })
    }
    try await store.close()
}

/// Steady durable saves (10 updated objects each, 1 ms apart) into a 1M-object store: the
/// longest save while nothing else runs, then while compactions (fast, then high) run.
private func saveStalls(_ initial: Report, root: String, quick: Bool) async throws -> Report {
    var report = initial
    let (directory, model, count) = try await peopleStore(root, "stalls", quick: quick)
    var options = StoreOptions()
    options.automaticCompaction = .disabled
    let store = try Store(at: directory, model: model, options: options)

    let saved = Counter()
    func saves(until stop: StopFlag, round: Int) async throws -> [Double] {
        try await steadySaves(store, count: count, until: stop, round: round, counter: saved)
    }

    var quiet: [Double] = []
    var during: [Double] = []
    var compactions: [Double] = []
    for round in 0..<(quick ? 2 : 3) {
        // Without compaction: the same number of seconds as the compaction below takes.
        let idle = StopFlag()
        let idleSaves = Task { try await saves(until: idle, round: round) }
        try await Task.sleep(for: .seconds(quick ? 1 : 3))
        idle.set()
        quiet += try await idleSaves.value

        for level in [CompactionLevel.fast, .high] {
            let stop = StopFlag()
            let busy = Task { try await saves(until: stop, round: round) }
            try await Task.sleep(for: .milliseconds(200))
            let compaction = try await store.compact(level: level)
            compactions.append(seconds(compaction.duration))
            try await Task.sleep(for: .milliseconds(200))
            stop.set()
            during += try await busy.value
        }
    }
    try await store.close()
    try? FileManager.default.removeItem(atPath: directory)
    func percentile(_ values: [Double], _ fraction: Double) -> Double { values.sorted()[min(values.count - 1, Int(Double(values.count) * fraction))] }
    report.row(
        "durable save of 10 updates, nothing else running", "longest \(fixed(quiet.max() ?? 0, 2)) ms, median \(fixed(median(quiet), 2)) ms",
        note: "99.9th percentile \(fixed(percentile(quiet, 0.999), 2)) ms; \(quiet.count) saves")
    report.row(
        "durable save of 10 updates during online compaction of \(count) objects",
        "longest \(fixed(during.max() ?? 0, 2)) ms, median \(fixed(median(during), 2)) ms",
        note:
            "99.9th percentile \(fixed(percentile(during, 0.999), 2)) ms; \(during.count) saves during \(compactions.count) compactions of \(spread(compactions, 2)) s"
    )
    let longest = during.max() ?? 0
    report.target("longest save during online compaction ≤ 10 ms", met: longest <= 10, figure: "\(fixed(longest, 2)) ms")
    return report
}

/// Durable saves of 10 updated people each (their `visits`, by key), 1 ms apart, into a store of
/// `count` people, until `stop` is set; returns each save's duration in milliseconds. Every save
/// sets values no earlier save set (a save that changes nothing writes nothing).
func steadySaves(_ store: Store, count: Int, until stop: StopFlag, round: Int, counter: Counter) async throws -> [Double] {
    var durations: [Double] = []
    var index = round * 7919
    while !stop.isSet {
        let context = store.newBackgroundContext()
        let number = counter.next()
        for _ in 0..<10 {
            index = (index &+ 104_729) % count
            try context.fetchFirst(FetchRequest("Person", predicate: .equal("key", .string(Person.key(index)))))?.setValue(
                .integer(Int64(1000 + number)), forKey: "visits")
        }
        let start = ContinuousClock.now
        try await context.save()
        durations.append(seconds(ContinuousClock.now - start) * 1000)
        try await Task.sleep(for: .milliseconds(1))
    }
    return durations
}

/// Numbers handed out in order, from any task.
final class Counter: Sendable {
    private let value = Mutex(0)
    func next() -> Int {
        value.withLock {
            $0 += 1; return $0
        }
    }
}

/// A flag one task sets and another reads.
final class StopFlag: Sendable {
    private let flag = Mutex(false)
    var isSet: Bool { flag.withLock { $0 } }
    func set() { flag.withLock { $0 = true } }
}

/// A store of about 1 GiB (4 KiB documents of random bytes), backed up while open, then again
/// after 1% more data: into a directory on the same file system (hard links) and into one on
/// tmpfs (copies), beside `cp -r` of the store to tmpfs.
private func backups(_ initial: Report, root: String, quick: Bool) async throws -> Report {
    var report = initial
    let documentSize = 4096
    let count = (quick ? 128 << 20 : 1 << 30) / documentSize
    let model = try Model {
        Entity("Document") {
            Attribute("name", .string, optional: false)
            Attribute("body", .binary)
            Unique("name")
        }
    }
    let directory = freshStore(root, "backup-source")
    var options = StoreOptions()
    options.automaticCompaction = .disabled
    options.durability = .none
    let store = try Store(at: directory, model: model, options: options)
    // Random bytes (LZ4 leaves them as they are); each document a slice at a random place.
    var state: UInt64 = 0x2545_F491_4F6C_DD1D
    var noise = [UInt8](repeating: 0, count: 64 << 20)
    for index in 0..<noise.count {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        noise[index] = UInt8(truncatingIfNeeded: state >> 32)
    }
    func insert(_ range: Range<Int>) async throws {
        for offset in stride(from: range.lowerBound, to: range.upperBound, by: 1000) {
            let rows = (offset..<min(range.upperBound, offset + 1000)).map { number -> [Value] in
                let start = number &* 2_654_435_761 % (noise.count - documentSize)
                return [.string("document-\(number)"), .binary(Array(noise[start..<start + documentSize]))]
            }
            try await store.batchInsert("Document", columns: ["name", "body"], rows: rows)
        }
    }
    try await insert(0..<count)
    let sourceBytes = bytesOnDisk(directory)

    let tmpfs = "/dev/shm/cairn-bench-backup"
    let hasTmpfs = FileManager.default.fileExists(atPath: "/dev/shm")
    let destinations = [("same file system", root + "/backup-linked")] + (hasTmpfs ? [("tmpfs", tmpfs)] : [])
    for (_, path) in destinations { try? FileManager.default.removeItem(atPath: path) }
    defer { for (_, path) in destinations { try? FileManager.default.removeItem(atPath: path) } }
    var full: [String: (Double, BackupReport)] = [:]
    for (place, path) in destinations {
        let start = ContinuousClock.now
        let backup = try await store.backup(to: path)
        full[place] = (seconds(ContinuousClock.now - start), backup)
    }
    try await insert(count..<(count + count / 100))
    var incremental: [String: (Double, BackupReport)] = [:]
    for (place, path) in destinations {
        let start = ContinuousClock.now
        let backup = try await store.backup(to: path)
        incremental[place] = (seconds(ContinuousClock.now - start), backup)
    }
    try await store.close()
    var copy: Double?
    if hasTmpfs {
        let target = tmpfs + "-cp"
        try? FileManager.default.removeItem(atPath: target)
        let run = try runProcess("/bin/cp", ["-r", directory, target])
        if run.status == 0 { copy = run.seconds }
        try? FileManager.default.removeItem(atPath: target)
    }
    try? FileManager.default.removeItem(atPath: directory)
    for (place, _) in destinations {
        guard let (time, backup) = full[place], let (again, more) = incremental[place] else { continue }
        report.row(
            "backup of a \(fixed(Double(sourceBytes) / Double(1 << 30), 2)) GiB store, \(place)",
            "\(fixed(time, 3)) s; after 1% more data \(fixed(again, 3)) s",
            note:
                "first: \(backup.linked.count) files linked, \(megabytes(Int(backup.bytesCopied))) copied; incremental: \(megabytes(Int(more.bytesCopied))) copied, \(more.unchanged.count) files unchanged"
                + (place == "tmpfs" ? copy.map { "; cp -r of the store to tmpfs \(fixed($0, 3)) s" } ?? "" : ""))
    }
    return report
}
