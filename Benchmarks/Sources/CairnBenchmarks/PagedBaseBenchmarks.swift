@_spi(PagedBasePrototype) import Cairn
import CairnLog
import Foundation
import Glibc

/// The paged base prototype of docs/SCALE.md against today's resident store, on the scale
/// suite's people (`CAIRN_BENCH_PAGED_SIZES=1000000,10000000`; 1M by default, 100k with
/// `--quick`): the store imported and compacted, then written as a paged base from its open
/// state. Then, three times each, alternating: today's whole-process open from the base, and
/// a process that opens the paged base (its file first dropped from the page cache) and
/// measures its open, its resident memory, lookups cold from the disk, cold from the page cache
/// and warm, and a full scan cold and warm (``pagedProbe(_:count:output:)``). In process, the
/// resident store's lookups and scan of the same keys and predicate.
func pagedBaseBenchmarks(_ initial: Report, root: String, quick: Bool) async throws -> Report {
    var report = initial
    guard
        let (cairn, modelFile, sizes) = try scaleSetup(
            root: root, &report, measuring: "paged", sizes: "CAIRN_BENCH_PAGED_SIZES", quick ? [100_000] : [1_000_000])
    else { return report }
    // What an open adds to the probe whatever the size (the runtime's own growth, the model
    // decoded): the open of a paged base of one object, taken off the others' growth.
    let tinyStore = freshStore(root, "paged-one")
    _ = try PersonJSON.write(count: 1, to: root + "/paged-one.json")
    _ = try runProcess(cairn, ["import", tinyStore, "--entity", "Person", root + "/paged-one.json", "--model", modelFile])
    let tiny = try Store(at: tinyStore, model: try Person.model(indexed: true))
    _ = try tiny.writePagedBasePrototype(to: root + "/paged-one.pbase", entity: "Person")
    try await tiny.close()
    let baselines = try (0..<3).map { _ in Double(try probe(root + "/paged-one.pbase", count: 1, root: root).residentAfterOpen) }
    let baseline = Int(median(baselines))
    report.row(
        "resident growth of the open of a paged base of one object", "\(medianAndSpread(baselines, scale: 1.0 / 1024, digits: 0)) KiB",
        note: "median (range) of 3; taken off the growth of the opens and scans below")
    for count in sizes {
        report = try await pagedRound(report, count: count, root: root, cairn: cairn, modelFile: modelFile, baseline: baseline)
    }
    return report
}

/// Runs the probe process on `file` and reads its figures.
private func probe(_ file: String, count: Int, root: String) throws -> PagedProbeFigures {
    let output = root + "/paged-probe.json"
    let run = try runProcess(CommandLine.arguments[0], ["paged-probe", file, String(count), output])
    guard run.status == 0 else { throw BenchmarkFailure("the paged probe of \(file) exited with \(run.status)") }
    return try JSONDecoder().decode(PagedProbeFigures.self, from: Data(contentsOf: URL(fileURLWithPath: output)))
}

/// The lookups of the probe and of the resident store: keys spread over the store.
private let pagedLookups = 2_000

private func pagedRound(_ initial: Report, count: Int, root: String, cairn: String, modelFile: String, baseline: Int) async throws -> Report {
    var report = initial
    let size = grouped(count)
    let json = root + "/paged-\(count).json"
    _ = try PersonJSON.write(count: count, to: json)
    let store = freshStore(root, "paged-\(count)")
    let imported = try runProcess(cairn, ["import", store, "--entity", "Person", json, "--model", modelFile])
    try? FileManager.default.removeItem(atPath: json)
    let compacted = try runProcess(cairn, ["compact", store, "--level", "high"])
    guard imported.status == 0, compacted.status == 0 else {
        throw BenchmarkFailure("paged base of \(count): import exited with \(imported.status), compact with \(compacted.status)")
    }
    let baseBytes = try LogInspectionSize.fileBytes(store, suffix: ".base")

    // In process: the paged base written from the open store; the resident lookups and scan.
    let pagedFile = root + "/paged-\(count).pbase"
    let opened = try Store(at: store, model: try Person.model(indexed: true))
    var start = ContinuousClock.now
    let written = try opened.writePagedBasePrototype(to: pagedFile, entity: "Person", level: .high)
    let writeSeconds = seconds(ContinuousClock.now - start)
    let view = opened.viewContext
    let residentLookup = median(try (0..<3).map { _ in try runsPerSecond(pagedLookups) { index in try PersonQueries.lookup(view, index, count: count) } })
    _ = try PersonQueries.scan(view)
    var residentScans: [Double] = []
    for _ in 0..<3 {
        start = ContinuousClock.now
        _ = try PersonQueries.scan(view)
        residentScans.append(seconds(ContinuousClock.now - start))
    }
    try await opened.close()

    // Whole processes, alternating: today's open from the base, and the prototype's probe.
    var opens: [ProcessRun] = []
    var probes: [PagedProbeFigures] = []
    for _ in 0..<3 {
        opens.append(try runProcess(cairn, ["query", store, "--entity", "Person", "--count"]))
        probes.append(try probe(pagedFile, count: count, root: root))
    }
    let data = Double(count * dataBytesPerPerson)
    let openSeconds = probes.map(\.openSeconds)
    let openResident = probes.map { Double(max($0.residentAfterOpen - baseline, 0)) / data }
    report.row(
        "paged base of \(size): written from the open store", "\(fixed(writeSeconds, 1)) s, \(written.bytes >> 20) MiB",
        note:
            "\(written.blocks) blocks; the base: \(baseBytes >> 20) MiB; objects \(written.rawObjectBytes >> 20) MiB before compression, the keys \((written.keys * 16) >> 20) MiB"
    )
    report.row(
        "open, \(size): paged / today from the base (whole process)",
        "\(medianAndSpread(openSeconds, scale: 1000, digits: 1)) ms / \(medianAndSpread(opens.map(\.seconds))) s",
        note: "median (range) of 3, alternating; the paged open's file dropped from the page cache first")
    report.row(
        "resident after the open, \(size): paged / today",
        "\(medianAndSpread(openResident, digits: 4))× / \(fixed(median(opens.map { Double($0.peakResidentBytes) / data }), 2))× the attribute data",
        note: "paged: the process's resident growth over the open (VmRSS), less the one-object open's; today: the process's peak, runtime included")
    report.row(
        "lookup by unique key, \(size): paged cold from the disk / cold from the page cache / warm",
        "\(medianAndSpread(probes.map(\.diskLookup), scale: 1e6, digits: 0)) / \(medianAndSpread(probes.map(\.pageCacheLookup), scale: 1e6, digits: 0)) / \(medianAndSpread(probes.map(\.warmLookup), scale: 1e6, digits: 2)) µs",
        note:
            "today, resident, the same keys (a managed object fetched; the paged lookup finds its ID): \(fixed(1e6 / residentLookup, 2)) µs, median of 3; "
            + "\(pagedLookups / 2) keys each way")
    report.row(
        "full scan, email CONTAINS[c], \(size): paged cold / warm",
        "\(medianAndSpread(probes.map(\.coldScan), scale: 1000, digits: 0)) / \(medianAndSpread(probes.map(\.warmScan), scale: 1000, digits: 1)) ms",
        note:
            "today, resident (two threads): \(fixed(median(residentScans) * 1000, 1)) ms; paged, one thread, every block decoded then cached: "
            + "resident \(medianAndSpread(probes.map { Double($0.residentAfterScan - baseline) / data }))× the data after it")
    report.target(
        "paged prototype: open ≤ 0.5 s at \(size)", met: median(openSeconds) <= 0.5, figure: "\(fixed(median(openSeconds) * 1000, 1)) ms")
    report.target(
        "paged prototype: resident ≤ 0.3× the data before the first scan at \(size)", met: median(openResident) <= 0.3,
        figure: "\(fixed(median(openResident), 4))×")
    if ProcessInfo.processInfo.environment["CAIRN_BENCH_KEEP"] == nil {
        try? FileManager.default.removeItem(atPath: pagedFile)
        try? FileManager.default.removeItem(atPath: store)
    }
    return report
}

/// What one probe process measured (seconds; resident bytes over the process's own before the
/// open).
struct PagedProbeFigures: Codable {
    var openSeconds: Double
    var residentAfterOpen: Int
    var diskLookup: Double
    var pageCacheLookup: Double
    var warmLookup: Double
    var coldScan: Double
    var warmScan: Double
    var residentAfterScan: Int
}

/// The child process of the paged base benchmark (`cairn-benchmarks paged-probe FILE COUNT
/// OUTPUT`): drops the file from the page cache, opens it, then looks up keys cold from the
/// disk; opens it again after reading it once and looks up other keys cold from the page cache,
/// then the same keys warm; scans cold and warm (a new open, the file dropped again); writes the
/// figures to `output` as JSON.
func pagedProbe(_ file: String, count: Int, output: String) throws {
    let before = residentBytes()
    let keys = (0..<pagedLookups).map { Value.string(PersonQueries.lookupKey($0, count: count)) }
    func lookUp(_ paged: PagedBase, _ range: Range<Int>) throws -> Double {
        let start = ContinuousClock.now
        for index in range {
            let found = try paged.object(withKey: keys[index])
            precondition(found != nil, "key \(keys[index]) not found")
        }
        return seconds(ContinuousClock.now - start) / Double(range.count)
    }
    let half = pagedLookups / 2
    // Each open in a scope of its own, so that its mapping is gone before the file is dropped
    // from the page cache (pages a process maps stay there).
    dropFromPageCache(file)
    let (openSeconds, residentAfterOpen, diskLookup) = try {
        let start = ContinuousClock.now
        let paged = try PagedBase(path: file, cacheBytes: 16 << 30)
        let openSeconds = seconds(ContinuousClock.now - start)
        return (openSeconds, residentBytes() - before, try lookUp(paged, 0..<half))
    }()
    // Cold again, from the page cache: a new open (an empty cache of chunks) after the file
    // was read once; then warm, the same keys again.
    readWhole(file)
    let (pageCacheLookup, warmLookup) = try {
        let paged = try PagedBase(path: file, cacheBytes: 16 << 30)
        return (try lookUp(paged, half..<pagedLookups), try lookUp(paged, half..<pagedLookups))
    }()
    dropFromPageCache(file)
    let paged = try PagedBase(path: file, cacheBytes: 16 << 30)
    let scan = FetchRequest("Person", predicate: try FetchPredicate(format: "email CONTAINS[c] %@", "99@"))
    var start = ContinuousClock.now
    let matched = try paged.count(scan)
    let coldScan = seconds(ContinuousClock.now - start)
    var warm: [Double] = []
    for _ in 0..<3 {
        start = ContinuousClock.now
        let again = try paged.count(scan)
        precondition(again == matched)
        warm.append(seconds(ContinuousClock.now - start))
    }
    let figures = PagedProbeFigures(
        openSeconds: openSeconds, residentAfterOpen: residentAfterOpen, diskLookup: diskLookup, pageCacheLookup: pageCacheLookup,
        warmLookup: warmLookup, coldScan: coldScan, warmScan: median(warm), residentAfterScan: residentBytes() - before)
    try JSONEncoder().encode(figures).write(to: URL(fileURLWithPath: output))
}

/// Asks the kernel to drop the file's pages from the page cache (they are clean: the writer
/// synced them), so that the next reads come from the disk.
private func dropFromPageCache(_ file: String) {
    let descriptor = open(file, O_RDONLY)
    guard descriptor >= 0 else { return }
    _ = posix_fadvise(descriptor, 0, 0, Int32(POSIX_FADV_DONTNEED))
    close(descriptor)
}

/// Reads the whole file once, so that its pages are in the page cache.
private func readWhole(_ file: String) {
    let descriptor = open(file, O_RDONLY)
    guard descriptor >= 0 else { return }
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    while buffer.withUnsafeMutableBytes({ read(descriptor, $0.baseAddress, $0.count) }) > 0 {}
    close(descriptor)
}
