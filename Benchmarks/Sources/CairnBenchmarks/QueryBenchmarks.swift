import Cairn
import Foundation
import GRDB

/// Queries against GRDB on the same Person objects in the same run, GRDB with SQL indexes and
/// (`NOT INDEXED`) without: unique-key lookup, equality on an indexed attribute, a range on an
/// indexed attribute, a full scan with CONTAINS[c], a sort of 100k results, an aggregate.
func queryBenchmarks(_ initial: Report, root: String, quick: Bool) async throws -> Report {
    var report = initial
    let count = quick ? 100_000 : 1_000_000
    let people = (0..<count).map(Person.init(number:))
    report.row("query data set", "\(count) Person objects", note: "indexed: key (unique), visits, born")

    // Build both stores.
    let cairnPath = freshStore(root, "query-cairn")
    let model = try Person.model(indexed: true)
    do {
        let store = try Store(at: cairnPath, model: model)
        for offset in stride(from: 0, to: count, by: 10_000) {
            let context = store.newBackgroundContext()
            for person in people[offset..<min(count, offset + 10_000)] { try person.insert(into: context) }
            try await context.save()
        }
        try await store.close()
    }
    let grdbPath = root + "/query-grdb.sqlite"
    try? FileManager.default.removeItem(atPath: grdbPath)
    let pool = try DatabasePool(path: grdbPath)
    try await pool.write { db in
        try Person.createTable(db)
        let statement = try db.cachedStatement(sql: Person.insertSQL)
        for person in people { try statement.execute(arguments: person.arguments) }
        try db.execute(sql: "CREATE INDEX person_visits ON person(visits); CREATE INDEX person_born ON person(born); ANALYZE")
    }
    let store = try Store(at: cairnPath, model: model)
    let view = store.viewContext
    let clock = ContinuousClock()

    func rate(_ repeats: Int, _ body: (Int) throws -> Void) rethrows -> Double { try runsPerSecond(repeats, body) }
    func rate(_ repeats: Int, _ body: @escaping @Sendable (Database, Int) throws -> Void) async throws -> Double {
        try await runsPerSecond(repeats, on: pool, body)
    }
    func compare(_ name: String, _ cairn: Double, _ grdb: Double, unit: String, note: String = "", chartName: String? = nil) {
        report.compare("Queries, \(grouped(count)) objects", chartName ?? name, ratio: cairn / grdb)
        report.row(
            name, "Cairn \(fixed(cairn, 1))/s, GRDB \(fixed(grdb, 1))/s", note: "\(fixed(cairn / grdb, 2))×" + (note.isEmpty ? "" : "; " + note) + " (\(unit))")
    }

    // For profiling: CAIRN_BENCH_PROFILE=scan|aggregate|sort|equal|lookup runs that query 200 times
    // (CAIRN_BENCH_PROFILE_REPEATS times) first.
    if let profile = ProcessInfo.processInfo.environment["CAIRN_BENCH_PROFILE"] {
        let repeats = ProcessInfo.processInfo.environment["CAIRN_BENCH_PROFILE_REPEATS"].flatMap { Int($0) } ?? 200
        for _ in 0..<repeats {
            switch profile {
            case "scan": _ = try PersonQueries.scan(view)
            case "aggregate": _ = try PersonQueries.aggregate(view)
            case "equal": _ = try view.fetch(FetchRequest("Person", predicate: .equal("visits", .integer(7))))
            case "lookup":
                for index in 0..<1000 { _ = try view.fetchFirst(FetchRequest("Person", predicate: .equal("key", .string(Person.key(index))))) }
            default: _ = try PersonQueries.sort(view)
            }
        }
    }

    // 1. Lookup by unique key.
    let lookups = quick ? 20_000 : 100_000
    let cairnUnique = try rate(lookups) { index in try PersonQueries.lookup(view, index, count: count) }
    let grdbUnique = try await rate(lookups) { db, index in try PersonQueries.lookup(db, index, count: count) }
    compare("lookup by unique key", cairnUnique, grdbUnique, unit: "lookups")
    report.row(
        "one random read of memory", "\(fixed(randomReadLatency(bytes: 128 << 20), 1)) ns",
        note: "dependent reads in 128 MiB; 50× GRDB's lookup leaves \(fixed(1e9 / (50 * grdbUnique), 1)) ns a lookup")

    // 2. Equality on an indexed attribute (visits: 500 values, about count/500 objects each).
    let equalities = quick ? 50 : 200
    var matched = 0
    let cairnEqual = try rate(equalities) { index in
        matched = try view.fetch(FetchRequest("Person", predicate: .equal("visits", .integer(Int64(index % 500))))).count
    }
    let grdbEqual = try await rate(equalities) { db, index in
        _ = try Person.fetchAll(db.cachedStatement(sql: "SELECT * FROM person WHERE visits = ?"), arguments: [index % 500])
    }
    let grdbEqualScan = try await rate(max(2, equalities / 20)) { db, index in
        _ = try Person.fetchAll(db.cachedStatement(sql: "SELECT * FROM person NOT INDEXED WHERE visits = ?"), arguments: [index % 500])
    }
    compare("equality on an indexed attribute, with index", cairnEqual, grdbEqual, unit: "queries of \(matched) objects")
    compare("equality, GRDB without index", cairnEqual, grdbEqualScan, unit: "queries", chartName: "equality, the peer without index")

    // 3. A range on an indexed attribute (born: about 1% of the objects). Births spread over
    // `count × 997` seconds from -6e8 (1e9 of them for 1M objects, 1e8 with --quick).
    let span = quick ? Double(count) * 997 / 100 : 12_000_000
    let ranges = quick ? 20 : 50
    let cairnRange = try rate(ranges) { index in matched = try PersonQueries.range(view, index, span: span) }
    let grdbRange = try await rate(ranges) { db, index in try PersonQueries.range(db, index, span: span) }
    compare("range on an indexed attribute, with index", cairnRange, grdbRange, unit: "queries of \(matched) objects")

    // 4. A full scan with CONTAINS[c] (counted).
    let scans = quick ? 5 : 5
    var scanTimes: [Double] = []
    let cairnScan = try rate(scans) { _ in
        let start = clock.now
        matched = try PersonQueries.scan(view)
        scanTimes.append(seconds(clock.now - start) * 1000)
    }
    let grdbScan = try await rate(scans) { db, _ in try PersonQueries.scan(db) }
    compare(
        "full scan, email CONTAINS[c], counted", cairnScan, grdbScan, unit: "scans of \(count), \(matched) match",
        note: "Cairn's scans took " + scanTimes.map { fixed($0, 1) }.joined(separator: ", ") + " ms")

    // 5. A sort of 100k results.
    let sorts = quick ? 3 : 3
    let cairnSort = try rate(sorts) { _ in matched = try PersonQueries.sort(view) }
    let grdbSort = try await rate(sorts) { db, _ in try PersonQueries.sort(db) }
    compare("sort of the objects with visits < 50 by score, key", cairnSort, grdbSort, unit: "sorts of \(matched) (ids only)")

    // 6. An aggregate (scan).
    let aggregates = 5
    var average = Value.null
    let cairnAggregate = try rate(aggregates) { _ in average = try PersonQueries.aggregate(view) }
    let grdbAggregate = try await rate(aggregates) { db, _ in try PersonQueries.aggregate(db) }
    compare("aggregate: average score of active people", cairnAggregate, grdbAggregate, unit: "aggregates; \(average)")
    try await store.close()
    try pool.close()

    report.target("query: unique-key lookup ≥ 50× GRDB", met: cairnUnique >= 50 * grdbUnique, figure: "\(fixed(cairnUnique / grdbUnique, 1))×")
    report.target("query: indexed equality ≥ 10× GRDB with index", met: cairnEqual >= 10 * grdbEqual, figure: "\(fixed(cairnEqual / grdbEqual, 2))×")
    report.target("query: full scan with CONTAINS[c] ≥ 5× GRDB without index", met: cairnScan >= 5 * grdbScan, figure: "\(fixed(cairnScan / grdbScan, 2))×")
    report.target("query: aggregate ≥ 5× GRDB without index", met: cairnAggregate >= 5 * grdbAggregate, figure: "\(fixed(cairnAggregate / grdbAggregate, 2))×")
    report.target("query: sort of 100k results ≥ 5× GRDB without index", met: cairnSort >= 5 * grdbSort, figure: "\(fixed(cairnSort / grdbSort, 2))×")
    return report
}
