import Cairn
import CairnLog
import Foundation
import GRDB
import Synchronization

/// Fetched results of 1M people sorted by score: the time from a save's return to the update
/// that says what it changed, for a save of one changed person and for a save of 10k new ones,
/// against GRDB's `ValueObservation` of the same query (which fetches the whole result again).
func observationBenchmarks(_ initial: Report, root: String, quick: Bool) async throws -> Report {
    var report = initial
    let count = quick ? 100_000 : 1_000_000
    let people = (0..<count).map(Person.init(number:))
    let clock = ContinuousClock()

    // The same people in a Cairn store and a GRDB database.
    let path = freshStore(root, "observe")
    do {
        let store = try Store(at: path, model: try Person.model())
        for offset in stride(from: 0, to: count, by: 10_000) {
            try await store.batchInsert("Person", columns: Person.columns, rows: people[offset..<min(count, offset + 10_000)].map(\.row))
        }
        try await store.close()
    }
    let grdbPath = root + "/observe.sqlite"
    try? FileManager.default.removeItem(atPath: grdbPath)
    let pool = try DatabasePool(path: grdbPath)
    try await pool.write { db in
        try Person.createTable(db)
        try db.execute(sql: "CREATE INDEX person_score ON person(score)")
        let statement = try db.makeStatement(sql: Person.insertSQL)
        for person in people { try statement.execute(arguments: person.arguments) }
    }

    let store = try Store(at: path, model: try Person.model())
    var start = clock.now
    let controller = try FetchedResultsController(FetchRequest("Person", sortKeys: [SortKey("score")]), in: store)
    let firstFetch = seconds(clock.now - start)
    let arrived = Mutex<[LSN: ContinuousClock.Instant]>([:])
    let observation = controller.observe { update in
        let now = ContinuousClock.now
        arrived.withLock { $0[update.results.lsn] = now }
    }
    /// Waits for the update of the save at `lsn` and returns the time from `saved` to it.
    func latency(_ lsn: LSN, after saved: ContinuousClock.Instant) async throws -> Double {
        for _ in 0..<600_000 {
            if let at = arrived.withLock({ $0[lsn] }) { return seconds(at - saved) }
            try await Task.sleep(for: .microseconds(50))
        }
        return .infinity
    }

    // One person's score changes (it moves in the order), one save each.
    let context = store.newBackgroundContext(name: "scores")
    var single: [Double] = []
    var saves: [Double] = []
    var total: [Double] = []
    for round in 0..<(quick ? 20 : 50) {
        let number = (round * 7_919) % count
        let person = try context.fetchFirst(FetchRequest("Person", predicate: .equal("key", .string(Person.key(number)))))
        try person?.setValue(.double(Double((number + 5_003 * (round + 1)) % 10_000) / 100), forKey: "score")
        start = clock.now
        try await context.save()
        let saved = clock.now
        saves.append(seconds(saved - start))
        single.append(try await latency(store.lastSaveLSN, after: saved))
        total.append(saves[saves.count - 1] + single[single.count - 1])
    }

    // 10k new people in one save.
    let inserter = store.newBackgroundContext(name: "inserts")
    for number in count..<(count + 10_000) { try Person(number: number).insert(into: inserter) }
    start = clock.now
    try await inserter.save()
    let saved = clock.now
    let bigSave = seconds(saved - start)
    let bigUpdate = try await latency(store.lastSaveLSN, after: saved)
    let finalCount = controller.results.count
    observation.cancel()
    try await store.close()

    // GRDB: the same query observed; each change fetches it all again.
    var grdb: [Double] = []
    let values = Mutex<(count: Int, at: ContinuousClock.Instant?)>((0, nil))
    let grdbObservation = ValueObservation.tracking { db in try String.fetchAll(db, sql: "SELECT key FROM person ORDER BY score, id") }
    let cancellable = grdbObservation.start(in: pool, scheduling: .async(onQueue: DispatchQueue(label: "grdb observation"))) { _ in
    } onChange: { _ in
        let now = ContinuousClock.now
        values.withLock { $0 = ($0.count + 1, now) }
    }
    for _ in 0..<600_000 where values.withLock({ $0.count }) == 0 { try await Task.sleep(for: .microseconds(100)) }
    for round in 0..<3 {
        let seen = values.withLock { $0.count }
        // (From the write's start: the new value may come before the write returns.)
        start = clock.now
        try await pool.write { db in
            try db.execute(sql: "UPDATE person SET score = ? WHERE key = ?", arguments: [Double(round) / 7, Person.key(round * 101)])
        }
        for _ in 0..<600_000 where values.withLock({ $0.count }) == seen { try await Task.sleep(for: .microseconds(100)) }
        grdb.append(values.withLock { $0.at.map { seconds($0 - start) } ?? .infinity })
    }
    cancellable.cancel()
    try pool.close()

    func milliseconds(_ values: [Double]) -> String {
        let sorted = values.sorted()
        return "\(fixed(sorted[sorted.count / 2] * 1000, 3)) ms (\(fixed((sorted.first ?? 0) * 1000, 3))–\(fixed((sorted.last ?? 0) * 1000, 3)))"
    }
    let sortedSingle = single.sorted()
    let median = sortedSingle[sortedSingle.count / 2]
    let p99 = sortedSingle[min(sortedSingle.count - 1, sortedSingle.count * 99 / 100)]
    let grdbMedian = grdb.sorted()[grdb.count / 2]
    let totalMedian = total.sorted()[total.count / 2]
    report.row("fetched results of \(grouped(count)) people sorted by score: first fetch", "\(fixed(firstFetch, 2)) s")
    report.row(
        "one changed person: save return → its update", "\(milliseconds(single)), 99th percentile \(fixed(p99 * 1000, 3)) ms",
        note: "the save itself \(milliseconds(saves))")
    report.row(
        "one changed person: save start → its update, against GRDB ValueObservation: write start → new value",
        "Cairn \(milliseconds(total)), GRDB \(milliseconds(grdb))", note: "Cairn \(fixed(grdbMedian / totalMedian, 0))× as fast")
    report.row(
        "10,000 new people in one save: save return → update", "\(fixed(bigUpdate * 1000, 1)) ms",
        note: "the save itself \(fixed(bigSave * 1000, 1)) ms; \(grouped(finalCount)) results")
    report.compare("Fetched results, \(grouped(count)) sorted", "one change's update", ratio: grdbMedian / totalMedian)
    report.target("change set for one changed object of a \(grouped(count))-object sorted result ≤ 1 ms", met: median <= 0.001, figure: milliseconds(single))
    return report
}
