import Cairn
import CairnMapping
import Foundation
import GRDB

/// JSON import and export against GRDB (Foundation's `JSONDecoder` and an upsert in one
/// transaction) on the same file, in the same run, alternating.
func importBenchmarks(_ initial: Report, root: String, quick: Bool) async throws -> Report {
    var report = initial
    let count = quick ? 50_000 : 200_000
    let file = root + "/people.json"
    let size = try PersonJSON.write(count: count, to: file)
    print("import: \(count) records, \(size / 1_000_000) MB of JSON")
    let model = try Person.model()
    let mapping = try Mapping(model: model)
    let runs = quick ? 3 : 5
    if ProcessInfo.processInfo.environment["CAIRN_BENCH_PROFILE"] == "reimport" {
        // Re-imports of a file with 10% changed, alternating with the original, for `perf record`.
        let changed = root + "/people-changed.json"
        _ = try PersonJSON.write(count: count, to: changed, changedEvery: 10)
        let directory = freshStore(root, "profile")
        let store = try Store(at: directory, model: model)
        _ = try await store.importJSON(contentsOf: URL(fileURLWithPath: file), into: "Person", mapping: mapping)
        for run in 0..<10 {
            let start = ContinuousClock.now
            _ = try await store.importJSON(contentsOf: URL(fileURLWithPath: run % 2 == 0 ? changed : file), into: "Person", mapping: mapping)
            print("re-import \(run): \(fixed(seconds(ContinuousClock.now - start), 3)) s")
        }
        try await store.close()
        return report
    }
    if ProcessInfo.processInfo.environment["CAIRN_BENCH_PROFILE"] == "export" {
        // Exports of every object, ten times, for `perf record`.
        let directory = freshStore(root, "profile")
        let store = try Store(at: directory, model: model)
        _ = try await store.importJSON(contentsOf: URL(fileURLWithPath: file), into: "Person", mapping: mapping)
        for run in 0..<10 {
            let start = ContinuousClock.now
            var bytes = 0
            try store.newBackgroundContext().exportJSON(FetchRequest("Person"), mapping: mapping) { bytes += $0.count }
            print("export \(run): \(fixed(Double(bytes) / 1e6 / seconds(ContinuousClock.now - start), 0)) MB/s")
        }
        try await store.close()
        return report
    }
    if ProcessInfo.processInfo.environment["CAIRN_BENCH_PROFILE"] == "import" {
        // Imports alone, ten times, for `perf record`.
        for run in 0..<10 {
            let directory = freshStore(root, "profile-\(run)")
            let store = try Store(at: directory, model: model)
            let start = ContinuousClock.now
            _ = try await store.importJSON(contentsOf: URL(fileURLWithPath: file), into: "Person", mapping: mapping)
            print("import \(run): \(fixed(seconds(ContinuousClock.now - start), 3)) s")
            try await store.close()
            try? FileManager.default.removeItem(atPath: directory)
        }
        return report
    }

    // The parser alone: every token of the file.
    var parseTimes: [Double] = []
    let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
    for _ in 0..<runs {
        let start = ContinuousClock.now
        var tokens = 0
        try bytes.withUnsafeBytes { buffer in
            var scanner = JSONScanner(buffer)
            while try scanner.next() != nil { tokens += 1 }
        }
        parseTimes.append(seconds(ContinuousClock.now - start))
        precondition(tokens > count * 20)
    }

    var cairnImport: [Double] = []
    var grdbImport: [Double] = []
    var cairnReimport: [Double] = []
    var cairnChanged: [Double] = []
    var grdbChanged: [Double] = []
    var cairnExport: [Double] = []
    var exportBytes = 0
    var appendedByIdentical = 0
    let changedFile = root + "/people-changed.json"
    _ = try PersonJSON.write(count: count, to: changedFile, changedEvery: 10)
    for run in 0..<runs {
        // Cairn: a new store on disk, the whole file in one save.
        let directory = freshStore(root, "import-\(run)")
        let store = try Store(at: directory, model: model)
        var start = ContinuousClock.now
        let result = try await store.importJSON(contentsOf: URL(fileURLWithPath: file), into: "Person", mapping: mapping)
        cairnImport.append(seconds(ContinuousClock.now - start))
        precondition(result.inserted == count)
        let before = try LogInspectionSize.segmentBytes(directory)
        start = ContinuousClock.now
        let same = try await store.importJSON(contentsOf: URL(fileURLWithPath: file), into: "Person", mapping: mapping)
        cairnReimport.append(seconds(ContinuousClock.now - start))
        precondition(same.unchanged == count)
        appendedByIdentical = try LogInspectionSize.segmentBytes(directory) - before
        start = ContinuousClock.now
        let changed = try await store.importJSON(contentsOf: URL(fileURLWithPath: changedFile), into: "Person", mapping: mapping)
        cairnChanged.append(seconds(ContinuousClock.now - start))
        precondition(changed.updated == count / 10)
        start = ContinuousClock.now
        exportBytes = 0
        try store.newBackgroundContext().exportJSON(FetchRequest("Person"), mapping: mapping) { exportBytes += $0.count }
        cairnExport.append(seconds(ContinuousClock.now - start))
        try await store.close()
        try? FileManager.default.removeItem(atPath: directory)

        // GRDB: JSONDecoder, then an upsert of every record in one transaction.
        let path = root + "/grdb-import-\(run).sqlite"
        let queue = try grdbQueue(path)
        start = ContinuousClock.now
        try PersonJSON.grdbImport(file, into: queue)
        grdbImport.append(seconds(ContinuousClock.now - start))
        start = ContinuousClock.now
        try PersonJSON.grdbImport(changedFile, into: queue)
        grdbChanged.append(seconds(ContinuousClock.now - start))
        try queue.close()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
    report = try importProcessBenchmarks(report, root: root, file: file, count: count, runs: runs)
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    func range(_ values: [Double], _ scale: (Double) -> Double) -> String {
        let scaled = values.map(scale).sorted()
        return "\(fixed(scaled.first ?? 0, 2))–\(fixed(scaled.last ?? 0, 2))"
    }
    let megabytes = Double(size) / 1_000_000
    let parse = megabytes / median(parseTimes)
    let imported = Double(count) / median(cairnImport)
    let importRatio = median(grdbImport) / median(cairnImport)
    let changedRatio = median(grdbChanged) / median(cairnChanged)
    let upsertCost = median(cairnReimport) / median(cairnImport)
    let export = Double(exportBytes) / 1_000_000 / median(cairnExport)
    report.row("parser alone (every token)", "\(Int(parse)) MB/s", note: "\(fixed(megabytes, 1)) MB")
    report.row(
        "import into a new store, one save", "Cairn \(Int(imported)) records/s (\(fixed(median(cairnImport), 3)) s), GRDB \(fixed(median(grdbImport), 3)) s",
        note: "\(fixed(importRatio, 2))× GRDB (\(range(zip(grdbImport, cairnImport).map { $0 / $1 }, { $0 }))×)")
    report.row(
        "re-import, identical", "Cairn \(fixed(median(cairnReimport), 3)) s, \(appendedByIdentical) bytes appended",
        note: "\(fixed(upsertCost, 2))× the import into an empty store")
    report.row(
        "re-import, 10% changed", "Cairn \(fixed(median(cairnChanged), 3)) s, GRDB \(fixed(median(grdbChanged), 3)) s",
        note: "\(fixed(changedRatio, 2))× GRDB (\(range(zip(grdbChanged, cairnChanged).map { $0 / $1 }, { $0 }))×)")
    report.row("export to JSON", "\(Int(export)) MB/s", note: "\(fixed(Double(exportBytes) / 1_000_000, 1)) MB")
    let suite = "JSON import, \(grouped(count)) records"
    report.compare(suite, "import into a new store, in process", ratio: importRatio)
    report.compare(suite, "re-import, 10% changed, in process", ratio: changedRatio)
    report.target("parser alone ≥ 300 MB/s", met: parse >= 300, figure: "\(Int(parse)) MB/s")
    report.target("import ≥ 1M flat records/s in process", met: imported >= 1_000_000, figure: "\(Int(imported)) records/s")
    report.target("import ≥ 5× GRDB in process", met: importRatio >= 5, figure: "\(fixed(importRatio, 2))×")
    report.target("re-import with 10% changed ≥ 5× GRDB", met: changedRatio >= 5, figure: "\(fixed(changedRatio, 2))×")
    report.target("identical re-import appends no bytes", met: appendedByIdentical == 0, figure: "\(appendedByIdentical) bytes")
    report.target("upsert of every key ≤ 1.5× an import into an empty store", met: upsertCost <= 1.5, figure: "\(fixed(upsertCost, 2))×")
    report.target("export ≥ 200 MB/s", met: export >= 200, figure: "\(Int(export)) MB/s")
    return report
}

func grdbQueue(_ path: String, style: PeopleStyle = .benchmark) throws -> DatabaseQueue {
    var configuration = Configuration()
    configuration.prepareDatabase { db in
        try db.execute(sql: "PRAGMA journal_mode = WAL")
        try db.execute(sql: "PRAGMA synchronous = FULL")
    }
    let queue = try DatabaseQueue(path: path, configuration: configuration)
    try queue.write { db in try Person.createTable(db, scoreType: style.grdbScoreType) }
    return queue
}

/// The benchmark's JSON: flat person records with a unique key and ISO 8601 dates, as a server
/// would send them, and GRDB's way of importing them.
enum PersonJSON {
    /// Writes `count` records; with `changedEvery`, one record in that many has another score.
    /// The app style writes the score with two decimals (`12.30`) and born as `yyyy-MM-dd`.
    /// Returns the file's size.
    static func write(count: Int, to path: String, changedEvery: Int? = nil, style: PeopleStyle = .benchmark) throws -> Int {
        // Written a megabyte at a time: 10M records are 2.3 GB.
        guard FileManager.default.createFile(atPath: path, contents: nil), let file = FileHandle(forWritingAtPath: path) else {
            throw BenchmarkFailure("cannot write \(path)")
        }
        defer { try? file.close() }
        var text = "[\n"
        var total = 0
        for number in 0..<count {
            let person = Person(number: number)
            let changed = changedEvery.map { number % $0 == 0 } ?? false
            let score: String
            let born: String
            switch style {
            case .benchmark:
                score = "\(person.score + (changed ? 1 : 0))"
                born = Value.date(person.born).description
            case .app:
                let cents = number % 10_000 + (changed ? 100 : 0)
                score = "\(cents / 100).\(CivilTime.padded(cents % 100, 2))"
                born = CivilTime(seconds: Int(person.born.timeIntervalSince1970)).dayText
            }
            text +=
                #"{"key":"\#(person.key)","givenName":"\#(person.givenName)","familyName":"\#(person.familyName)","email":"\#(person.email)","city":"\#(person.city)","born":"\#(born)","score":\#(score),"active":\#(person.active),"visits":\#(person.visits),"created":"\#(Value.date(person.created).description)"}"#
            text += number == count - 1 ? "\n]\n" : ",\n"
            if text.utf8.count > 1 << 20 || number == count - 1 {
                let data = Data(text.utf8)
                try file.write(contentsOf: data)
                total += data.count
                text = ""
            }
        }
        if count == 0 { try file.write(contentsOf: Data("[\n]\n".utf8)) }
        return count == 0 ? 4 : total
    }

    static let upsertSQL = """
        INSERT INTO person (key, givenName, familyName, email, city, born, score, active, visits, created) VALUES (?,?,?,?,?,?,?,?,?,?)
        ON CONFLICT(key) DO UPDATE SET givenName = excluded.givenName, familyName = excluded.familyName, email = excluded.email,
          city = excluded.city, born = excluded.born, score = excluded.score, active = excluded.active, visits = excluded.visits,
          created = excluded.created
        """

    /// GRDB's import: Foundation's JSONDecoder (ISO 8601 with fractional seconds; in the app
    /// style born through a `DateFormatter` and the score as a `Decimal`, stored as text), then
    /// an upsert of every record in one transaction.
    /// GRDB's cold open: every row of the imported people database fetched into structs (the
    /// peer of a process that opens a Cairn store to its full view). Returns the row count.
    static func grdbLoad(_ path: String) throws -> Int {
        let queue = try DatabaseQueue(path: path)
        return try queue.read { db in try Person.fetchAll(db, sql: "SELECT * FROM person").count }
    }

    static func grdbImport(_ path: String, into queue: DatabaseQueue, style: PeopleStyle = .benchmark) throws {
        let decoder = JSONDecoder()
        let formatter = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        switch style {
        case .benchmark:
            decoder.dateDecodingStrategy = .custom { decoder in
                let text = try decoder.singleValueContainer().decode(String.self)
                return try formatter.parse(text)
            }
            try upsert(decoder.decode([Person].self, from: data), into: queue)
        case .app:
            // As apps read a date in a format of their own: a DateFormatter in the POSIX locale
            // (what `.formatted` does), here for born only; created stays ISO 8601.
            let day = DateFormatter()
            day.locale = Locale(identifier: "en_US_POSIX")
            day.timeZone = TimeZone(secondsFromGMT: 0)
            day.dateFormat = "yyyy-MM-dd"
            decoder.dateDecodingStrategy = .custom { decoder in
                let container = try decoder.singleValueContainer()
                let text = try container.decode(String.self)
                guard decoder.codingPath.last?.stringValue == "born" else { return try formatter.parse(text) }
                guard let date = day.date(from: text) else {
                    throw DecodingError.dataCorruptedError(in: container, debugDescription: "not yyyy-MM-dd: \(text)")
                }
                return date
            }
            try upsert(decoder.decode([AppPerson].self, from: data), into: queue)
        }
    }

    /// An upsert of every record, in one transaction.
    private static func upsert<Record: PersonArguments>(_ records: [Record], into queue: DatabaseQueue) throws {
        try queue.write { db in
            let statement = try db.cachedStatement(sql: upsertSQL)
            for record in records { try statement.execute(arguments: record.arguments) }
        }
    }
}

/// A person's values in the order of ``PersonJSON/upsertSQL``.
protocol PersonArguments {
    var arguments: StatementArguments { get }
}

extension Person: PersonArguments {}

/// A person as the GRDB peer of the app-style people decodes it: the score a `Decimal`.
struct AppPerson: Decodable, PersonArguments {
    var key: String
    var givenName: String
    var familyName: String
    var email: String
    var city: String
    var born: Date
    var score: Decimal
    var active: Bool
    var visits: Int64
    var created: Date

    var arguments: StatementArguments { [key, givenName, familyName, email, city, born, score, active, visits, created] }
}
