import Cairn
import CairnModels
import Foundation
import GRDB

/// The people of the graph suite as a typed `@Managed` class, bound to the same `Person` entity.
@Managed final class PersonModel {
    static var entityName: String { "Person" }
    var key: String
    var givenName: String?
    var familyName: String?
    var email: String?
    var city: String?
    var born: Date?
    var score: Double
    var active: Bool
    var visits: Int64
    var created: Date?

    /// Every property read once, summed (the "read every property" loop's work).
    var everyProperty: Int {
        var sum = key.utf8.count &+ (givenName?.utf8.count ?? 0) &+ (familyName?.utf8.count ?? 0)
        sum &+= (email?.utf8.count ?? 0) &+ (city?.utf8.count ?? 0) &+ Int(born?.timeIntervalSince1970 ?? 0)
        return sum &+ Int(score) &+ (active ? 1 : 0) &+ Int(visits) &+ Int(created?.timeIntervalSince1970 ?? 0)
    }

    init(_ person: Person) {
        key = person.key
        givenName = person.givenName
        familyName = person.familyName
        email = person.email
        city = person.city
        born = person.born
        score = person.score
        active = person.active
        visits = person.visits
        created = person.created
    }
}

/// The same people as a GRDB Codable record (what a GRDB app writes: Codable, no hand-written
/// row decoding).
struct PersonRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "person"
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

    init(_ person: Person) {
        key = person.key; givenName = person.givenName; familyName = person.familyName; email = person.email; city = person.city
        born = person.born; score = person.score; active = person.active; visits = person.visits; created = person.created
    }
}

/// Typed classes against managed objects and GRDB's Codable records, on the graph suite's
/// people, alternating in each round: insert 1M in saves of 10k, fetch 100k and read every
/// property, read one property, update 10% by key, memory of 1M fetched objects.
func typedModelBenchmarks(_ initial: Report, root: String, quick: Bool) async throws -> Report {
    var report = initial
    let count = quick ? 100_000 : 1_000_000
    let fetched = count / 10
    let batch = 10_000
    let rounds = 3
    let people = (0..<count).map(Person.init(number:))
    let model = try Person.model()
    let clock = ContinuousClock()

    // For profiling one operation alone: CAIRN_BENCH_PROFILE=typed-insert, typed-fetch or
    // typed-update runs it five times (the last two on a batch-inserted store) and prints each
    // rate; the other modes are listed at `profileTyped`.
    if let profile = ProcessInfo.processInfo.environment["CAIRN_BENCH_PROFILE"], profile.hasPrefix("typed-") {
        try await profileTyped(profile, people: people, model: model, root: root)
        return initial
    }

    // Inserts, alternating: managed objects by name, typed objects, GRDB records.
    var untypedInsert: [Double] = [], typedInsert: [Double] = [], grdbInsert: [Double] = []
    let typedPath = root + "/typed-store"
    let grdbPath = root + "/typed-grdb.sqlite"
    for round in 0..<rounds {
        let untypedPath = freshStore(root, "typed-untyped")
        var start = clock.now
        do {
            let store = try Store(at: untypedPath, model: model)
            for offset in stride(from: 0, to: count, by: batch) {
                let context = store.newBackgroundContext()
                for person in people[offset..<min(count, offset + batch)] { try person.insert(into: context) }
                try await context.save()
            }
            try await store.close()
        }
        untypedInsert.append(Double(count) / seconds(clock.now - start))
        try? FileManager.default.removeItem(atPath: untypedPath)

        try? FileManager.default.removeItem(atPath: typedPath)
        start = clock.now
        do {
            try await insertTyped(people, into: typedPath, model: model)
        }
        typedInsert.append(Double(count) / seconds(clock.now - start))

        try? FileManager.default.removeItem(atPath: grdbPath)
        start = clock.now
        do {
            var configuration = Configuration()
            configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
            let pool = try DatabasePool(path: grdbPath, configuration: configuration)
            try await pool.write { db in try Person.createTable(db) }
            for offset in stride(from: 0, to: count, by: batch) {
                let records = people[offset..<min(count, offset + batch)].map(PersonRecord.init)
                try await pool.write { db in for record in records { try record.insert(db) } }
            }
            try pool.close()
        }
        grdbInsert.append(Double(count) / seconds(clock.now - start))
        print(
            "typed insert round \(round + 1): by name \(Int(untypedInsert.last ?? 0))/s, typed \(Int(typedInsert.last ?? 0))/s, GRDB \(Int(grdbInsert.last ?? 0))/s"
        )
    }

    // Fetching `fetched` objects and reading every property, alternating.
    let store = try Store(at: typedPath, model: model, for: [PersonModel.self])
    let pool = try DatabasePool(path: grdbPath)
    var typedFetch: [Double] = [], untypedFetch: [Double] = [], grdbFetch: [Double] = [], typedFetchOnly: [Double] = []
    var typedRead: [Double] = [], untypedRead: [Double] = []
    var checksum = 0
    for _ in 0..<rounds {
        var start = clock.now
        do {
            var descriptor = FetchDescriptor<PersonModel>()
            descriptor.fetchLimit = fetched
            let context = store.newBackgroundContext()  // held: objects live as long as their context
            let objects = try context.fetch(descriptor)
            for person in objects {
                checksum &+= person.everyProperty
            }
            typedFetch.append(Double(objects.count) / seconds(clock.now - start))
            // One property of the fetched objects, typed and by name, alternating passes.
            for _ in 0..<3 {
                start = clock.now
                for person in objects { checksum &+= Int(person.visits) }
                typedRead.append(Double(objects.count) / seconds(clock.now - start))
                start = clock.now
                for person in objects { checksum &+= Int(try person.managedObject?.value(forKey: "visits", as: Int64.self) ?? 0) }
                untypedRead.append(Double(objects.count) / seconds(clock.now - start))
            }
            withExtendedLifetime(context) {}
        }
        // The fetch alone (the objects made, no property read): the part of the above that
        // reading costs nothing of.
        start = clock.now
        do {
            var descriptor = FetchDescriptor<PersonModel>()
            descriptor.fetchLimit = fetched
            let context = store.newBackgroundContext()
            let objects = try context.fetch(descriptor)
            typedFetchOnly.append(Double(objects.count) / seconds(clock.now - start))
            withExtendedLifetime((objects, context)) {}
        }
        start = clock.now
        do {
            let context = store.newBackgroundContext()
            let objects = try context.fetch(FetchRequest("Person", fetchLimit: fetched))
            for object in objects {
                checksum &+= try object.value(forKey: "key", as: String.self).utf8.count
                checksum &+=
                    try (object.value(forKey: "givenName", as: String?.self)?.utf8.count ?? 0)
                    &+ (object.value(forKey: "familyName", as: String?.self)?.utf8.count ?? 0)
                checksum &+=
                    try (object.value(forKey: "email", as: String?.self)?.utf8.count ?? 0) &+ (object.value(forKey: "city", as: String?.self)?.utf8.count ?? 0)
                checksum &+=
                    try Int(object.value(forKey: "born", as: Date?.self)?.timeIntervalSince1970 ?? 0) &+ Int(object.value(forKey: "score", as: Double.self))
                checksum &+= try (object.value(forKey: "active", as: Bool.self) ? 1 : 0) &+ Int(object.value(forKey: "visits", as: Int64.self))
                checksum &+= try Int(object.value(forKey: "created", as: Date?.self)?.timeIntervalSince1970 ?? 0)
            }
            untypedFetch.append(Double(objects.count) / seconds(clock.now - start))
            withExtendedLifetime(context) {}
        }
        start = clock.now
        let records = try await pool.read { db in try PersonRecord.limit(fetched).fetchAll(db) }
        for person in records {
            checksum &+= person.key.utf8.count &+ person.givenName.utf8.count &+ person.familyName.utf8.count &+ person.email.utf8.count
            checksum &+= person.city.utf8.count &+ Int(person.born.timeIntervalSince1970) &+ Int(person.score) &+ (person.active ? 1 : 0)
            checksum &+= Int(person.visits) &+ Int(person.created.timeIntervalSince1970)
        }
        grdbFetch.append(Double(records.count) / seconds(clock.now - start))
    }
    precondition(checksum != 0)

    // Updating 10% by key, alternating: typed properties against setValue.
    var typedUpdate: [Double] = [], untypedUpdate: [Double] = []
    for round in 0..<rounds {
        var start = clock.now
        do {
            try await updateTenPercentTyped(store, count: count, round: round)
        }
        typedUpdate.append(Double(count / 10) / seconds(clock.now - start))
        start = clock.now
        try await updateTenPercent(store, count: count, round: round + 1)
        untypedUpdate.append(Double(count / 10) / seconds(clock.now - start))
    }

    // Resident memory of every object fetched into a context and held.
    var untypedBytes = 0.0, typedBytes = 0.0
    do {
        let before = heapInUse()
        let context = store.newBackgroundContext()
        let objects = try context.fetch(FetchRequest("Person"))
        untypedBytes = Double(heapInUse() - before) / Double(objects.count)
        withExtendedLifetime(objects) {}
    }
    do {
        let before = heapInUse()
        let context = store.newBackgroundContext()
        let objects = try context.fetch(FetchDescriptor<PersonModel>())
        typedBytes = Double(heapInUse() - before) / Double(objects.count)
        withExtendedLifetime(objects) {}
    }
    try await store.close()
    try pool.close()

    func figure(_ values: [Double]) -> String {
        let sorted = values.sorted()
        return "\(Int(sorted[sorted.count / 2])) (\(Int(sorted.first ?? 0))–\(Int(sorted.last ?? 0)))"
    }
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    let insertRatio = median(typedInsert) / median(untypedInsert), insertGRDB = median(typedInsert) / median(grdbInsert)
    let fetchGRDB = median(typedFetch) / median(grdbFetch), readRatio = median(untypedRead) / median(typedRead)
    let updateRatio = median(untypedUpdate) / median(typedUpdate)
    report.row(
        "typed insert, durable saves of 10k", "typed \(figure(typedInsert))/s, by name \(figure(untypedInsert))/s, GRDB Codable \(figure(grdbInsert))/s",
        note: "\(fixed(insertRatio, 2))× the managed objects, \(fixed(insertGRDB, 2))× GRDB")
    report.row(
        "fetch \(grouped(fetched)) and read every property",
        "typed \(figure(typedFetch))/s, by name \(figure(untypedFetch))/s, GRDB Codable \(figure(grdbFetch))/s",
        note: "\(fixed(fetchGRDB, 2))× GRDB")
    report.row(
        "fetch \(grouped(fetched)) typed objects, no property read", "typed \(figure(typedFetchOnly))/s",
        note: "\(fixed(median(typedFetchOnly) / median(grdbFetch), 2))× GRDB's fetch and decode")
    report.row(
        "read one property of a fetched object", "typed \(figure(typedRead))/s, value(forKey:) \(figure(untypedRead))/s",
        note: "typed takes \(fixed(readRatio, 2))× the time of value(forKey:)")
    report.row(
        "update 10% by key and save", "typed \(figure(typedUpdate))/s, by name \(figure(untypedUpdate))/s",
        note: "typed takes \(fixed(updateRatio, 2))× the time of setValue")
    report.row(
        "resident memory of \(grouped(count)) fetched objects", "typed \(Int(typedBytes)) bytes per object, managed objects \(Int(untypedBytes))",
        note: "typed objects hold their managed object")
    let suite = "Typed classes, \(grouped(count)) objects"
    report.compare(suite, "typed insert", ratio: median(typedInsert) / median(grdbInsert))
    report.compare(suite, "typed fetch and read", ratio: fetchGRDB)
    report.target("typed insert ≥ 0.9× managed objects", met: insertRatio >= 0.9, figure: "\(fixed(insertRatio, 2))×")
    report.target("typed insert ≥ 3× GRDB Codable records", met: insertGRDB >= 3, figure: "\(fixed(insertGRDB, 2))×")
    report.target("typed fetch and read ≥ 3× GRDB Codable records", met: fetchGRDB >= 3, figure: "\(fixed(fetchGRDB, 2))×")
    report.target("typed read of one property within 1.2× value(forKey:)", met: readRatio <= 1.2, figure: "\(fixed(readRatio, 2))×")
    report.target("typed update within 1.2× setValue", met: updateRatio <= 1.2, figure: "\(fixed(updateRatio, 2))×")
    return report
}

/// One typed operation, five times, each rate printed (CAIRN_BENCH_PROFILE=typed-…;
/// `typed-insert-by-name` and `typed-update-by-name` do the same by name, to compare;
/// `typed-fetch-only`, `typed-fetch-one` and `typed-fetch-reads` take the fetch apart).
func profileTyped(_ profile: String, people: [Person], model: Model, root: String) async throws {
    let clock = ContinuousClock()
    let count = people.count
    let path = freshStore(root, "typed-profile")
    if !profile.hasPrefix("typed-insert") {
        let store = try Store(at: path, model: model)
        for offset in stride(from: 0, to: count, by: 10_000) {
            try await store.batchInsert("Person", columns: Person.columns, rows: people[offset..<min(count, offset + 10_000)].map(\.row))
        }
        try await store.close()
    }
    let store = try Store(at: path, model: model, for: [PersonModel.self])
    for round in 0..<5 {
        let start = clock.now
        var done = 0
        switch profile {
        case "typed-insert":
            try await insertTyped(people, into: freshStore(root, "typed-insert-\(round)"), model: model)
            done = count
        case "typed-insert-by-name":
            let byName = try Store(at: freshStore(root, "typed-insert-\(round)"), model: model)
            for offset in stride(from: 0, to: count, by: 10_000) {
                let context = byName.newBackgroundContext()
                for person in people[offset..<min(count, offset + 10_000)] { try person.insert(into: context) }
                try await context.save()
            }
            try await byName.close()
            done = count
        case "typed-fetch":
            let context = store.newBackgroundContext()
            var descriptor = FetchDescriptor<PersonModel>()
            descriptor.fetchLimit = count / 10
            var checksum = 0
            for person in try context.fetch(descriptor) {
                checksum &+= person.everyProperty
                done += 1
            }
            precondition(checksum != 0)
        case "typed-fetch-only", "typed-fetch-one", "typed-fetch-reads":
            // (The fetch alone, and the fetch with one property read: what reading every property adds.)
            let context = store.newBackgroundContext()
            var descriptor = FetchDescriptor<PersonModel>()
            descriptor.fetchLimit = count / 10
            var checksum = 0
            let objects = try context.fetch(descriptor)
            if profile == "typed-fetch-one" { for person in objects { checksum &+= Int(person.visits) } }
            if profile == "typed-fetch-reads" {
                // (One property read again and again: the cost of a read of a current field.)
                for person in objects { checksum &+= Int(person.visits) }
                let reads = clock.now
                for _ in 0..<20 { for person in objects { checksum &+= Int(person.visits) } }
                print("  reads: \(Int(Double(20 * objects.count) / seconds(clock.now - reads)))/s (the objects/s below count them too)")
            }
            done = objects.count
            withExtendedLifetime((objects, context)) {}
            print("  (before the objects are let go of: \(Int(Double(done) / seconds(clock.now - start))) objects/s)", checksum)
        case "typed-setup":
            // (Only the setup, to subtract from a profile's counts.)
            done = 0
        case "typed-update-by-name":
            _ = try await updateTenPercent(store, count: count, round: round)
            done = count / 10
        default:
            try await updateTenPercentTyped(store, count: count, round: round)
            done = count / 10
        }
        print("\(profile) \(Int(Double(done) / seconds(clock.now - start))) objects/s")
    }
    try await store.close()
}

/// Sets `visits` on every tenth person, found by its key through a typed `FetchDescriptor`, and
/// saves once: the typed form of the graph suite's "update 10%".
func updateTenPercentTyped(_ store: Store, count: Int, round: Int) async throws {
    let context = store.newBackgroundContext()
    for index in stride(from: 0, to: count, by: 10) {
        let key = Person.key(index)
        var descriptor = FetchDescriptor<PersonModel>(predicate: #Predicate { $0.key == key })
        descriptor.fetchLimit = 1
        try context.fetch(descriptor).first?.visits = Int64((index + round) % 1000)
    }
    try await context.save()
}

/// Inserts the people as typed objects into a new store at `path`, in durable saves of 10k.
func insertTyped(_ people: [Person], into path: String, model: Model) async throws {
    let store = try Store(at: path, model: model, for: [PersonModel.self])
    for offset in stride(from: 0, to: people.count, by: 10_000) {
        let context = store.newBackgroundContext()
        for person in people[offset..<min(people.count, offset + 10_000)] { context.insert(PersonModel(person)) }
        try await context.save()
    }
    try await store.close()
}
