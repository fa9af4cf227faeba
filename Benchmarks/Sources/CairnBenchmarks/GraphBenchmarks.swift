import Cairn
import CairnLog
import Foundation
import GRDB

/// The object graph against GRDB on the same data in the same run: inserts in durable saves of
/// 10k, reopening to a full view, memory per object, lookups by unique key, updating 10%.
func graphBenchmarks(_ initial: Report, root: String, quick: Bool) async throws -> Report {
    var report = initial
    let count = quick ? 100_000 : 1_000_000
    let batch = 10_000
    let people = (0..<count).map(Person.init(number:))
    let dataBytes = people.reduce(0) { $0 + $1.dataSize }
    report.row("graph data set", "\(count) Person objects", note: "10 attributes, unique key; \(fixed(Double(dataBytes) / 1_048_576, 1)) MiB of attribute data")

    // Cairn
    let onlyCairn = CommandLine.arguments.contains("--only-cairn")
    let cairnPath = freshStore(root, "graph-cairn")
    let model = try Person.model()
    let clock = ContinuousClock()
    let profile = ProcessInfo.processInfo.environment["CAIRN_BENCH_PROFILE"]
    var start = clock.now
    var makingTimes: [Duration] = [], savingTimes: [Duration] = []  // per save of `batch` objects
    if profile != "batch", profile != "update" {
        let store = try Store(at: cairnPath, model: model)
        for offset in stride(from: 0, to: count, by: batch) {
            let context = store.newBackgroundContext()
            let making = clock.now
            for person in people[offset..<min(count, offset + batch)] { try person.insert(into: context) }
            let saving = clock.now
            try await context.save()
            makingTimes.append(saving - making)
            savingTimes.append(clock.now - saving)
        }
        try await store.close()
    }
    let cairnInsert = Double(count) / seconds(clock.now - start)
    // For profiling the inserts alone: CAIRN_BENCH_PROFILE=insert stops here.
    if profile == "insert" {
        func median(_ times: [Duration]) -> String { "\(fixed(seconds(times.sorted()[times.count / 2]) * 1000, 2)) ms" }
        print("insert \(Int(cairnInsert)) objects/s; per \(batch) objects, median: making them \(median(makingTimes)), saving \(median(savingTimes))")
        return initial
    }

    // The same objects through a batch insert (no managed objects), into a store of their own.
    let batchPath = freshStore(root, "graph-cairn-batch")
    start = clock.now
    do {
        let store = try Store(at: batchPath, model: model)
        for offset in stride(from: 0, to: count, by: batch) {
            try await store.batchInsert("Person", columns: Person.columns, rows: people[offset..<min(count, offset + batch)].map(\.row))
        }
        try await store.close()
    }
    let cairnBatchInsert = Double(count) / seconds(clock.now - start)
    // For profiling the batch inserts alone: CAIRN_BENCH_PROFILE=batch skips the managed objects.
    if profile == "batch" {
        print("batch insert \(Int(cairnBatchInsert)) objects/s")
        return initial
    }
    // For profiling updates alone: CAIRN_BENCH_PROFILE=update updates 10% of the batch-inserted
    // store five times, each in one save, and prints each rate.
    if profile == "update" {
        let store = try Store(at: batchPath, model: model)
        for round in 0..<(ProcessInfo.processInfo.environment["CAIRN_BENCH_ROUNDS"].flatMap(Int.init) ?? 5) {
            let started = clock.now
            let saving = try await updateTenPercent(store, count: count, round: round)
            let total = clock.now - started
            print(
                "update \(Int(Double(count / 10) / seconds(total))) objects/s (finding and setting \(fixed(seconds(saving - started), 3)) s, saving \(fixed(seconds(total - (saving - started)), 3)) s)"
            )
        }
        try await store.close()
        return initial
    }
    try? FileManager.default.removeItem(atPath: batchPath)
    let logBytes = try LogInspection.inspect(directory: cairnPath).rawBytes  // uncompressed change records

    // For profiling replay alone: CAIRN_BENCH_REOPENS=N opens the store N more times first.
    for _ in 0..<(ProcessInfo.processInfo.environment["CAIRN_BENCH_REOPENS"].flatMap(Int.init) ?? 0) {
        let opened = clock.now
        try await Store(at: cairnPath, model: model).close()
        print("reopen \(Int(Double(count) / seconds(clock.now - opened))) objects/s")
    }
    // Reopening is timed three times (this VM's speed varies from one second to the next); the
    // median counts, the last open stays for what follows.
    // The memory a store adds is measured on the first open. Each store is closed and let go
    // of before the next opens (left to the end of the function, two stores would still hold
    // their memory while the third is built).
    var cairnReopens: [Double] = []
    let heapBefore = heapInUse()
    var memoryPerObject = 0.0
    do {
        start = clock.now
        let first = try Store(at: cairnPath, model: model)
        cairnReopens.append(Double(count) / seconds(clock.now - start))
        let heapAfter = heapInUse()
        memoryPerObject = Double(heapAfter - heapBefore) / Double(count)
        try await first.close()
    }
    do {
        start = clock.now
        let second = try Store(at: cairnPath, model: model)
        cairnReopens.append(Double(count) / seconds(clock.now - start))
        try await second.close()
    }
    start = clock.now
    let store = try Store(at: cairnPath, model: model)
    cairnReopens.append(Double(count) / seconds(clock.now - start))
    let cairnReopen = cairnReopens.sorted()[1]

    let lookups = quick ? 20_000 : 100_000
    let view = store.viewContext
    var found = 0
    start = clock.now
    for index in 0..<lookups {
        let key = Person.key(index &* 7919 % count)
        if try view.fetchFirst(FetchRequest("Person", predicate: .equal("key", .string(key)))) != nil { found += 1 }
    }
    let cairnLookup = Double(lookups) / seconds(clock.now - start)
    precondition(found == lookups)
    // As many other keys, in batches of 1,000 (`fetch(_:key:in:)`, an import's lookup before an
    // upsert): keys the loop above did not bring into the caches.
    found = 0
    start = clock.now
    for batch in stride(from: lookups, to: 2 * lookups, by: 1_000) {
        let keys = (batch..<min(2 * lookups, batch + 1_000)).map { Value.string(Person.key($0 &* 7919 % count)) }
        found += try view.fetch("Person", key: "key", in: keys).count { $0 != nil }
    }
    let cairnBatchLookup = Double(lookups) / seconds(clock.now - start)
    precondition(found == lookups)

    // The floor of any lookup in this loop: making the key's string, then that plus a Swift
    // Dictionary lookup among all the keys (no store, no object).
    var checksum = 0
    start = clock.now
    for index in 0..<lookups { checksum &+= Person.key(index &* 7919 % count).utf8.count }
    let keyStrings = Double(lookups) / seconds(clock.now - start)
    let dictionary = Dictionary(uniqueKeysWithValues: people.enumerated().map { ($1.key, $0) })
    start = clock.now
    for index in 0..<lookups { checksum &+= dictionary[Person.key(index &* 7919 % count)] ?? 0 }
    let dictionaryLookup = Double(lookups) / seconds(clock.now - start)
    precondition(checksum != 0)
    let memoryRead = randomReadLatency(bytes: 128 << 20)

    start = clock.now
    try await updateTenPercent(store, count: count, round: 0)
    let cairnUpdate = Double(count / 10) / seconds(clock.now - start)
    try await store.close()

    if onlyCairn {
        report.row(
            "Cairn alone",
            "insert \(Int(cairnInsert))/s, batch insert \(Int(cairnBatchInsert))/s, reopen \(Int(cairnReopen))/s (\(cairnReopens.map { "\(Int($0 / 1000))k" }.joined(separator: ", "))), lookup \(Int(cairnLookup))/s, update \(Int(cairnUpdate))/s, \(Int(memoryPerObject)) bytes/object"
        )
        return report
    }

    // GRDB, with a unique index, synchronous = FULL, prepared statements.
    let grdbPath = root + "/graph-grdb.sqlite"
    try? FileManager.default.removeItem(atPath: grdbPath)
    var configuration = Configuration()
    configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
    start = clock.now
    do {
        let pool = try DatabasePool(path: grdbPath, configuration: configuration)
        try await pool.write { db in try Person.createTable(db) }
        for offset in stride(from: 0, to: count, by: batch) {
            let slice = Array(people[offset..<min(count, offset + batch)])
            try await pool.write { db in
                let statement = try db.cachedStatement(sql: Person.insertSQL)
                for person in slice { try statement.execute(arguments: person.arguments) }
            }
        }
        try pool.close()
    }
    let grdbInsert = Double(count) / seconds(clock.now - start)

    var grdbReopens: [Double] = []
    for _ in 0..<2 {
        start = clock.now
        let pool = try DatabasePool(path: grdbPath, configuration: configuration)
        let loaded = try await pool.read { db in try Person.fetchAll(db, sql: "SELECT * FROM person") }
        grdbReopens.append(Double(loaded.count) / seconds(clock.now - start))
        try pool.close()
    }
    start = clock.now
    let pool = try DatabasePool(path: grdbPath, configuration: configuration)
    let loaded = try await pool.read { db in try Person.fetchAll(db, sql: "SELECT * FROM person") }
    grdbReopens.append(Double(loaded.count) / seconds(clock.now - start))
    let grdbReopen = grdbReopens.sorted()[1]
    precondition(loaded.count == count)

    start = clock.now
    let grdbFound = try await pool.read { db -> Int in
        var found = 0
        let statement = try db.cachedStatement(sql: "SELECT * FROM person WHERE key = ?")
        for index in 0..<lookups {
            if try Person.fetchOne(statement, arguments: [Person.key(index &* 7919 % count)]) != nil { found += 1 }
        }
        return found
    }
    let grdbLookup = Double(lookups) / seconds(clock.now - start)
    precondition(grdbFound == lookups)

    start = clock.now
    try await pool.write { db in
        let statement = try db.cachedStatement(sql: "UPDATE person SET visits = ? WHERE key = ?")
        for index in stride(from: 0, to: count, by: 10) { try statement.execute(arguments: [index % 1000, Person.key(index)]) }
    }
    let grdbUpdate = Double(count / 10) / seconds(clock.now - start)
    try pool.close()

    report.row(
        "insert, durable saves of 10k", "Cairn \(Int(cairnInsert)) objects/s, GRDB \(Int(grdbInsert)) rows/s",
        note: "\(fixed(cairnInsert / grdbInsert, 2))× (managed objects in a context)")
    report.row(
        "batch insert, durable saves of 10k", "Cairn \(Int(cairnBatchInsert)) objects/s, GRDB \(Int(grdbInsert)) rows/s",
        note: "\(fixed(cairnBatchInsert / grdbInsert, 2))× (Store.batchInsert)")
    report.row(
        "reopen to a full view", "Cairn \(Int(cairnReopen)) objects/s, GRDB \(Int(grdbReopen)) rows/s",
        note:
            "GRDB: open + fetch all rows into structs; \(fixed(cairnReopen / grdbReopen, 2))×; Cairn's median of three opens: \(cairnReopens.map { "\(Int($0 / 1000))k" }.joined(separator: ", ")) (the first follows malloc_trim)"
    )
    report.row(
        "resident memory added by reopening", "\(Int(memoryPerObject)) bytes per object",
        note:
            "\(fixed(memoryPerObject * Double(count) / Double(logBytes), 2))× the uncompressed log (\(Int(logBytes) / count) bytes per object); \(fixed(memoryPerObject * Double(count) / Double(dataBytes), 2))× the bare attribute bytes (\(dataBytes / count))"
    )
    report.row(
        "lookup by unique key", "Cairn \(Int(cairnLookup))/s, GRDB \(Int(grdbLookup))/s",
        note: "\(fixed(cairnLookup / grdbLookup, 1))× (Cairn: fetchFirst in the view context)")
    report.row(
        "lookup by unique key, 1,000 keys a call", "Cairn \(Int(cairnBatchLookup))/s",
        note: "\(fixed(cairnBatchLookup / cairnLookup, 2))× one key a call; \(fixed(cairnBatchLookup / dictionaryLookup, 2))× the Dictionary's rate below")
    report.row(
        "floor of a lookup in this loop", "key string alone \(Int(keyStrings))/s; with a Swift Dictionary lookup \(Int(dictionaryLookup))/s",
        note: "\(fixed(keyStrings / grdbLookup, 1))× and \(fixed(dictionaryLookup / grdbLookup, 1))× GRDB"
            + (dictionaryLookup < 50 * grdbLookup ? " (a bare hash table of the keys falls short of 50× itself)" : ""))
    report.row(
        "one random read of memory", "\(fixed(memoryRead, 1)) ns",
        note: "a chain of dependent reads in 128 MiB (about this store's size); 50× GRDB's lookup leaves \(fixed(1e9 / (50 * grdbLookup), 1)) ns a lookup")
    report.row(
        "update 10% and save", "Cairn \(Int(cairnUpdate)) objects/s, GRDB \(Int(grdbUpdate)) rows/s",
        note: "one save / one transaction; \(fixed(cairnUpdate / grdbUpdate, 2))×")
    let suite = "Object graph, \(grouped(count)) objects"
    report.compare(suite, "insert, managed objects", ratio: cairnInsert / grdbInsert)
    report.compare(suite, "batch insert", ratio: cairnBatchInsert / grdbInsert)
    report.compare(suite, "reopen to a full view", ratio: cairnReopen / grdbReopen)
    report.compare(suite, "lookup by unique key", ratio: cairnLookup / grdbLookup)
    report.compare(suite, "update 10% and save", ratio: cairnUpdate / grdbUpdate)
    report.target(
        "reopen to a full view ≥ 3× GRDB and ≥ 2M objects/s", met: cairnReopen >= 3 * grdbReopen && cairnReopen >= 2_000_000,
        figure: "\(fixed(cairnReopen / grdbReopen, 2))×, \(Int(cairnReopen)) objects/s")
    report.target("insert ≥ 3× GRDB (managed objects)", met: cairnInsert >= 3 * grdbInsert, figure: "\(fixed(cairnInsert / grdbInsert, 2))×")
    report.target("insert ≥ 3× GRDB (batch insert)", met: cairnBatchInsert >= 3 * grdbInsert, figure: "\(fixed(cairnBatchInsert / grdbInsert, 2))×")
    report.target("unique-key lookup ≥ 50× GRDB", met: cairnLookup >= 50 * grdbLookup, figure: "\(fixed(cairnLookup / grdbLookup, 1))×")
    report.target("update 10% and save ≥ 2× GRDB", met: cairnUpdate >= 2 * grdbUpdate, figure: "\(fixed(cairnUpdate / grdbUpdate, 2))×")
    report.target(
        "resident memory ≤ 2× the uncompressed data (the log's change records, uncompressed)",
        met: memoryPerObject * Double(count) <= 2 * Double(logBytes),
        figure: "\(fixed(memoryPerObject * Double(count) / Double(logBytes), 2))×")
    return report
}

/// Sets `visits` on every tenth person, found by its unique key in a background context, and
/// saves once: the graph suite's "update 10%".
/// Returns when the save began.
@discardableResult
func updateTenPercent(_ store: Store, count: Int, round: Int) async throws -> ContinuousClock.Instant {
    let updater = store.newBackgroundContext()
    for index in stride(from: 0, to: count, by: 10) {
        try updater.fetchFirst(FetchRequest("Person", predicate: .equal("key", .string(Person.key(index)))))?.setValue(
            .integer(Int64((index + round) % 1000)), forKey: "visits")
    }
    let saving = ContinuousClock.now
    try await updater.save()
    return saving
}

/// Nanoseconds per read of a chain of dependent reads at random places in `bytes` of memory:
/// what one cache miss costs on this machine when the data is far larger than the caches (one
/// random cycle through all the words, Sattolo's shuffle, so that no read can start before the
/// previous one ends).
func randomReadLatency(bytes: Int) -> Double {
    let count = bytes / MemoryLayout<Int>.stride
    let next = UnsafeMutablePointer<Int>.allocate(capacity: count)
    defer { next.deallocate() }
    for index in 0..<count { next[index] = index }
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    for index in stride(from: count - 1, to: 0, by: -1) {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        let other = Int(state % UInt64(index))
        (next[index], next[other]) = (next[other], next[index])
    }
    let steps = 5_000_000
    var position = 0
    let clock = ContinuousClock()
    let start = clock.now
    for _ in 0..<steps { position = next[position] }
    let elapsed = clock.now - start
    precondition(position >= 0)
    return seconds(elapsed) * 1e9 / Double(steps)
}

/// The resident set size, after handing memory freed earlier back to the system
/// (`malloc_trim`), so that a later growth measures what was allocated since.
func heapInUse() -> Int {
    typealias Trim = @convention(c) (Int) -> Int32
    if let symbol = dlsym(nil, "malloc_trim") { _ = unsafeBitCast(symbol, to: Trim.self)(0) }
    return residentBytes()
}

/// The process's resident bytes now (`/proc/self/statm`: its heap and the mapped pages it
/// touched).
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
        let pages = text.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
    else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// A realistic entity: a person with ten attributes, one of them a unique key (decoded from the
/// import benchmark's JSON by its property names).
struct Person: FetchableRecord, Decodable {
    var key: String
    var givenName: String
    var familyName: String
    var email: String
    var city: String
    var born: Date
    var score: Double
    var active: Bool
    var visits: Int64
    var created: Date

    static let given = ["Amelia", "Olivia", "Noah", "Liam", "Mia", "Lucas", "Emma", "Hugo", "Lea", "Jonas", "Sofia", "Mateo"]
    static let family = ["Martin", "Bernard", "Dubois", "Garcia", "Müller", "Schmidt", "Rossi", "Novak", "Jensen", "Silva"]
    static let cities = ["Lyon", "Berlin", "Milano", "Madrid", "London", "København", "Porto", "Kraków"]

    static func key(_ number: Int) -> String { "P-\(1_000_000 + number)" }

    init(number: Int) {
        key = Self.key(number)
        givenName = Self.given[number % Self.given.count]
        familyName = Self.family[(number / 7) % Self.family.count]
        email = "\(givenName.lowercased()).\(familyName.lowercased())\(number)@example.com"
        city = Self.cities[(number / 3) % Self.cities.count]
        born = Date(timeIntervalSince1970: Double(-600_000_000 + number * 997 % 1_200_000_000))
        score = Double(number % 10_000) / 100
        active = number % 3 != 0
        visits = Int64(number % 500)
        created = Date(timeIntervalSince1970: 1_700_000_000 + Double(number))
    }

    init(row: Row) {
        key = row["key"]; givenName = row["givenName"]; familyName = row["familyName"]; email = row["email"]
        city = row["city"]; born = row["born"]; score = row["score"]; active = row["active"]; visits = row["visits"]
        created = row["created"]
    }

    /// Bytes of attribute data: strings in UTF-8, numbers and dates 8 bytes, booleans 1.
    var dataSize: Int { key.utf8.count + givenName.utf8.count + familyName.utf8.count + email.utf8.count + city.utf8.count + 8 * 5 + 1 }

    /// The entity; `indexed` adds indexes on born and visits (the query benchmarks); the app
    /// style makes the score a `Decimal` and reads born as `yyyy-MM-dd` (WTAData's `DateFormat`).
    static func model(indexed: Bool = false, style: PeopleStyle = .benchmark) throws -> Model {
        try Model {
            Entity("Person") {
                Attribute("key", .string, optional: false)
                Attribute("givenName", .string)
                Attribute("familyName", .string)
                Attribute("email", .string)
                Attribute("city", .string)
                Attribute("born", .date, indexed: indexed, userInfo: style == .app ? ["DateFormat": "yyyy-MM-dd"] : [:])
                Attribute("score", style == .app ? .decimal : .double)
                Attribute("active", .boolean)
                Attribute("visits", .integer64, indexed: indexed)
                Attribute("created", .date)
                Unique("key")
            }
        }
    }

    /// The attributes of a batch insert's rows, in ``row``'s order.
    static let columns = ["key", "givenName", "familyName", "email", "city", "born", "score", "active", "visits", "created"]

    /// The attribute values in ``columns``' order, for a batch insert.
    var row: [Value] {
        [
            .string(key), .string(givenName), .string(familyName), .string(email), .string(city), .date(born), .double(score),
            .boolean(active), .integer(visits), .date(created)
        ]
    }

    func insert(into context: ObjectContext) throws {
        let object = try context.insert("Person")
        try object.setValue(.string(key), forKey: "key")
        try object.setValue(.string(givenName), forKey: "givenName")
        try object.setValue(.string(familyName), forKey: "familyName")
        try object.setValue(.string(email), forKey: "email")
        try object.setValue(.string(city), forKey: "city")
        try object.setValue(.date(born), forKey: "born")
        try object.setValue(.double(score), forKey: "score")
        try object.setValue(.boolean(active), forKey: "active")
        try object.setValue(.integer(visits), forKey: "visits")
        try object.setValue(.date(created), forKey: "created")
    }

    /// The table; `scoreType` is the score's SQL type.
    static func createTable(_ db: Database, scoreType: String = "DOUBLE") throws {
        try db.execute(
            sql: """
                CREATE TABLE person (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, givenName TEXT, familyName TEXT, email TEXT,
                                     city TEXT, born DATETIME, score \(scoreType), active BOOLEAN, visits INTEGER, created DATETIME)
                """)
    }

    static let insertSQL = "INSERT INTO person (key, givenName, familyName, email, city, born, score, active, visits, created) VALUES (?,?,?,?,?,?,?,?,?,?)"

    var arguments: StatementArguments {
        [key, givenName, familyName, email, city, born, score, active, visits, created]
    }
}
