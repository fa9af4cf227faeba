import CairnLog
import Foundation
import Glibc

/// Collects results and renders them as markdown tables, and the comparisons with peers for
/// the chart (``comparisonChart(_:title:subtitle:)``).
struct Report {
    private var rows: [(String, String, String)] = []
    private var targets: [(String, Bool, String)] = []
    /// Each operation measured for Cairn and a peer, in the order measured.
    private(set) var comparisons: [Comparison] = []
    /// The scale suite's rates at each size (for its chart, ``scaleChart(_:title:subtitle:)``).
    var scalePoints: [ScalePoint] = []

    mutating func row(_ name: String, _ figure: String, note: String = "") {
        rows.append((name, figure, note))
        print("  \(name): \(figure) \(note)")
    }

    mutating func target(_ name: String, met: Bool, figure: String) { targets.append((name, met, figure)) }

    /// Records that Cairn ran `operation` `ratio` times as fast as `peer` (for the chart).
    mutating func compare(_ suite: String, _ operation: String, peer: String = "GRDB", ratio: Double) {
        comparisons.append(Comparison(suite: suite, operation: operation, peer: peer, ratio: ratio))
    }

    var markdown: String {
        var lines = ["", "| measurement | result | notes |", "|---|---|---|"]
        lines += rows.map { "| \($0.0) | \($0.1) | \($0.2) |" }
        lines += ["", "| target | result | |", "|---|---|---|"]
        lines += targets.map { "| \($0.0) | \($0.2) | \($0.1 ? "met" : "**NOT MET**") |" }
        return lines.joined(separator: "\n")
    }
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func fixed(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }

/// A count with its thousands separated: `100,000`.
func grouped(_ count: Int) -> String {
    let digits = String(count.magnitude)
    var result = ""
    for (index, digit) in digits.enumerated() {
        if index > 0, (digits.count - index) % 3 == 0 { result += "," }
        result.append(digit)
    }
    return (count < 0 ? "-" : "") + result
}

func name(_ durability: Durability) -> String {
    switch durability {
    case .always: "always"
    case .interval(let interval): "interval(\(seconds(interval) * 1000) ms)"
    case .none: "none"
    }
}

func appendCount(durability: Durability, appenders: Int, size: Int) -> Int {
    let base: Int =
        switch durability {
        case .always: appenders == 1 ? 3000 : appenders == 8 ? 10_000 : 40_000
        default: 300_000
        }
    let budget = (quick ? 32 : 256) << 20  // bytes of payload per run at most
    return max(1000, min(quick ? base / 5 : base, budget / size))
}

/// A fresh directory for one run.
func freshStore(_ directory: String, _ name: String) -> String {
    let path = directory + "/" + name
    try? FileManager.default.removeItem(atPath: path)
    return path
}

/// `write` then `fdatasync`, `count` times: the most durable writes one thread can do.
func rawSyncLoop(directory: String, size: Int, count: Int) throws -> Double {
    let path = directory + "/raw-\(size)"
    let descriptor = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
    guard descriptor >= 0 else { throw POSIXError(.EIO) }
    defer { close(descriptor); unlink(path) }
    let bytes = [UInt8](repeating: 0x5A, count: size)
    let clock = ContinuousClock()
    let start = clock.now
    for index in 0..<count {
        _ = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, size, off_t(index * size)) }
        fdatasync(descriptor)
    }
    return Double(count) / seconds(clock.now - start)
}

/// Appends `count` payloads of about `size` bytes from `appenders` concurrent tasks.
func appendRate(directory: String, durability: Durability, size: Int, appenders: Int, count: Int) async throws -> Double {
    var options = LogOptions()
    options.durability = durability
    let log = try Log.open(at: freshStore(directory, "appends"), options: options)
    var generator = SampleRecords(seed: 42)
    let pool = (0..<1000).map { _ in size <= 256 ? generator.json() : generator.document(size: size) }
    let perTask = count / appenders
    let clock = ContinuousClock()
    let start = clock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for task in 0..<appenders {
            group.addTask {
                for index in 0..<perTask { try await log.append(pool[(task &* 7 &+ index) % pool.count]) }
            }
        }
        try await group.waitForAll()
    }
    let elapsed = seconds(clock.now - start)
    try await log.close()
    return Double(perTask * appenders) / elapsed
}

/// Appended payload bytes per stored payload byte, for small records.
func compressionRatio(directory: String, policy: CompressionPolicy, binary: Bool, count: Int) async throws -> Double {
    var options = LogOptions()
    options.durability = .none
    options.compression = policy
    let path = freshStore(directory, "ratio")
    let log = try Log.open(at: path, options: options)
    var generator = SampleRecords(seed: 7)
    for _ in 0..<count { try await log.append(binary ? generator.binary() : generator.json()) }
    try await log.close()
    return try LogInspection.inspect(directory: path).compressionRatio
}

struct ReplayResult {
    var bytes: UInt64, rawBytes: UInt64, frames: Int
    var validateGBps: Double, validateFramesPerSecond: Double
    var replayGBps: Double, replayFramesPerSecond: Double, replayRawGBps: Double
}

/// Writes a log of about `onDiskTarget` bytes (a mix of small records and 4 KiB documents),
/// then times opening it (every frame validated) and replaying it (every payload decompressed).
func replayThroughput(directory: String, onDiskTarget: Int) async throws -> ReplayResult {
    var options = LogOptions()
    options.durability = .none
    let path = freshStore(directory, "replay")
    var generator = SampleRecords(seed: 99)
    let pool = (0..<4000).map { index in index % 2 == 0 ? generator.json() : generator.document() }
    let log = try Log.open(at: path, options: options)
    let batch = 20_000
    var appended = 0
    while try LogInspectionSize.segmentBytes(path) < onDiskTarget {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<4 {
                let offset = appended + task
                group.addTask { for index in stride(from: 0, to: batch, by: 4) { try await log.append(pool[(offset + index) % pool.count]) } }
            }
            try await group.waitForAll()
        }
        appended += batch
    }
    try await log.close()
    let inspection = try LogInspection.inspect(directory: path)
    let clock = ContinuousClock()

    var readOnly = LogOptions()
    readOnly.readOnly = true
    var start = clock.now
    let validated = try Log.open(at: path, options: readOnly)
    let validateSeconds = seconds(clock.now - start)
    let frames = Int(validated.lastLSN.rawValue)

    start = clock.now
    var replayed = 0
    var rawBytes = 0
    _ = try Log.open(at: path, options: readOnly) { record in
        replayed += 1
        rawBytes += record.payload.count
    }
    let replaySeconds = seconds(clock.now - start)
    precondition(replayed == frames)
    let bytes = inspection.bytesOnDisk
    return ReplayResult(
        bytes: bytes, rawBytes: UInt64(rawBytes), frames: frames,
        validateGBps: Double(bytes) / validateSeconds / 1e9, validateFramesPerSecond: Double(frames) / validateSeconds,
        replayGBps: Double(bytes) / replaySeconds / 1e9, replayFramesPerSecond: Double(frames) / replaySeconds,
        replayRawGBps: Double(rawBytes) / replaySeconds / 1e9)
}

enum LogInspectionSize {
    /// Bytes in segment files, without reading them.
    static func segmentBytes(_ path: String) throws -> Int { try fileBytes(path, suffix: ".seg") }

    /// Bytes in the files of folder `path` whose names end in `suffix`, without reading them.
    static func fileBytes(_ path: String, suffix: String) throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(suffix) }.reduce(0) { total, name in
            total + ((try? FileManager.default.attributesOfItem(atPath: path + "/" + name)[.size] as? Int) ?? 0)
        }
    }
}
