import Cairn
import CairnMapping
import Foundation

/// The value matrix beside the import suite: a file of flat records per value type and per date
/// convention, each imported into a new store (one save) in pairs with its all-string file of
/// the same size (``ValueVariant/sizeMatchedStrings``: the same records, each value a string of
/// its JSON token's length), alternating which goes first; each row is the median of its pairs'
/// ratios. The pairs run in rounds, one pair of each row a round (every file written first). A
/// pattern read through `DateFormatter` (not compiled to a ``DatePattern``) is reported
/// apart, on 1/200 of the records, without the 0.8× target. Then the import suite's people with
/// a `Decimal` score and a `yyyy-MM-dd` birth date, whole process, against the peers.
/// `CAIRN_BENCH_VALUES=decimal,date` measures only the rows whose name holds one of the words.
/// `CAIRN_BENCH_PAIRS=5` takes five pairs a row (nine by default, three with `--quick`).
func importValueBenchmarks(_ initial: Report, root: String, quick: Bool) async throws -> Report {
    var report = initial
    let count = quick ? 50_000 : 200_000
    // Nine pairs a row: a ratio moves by ±0.2 from pair to pair on this VM, its median far less.
    // CAIRN_BENCH_PAIRS=n: n pairs a row.
    let runs = Int(ProcessInfo.processInfo.environment["CAIRN_BENCH_PAIRS"] ?? "").map { max(1, $0) } ?? (quick ? 3 : 9)
    let words = (ProcessInfo.processInfo.environment["CAIRN_BENCH_VALUES"] ?? "").split(separator: ",").map { $0.lowercased() }
    let variants = ValueVariant.all.filter { variant in words.isEmpty || words.contains { variant.name.lowercased().contains($0) } }
    let keep = ProcessInfo.processInfo.environment["CAIRN_BENCH_KEEP"] != nil  // the files stay, for profiling
    print("values: \(count) records of six values per file, \(runs) runs; each beside an all-string file of the same size")

    // Every row's files first; then the pairs in rounds, one pair of each row a round, so that a
    // slow spell of the VM falls on a pair or two of many rows, not on every pair of one row.
    var prepared: [PreparedRow] = []
    for variant in variants {
        // Fewer records for the patterns read through DateFormatter (about 100 µs a date).
        let records = variant.isFallback ? count / 200 : count
        let file = root + "/values-\(variant.entity).json"
        let size = try variant.write(count: records, to: file)
        let baseline = variant.sizeMatchedStrings
        let strings = root + "/values-\(variant.entity)-strings.json"
        let stringsSize = try baseline.write(count: records, to: strings)
        let model = try Model([baseline.modelEntity, variant.modelEntity])
        do {
            let mapping = try Mapping(model: model, entities: [variant.entityMapping].compactMap { $0 })
            prepared.append(
                PreparedRow(
                    variant: variant, baseline: baseline, records: records, file: file, strings: strings, size: size, stringsSize: stringsSize,
                    model: model, mapping: mapping))
        } catch {
            report.row(variant.name, "not measured", note: "the mapping is refused: \(error)")
        }
    }
    for run in 0..<runs {
        for index in prepared.indices {
            let row = prepared[index]
            var string = 0.0
            var value = 0.0
            for isBaseline in [run % 2 == 0, run % 2 != 0] {
                let time = try await timedImport(
                    isBaseline ? row.baseline : row.variant, file: isBaseline ? row.strings : row.file, count: row.records, model: row.model,
                    mapping: row.mapping, root: root, checks: run == 0)
                if isBaseline { string = time } else { value = time }
            }
            prepared[index].pairs.append((string, value))
        }
        print("  round \(run + 1) of \(runs) done")
    }
    if !keep {
        for row in prepared {
            try? FileManager.default.removeItem(atPath: row.file)
            try? FileManager.default.removeItem(atPath: row.strings)
        }
    }

    var baselineRates: [Double] = []
    var rows: [(name: String, figure: String, note: String, ratio: Double, fallback: Bool)] = []
    for row in prepared {
        let (variant, records, pairs) = (row.variant, row.records, row.pairs)
        let ratios = pairs.map { $0.string / $0.value }.sorted()
        let ratio = ratios[ratios.count / 2]
        let rate = Double(records) / pairs.map(\.value).sorted()[pairs.count / 2]
        let baselineRate = Double(records) / pairs.map(\.string).sorted()[pairs.count / 2]
        if records == count { baselineRates.append(baselineRate) }
        func shown(_ ratio: Double) -> String { fixed(ratio, ratio < 0.1 ? 4 : 2) }
        let figure =
            "\(Int(rate)) records/s, \(shown(ratio))× the all-string file of the same size (\(shown(ratios[0]))–\(shown(ratios[ratios.count - 1]))×)"
        print("  \(variant.name): \(figure)")
        let note =
            "\(fixed(Double(row.size) / 1e6, 1)) MB, its all-string file \(fixed(Double(row.stringsSize) / 1e6, 1)) MB at \(Int(baselineRate)) records/s"
            + (records == count ? "" : ", \(records) records each") + (variant.note.isEmpty ? "" : "; \(variant.note)")
        rows.append((variant.name, figure, note, ratio, variant.isFallback))
    }
    if let slowest = baselineRates.min(), let fastest = baselineRates.max() {
        report.row(
            "string (the baselines)", "\(Int(slowest))–\(Int(fastest)) records/s",
            note: "one all-string file per row below, the size of that row's file (each value a string of its JSON token's length), \(count) records")
    }
    // Patterns read through DateFormatter (not compiled to a DatePattern) come apart, after the others.
    for row in rows.filter({ !$0.fallback }) + rows.filter(\.fallback) {
        report.row(row.fallback ? "DateFormatter fallback: \(row.name)" : row.name, row.figure, note: row.note)
        if !row.fallback {
            report.target("\(row.name) ≥ 0.8× the all-string file of the same size", met: row.ratio >= 0.8, figure: "\(fixed(row.ratio, 2))×")
        }
    }
    let fallbacks = rows.filter(\.fallback).map(\.name)
    report.row(
        "DateFormatter fallbacks", fallbacks.isEmpty ? "none" : fallbacks.joined(separator: "; "),
        note: fallbacks.isEmpty
            ? "every pattern measured compiles to a DatePattern (read by hand)"
            : "reported apart, without the 0.8× target; every other pattern compiles to a DatePattern (read by hand)")

    // The import suite's people as apps model them: whole process, against the peers.
    if words.isEmpty || words.contains("people") {
        let peopleFile = root + "/people-app.json"
        let size = try PersonJSON.write(count: count, to: peopleFile, style: .app)
        print("values: app-style people, \(count) records, \(size / 1_000_000) MB of JSON")
        report = try importProcessBenchmarks(report, root: root, file: peopleFile, count: count, runs: runs, style: .app)
        if !keep { try? FileManager.default.removeItem(atPath: peopleFile) }
    }
    return report
}

/// The time of importing `file` (records of `variant`) into a new store in one save; with
/// `checks`, also that every record was inserted and that the first records hold the values
/// the file writes.
private func timedImport(
    _ variant: ValueVariant, file: String, count: Int, model: Model, mapping: Mapping, root: String, checks: Bool
) async throws -> Double {
    let directory = freshStore(root, "values-store")
    let store = try Store(at: directory, model: model)
    let start = ContinuousClock.now
    let result = try await store.importJSON(contentsOf: URL(fileURLWithPath: file), into: variant.entity, mapping: mapping)
    let elapsed = seconds(ContinuousClock.now - start)
    if checks {
        guard result.inserted == count else { throw BenchmarkFailure("\(variant.name): \(result.inserted) of \(count) records inserted") }
        for record in [0, 1, 2, 3, count / 2, count - 1] {
            let object = try store.viewContext.fetchFirst(FetchRequest(variant.entity, predicate: .equal("key", .string("K-\(1_000_000 + record)"))))
            for value in 1...6 {
                let stored = object?["v\(value)"] ?? .null
                let expected = variant.expected(record * 6 + value - 1)
                guard same(stored, expected) else {
                    throw BenchmarkFailure("\(variant.name): record \(record) v\(value) holds \(stored), not \(expected)")
                }
            }
        }
    }
    try await store.close()
    try? FileManager.default.removeItem(atPath: directory)
    return elapsed
}

/// Whether a stored value is the one expected (dates to the microsecond).
private func same(_ stored: Value, _ expected: Value) -> Bool {
    if case .date(let left) = stored, case .date(let right) = expected {
        return abs(left.timeIntervalSince1970 - right.timeIntervalSince1970) < 1e-6
    }
    return stored == expected
}

/// A row of the value matrix, its files written: what its pairs import, and their times.
private struct PreparedRow {
    let variant: ValueVariant
    let baseline: ValueVariant
    let records: Int
    let file: String
    let strings: String
    let size: Int
    let stringsSize: Int
    let model: Model
    let mapping: Mapping
    /// Per pair: the all-string file's time and the row's, in seconds.
    var pairs: [(string: Double, value: Double)] = []
}
