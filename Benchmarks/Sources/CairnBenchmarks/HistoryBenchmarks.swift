import Cairn
import CairnLog
import Foundation

/// Persistent history read back over a log of about 1 GiB: every transaction since the first,
/// with each change's values decoded, in log bytes per second and transactions per second,
/// next to a plain read of the same log's frames (decompressed and checked, nothing decoded).
///
/// The log: cycles of 200,000 people inserted in saves of 1,000, then changed in saves of
/// 10,000 (two values each), then deleted in one save, until the segments hold 1 GiB
/// (100 MiB with `--quick`).
func historyBenchmarks(_ initial: Report, root: String, quick: Bool) async throws -> Report {
    var report = initial
    let target: UInt64 = quick ? 100 << 20 : 1 << 30
    let path = freshStore(root, "history")
    var options = StoreOptions()
    options.automaticCompaction = .disabled
    var cycle = 0
    do {
        let store = try Store(at: path, model: try Person.model(), options: options)
        let cycleSize = 200_000
        while directoryBytes(path) < target {
            let first = cycle * cycleSize
            for offset in stride(from: 0, to: cycleSize, by: 1_000) {
                let rows = (first + offset..<first + offset + 1_000).map { Person(number: $0).row }
                try await store.batchInsert("Person", columns: Person.columns, rows: rows)
            }
            let context = store.newBackgroundContext(name: "scores")
            context.transactionAuthor = "benchmark"
            let people = try context.fetch(FetchRequest("Person"))
            for (index, person) in people.enumerated() {
                try person.setValue(.double(Double(index % 977) / 10), forKey: "score")
                try person.setValue(.integer(Int64(cycle)), forKey: "visits")
                if index % 10_000 == 9_999 { try await context.save() }
            }
            try await context.save()
            for person in people { try person.delete() }
            try await context.save()
            cycle += 1
        }
        try await store.close()
    }
    let logBytes = directoryBytes(path)
    let clock = ContinuousClock()
    var historyRuns: [Double] = []
    var decodedRuns: [Double] = []
    var frameRuns: [Double] = []
    var transactions = 0
    var changes = 0
    var readOnly = options
    readOnly.readOnly = true
    for _ in 0..<3 {
        // The frames alone (decompressed and checked): what any reader of the log pays.
        var logOptions = LogOptions()
        logOptions.readOnly = true
        let log = try Log.open(at: path, options: logOptions)
        var start = clock.now
        var frames = 0
        try log.records().forEach { _ in frames += 1 }
        frameRuns.append(seconds(clock.now - start))
        try? await log.close()

        let store = try Store(at: path, options: readOnly)
        // The transactions: who saved, when, with which token (their changes left undecoded).
        start = clock.now
        var reader = try store.historyReader(since: nil)
        transactions = 0
        var authored = 0
        while let transaction = try reader.next() {
            transactions += 1
            if transaction.author != nil { authored += 1 }
        }
        historyRuns.append(seconds(clock.now - start))
        // Every change with its values decoded.
        start = clock.now
        reader = try store.historyReader(since: nil)
        changes = 0
        var values = 0
        while let transaction = try reader.next() {
            let decoded = try transaction.changes
            changes += decoded.count
            for change in decoded { values += change.values.count }
        }
        decodedRuns.append(seconds(clock.now - start))
        precondition(transactions == frames && authored > 0 && values > changes)
        try await store.close()
    }
    let history = historyRuns.sorted()[1]
    let decoded = decodedRuns.sorted()[1]
    let frames = frameRuns.sorted()[1]
    func range(_ runs: [Double]) -> String {
        let rates = runs.map { Double(logBytes) / $0 / 1e9 }.sorted()
        return "\(fixed(rates[1], 2)) GB/s (\(fixed(rates[0], 2))–\(fixed(rates[2], 2)))"
    }
    report.row(
        "history since the first save over a \(fixed(Double(logBytes) / Double(1 << 30), 2)) GiB log: the transactions",
        "\(range(historyRuns)), \(grouped(Int(Double(transactions) / history))) transactions/s",
        note: "\(grouped(transactions)) transactions (LSN, time, author, context, token; changes decoded when asked for); 3 runs, median (range)")
    report.row(
        "the same, every change decoded with its values", "\(range(decodedRuns)), \(grouped(Int(Double(changes) / decoded))) changes/s",
        note: "\(grouped(changes)) changes (\(cycle) cycles of 200,000 inserts, updates of two values, deletes)")
    report.row("the same log's frames alone (decompressed, checked)", range(frameRuns), note: "the transactions take \(fixed(history / frames, 2))× their time")
    report.target("history read ≥ 1 GB/s of log", met: Double(logBytes) / history >= 1e9, figure: range(historyRuns))
    return report
}

/// A follower's lag: from a writer's acknowledged save (its `save()` returned) to the
/// follower's view holding it (``Store/init(followingAt:model:options:)``, woken by inotify),
/// one changed person per save, 100,000 people in the store (a follower in this process: the
/// same path through the files as from another).
func followerBenchmarks(_ initial: Report, root: String, quick: Bool) async throws -> Report {
    var report = initial
    let count = quick ? 10_000 : 100_000
    let path = freshStore(root, "follow")
    let writer = try Store(at: path, model: try Person.model())
    for offset in stride(from: 0, to: count, by: 10_000) {
        try await writer.batchInsert("Person", columns: Person.columns, rows: (offset..<min(count, offset + 10_000)).map { Person(number: $0).row })
    }
    let follower = try Store(followingAt: path)
    let context = writer.newBackgroundContext(name: "scores")
    let clock = ContinuousClock()
    var lags: [Double] = []
    for round in 0..<(quick ? 100 : 400) {
        let person = try context.fetchFirst(FetchRequest("Person", predicate: .equal("key", .string(Person.key((round * 7_919) % count)))))
        try person?.setValue(.double(Double(round) / 10), forKey: "score")
        try await context.save()
        let saved = clock.now
        let lsn = writer.lastSaveLSN
        // (Looked at without sleeping, yielding the core: the lag itself, not a sleep's.)
        while follower.lastSaveLSN < lsn && clock.now - saved < .seconds(5) { sched_yield() }
        lags.append(seconds(clock.now - saved))
        if round % 50 == 49 { try await Task.sleep(for: .milliseconds(5)) }
    }
    try await follower.close()
    try await writer.close()
    let sorted = lags.sorted()
    let median = sorted[sorted.count / 2]
    let p99 = sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
    report.row(
        "follower lag: a writer's acknowledged save → the follower's view (\(grouped(count)) people, one changed per save)",
        "median \(fixed(median * 1000, 3)) ms, 99th percentile \(fixed(p99 * 1000, 3)) ms",
        note: "\(lags.count) saves; range \(fixed(sorted[0] * 1000, 3))–\(fixed(sorted[sorted.count - 1] * 1000, 3)) ms")
    report.target("follower lag ≤ 10 ms median", met: median <= 0.010, figure: "\(fixed(median * 1000, 3)) ms")
    return report
}

/// The bytes of the files in `path`.
private func directoryBytes(_ path: String) -> UInt64 {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    return names.reduce(0) { total, name in
        total + ((try? FileManager.default.attributesOfItem(atPath: path + "/" + name)[.size] as? NSNumber)?.uint64Value ?? 0)
    }
}
