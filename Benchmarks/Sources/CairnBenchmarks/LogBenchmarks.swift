import CairnLog
import Foundation

/// The log's benchmarks: appends per durability mode and concurrency beside a raw fdatasync loop,
/// compression of small records, replay of a large log.
func logBenchmarks(_ initial: Report, root: String, quick: Bool) async throws -> Report {
    var report = initial
    // MARK: Appends, with the raw write + fdatasync loop of the same disk beside them.

    let raw200 = try rawSyncLoop(directory: root, size: 200, count: quick ? 500 : 3000)
    let raw4k = try rawSyncLoop(directory: root, size: 4096, count: quick ? 500 : 3000)
    report.row("raw write+fdatasync loop, 200 B", "\(Int(raw200)) ops/s", note: "the disk's limit for one writer")
    report.row("raw write+fdatasync loop, 4 KiB", "\(Int(raw4k)) ops/s")

    var single200 = 0.0, durable64 = 0.0, bestNone = 0.0
    for size in [200, 4096] {
        for durability in [Durability.always, .interval(.milliseconds(10)), .none] {
            for appenders in [1, 8, 64] {
                let count = appendCount(durability: durability, appenders: appenders, size: size)
                let rate = try await appendRate(directory: root, durability: durability, size: size, appenders: appenders, count: count)
                report.row(
                    "append \(size == 200 ? "200 B" : "4 KiB"), \(name(durability)), \(appenders) appender\(appenders == 1 ? "" : "s")",
                    "\(Int(rate)) appends/s", note: "\(count) appends")
                if size == 200 && durability == .always && appenders == 1 { single200 = rate }
                if size == 200 && durability == .always && appenders == 64 { durable64 = rate }
                if durability == .none { bestNone = max(bestNone, rate) }
            }
        }
    }
    // The disk's speed drifts between runs, so the single-appender comparison alternates short runs
    // of the raw loop and of the log, and compares the medians.
    var rawRuns: [Double] = [], logRuns: [Double] = []
    for _ in 0..<(quick ? 3 : 7) {
        rawRuns.append(try rawSyncLoop(directory: root, size: 200, count: 500))
        logRuns.append(try await appendRate(directory: root, durability: .always, size: 200, appenders: 1, count: 500))
    }
    let rawMedian = rawRuns.sorted()[rawRuns.count / 2], logMedian = logRuns.sorted()[logRuns.count / 2]
    report.row(
        "alternating runs, raw loop vs 1 durable appender (200 B), medians", "\(Int(rawMedian)) vs \(Int(logMedian)) ops/s",
        note: "\(rawRuns.count) runs of 500 each")
    report.target(
        "single durable appender ≥ 0.8× raw fdatasync loop (200 B)", met: logMedian >= 0.8 * rawMedian,
        figure: "\(fixed(logMedian / rawMedian, 2))× (medians of alternating runs; one long run: \(fixed(single200 / raw200, 2))×)")
    report.target("≥ 20k durable appends/s with 64 appenders (200 B)", met: durable64 >= 20_000, figure: "\(Int(durable64)) appends/s")
    report.target("≥ 300k appends/s with .none", met: bestNone >= 300_000, figure: "\(Int(bestNone)) appends/s")

    // MARK: Compression of small realistic records.

    var jsonDictionary = 0.0, binaryDictionary = 0.0
    for kind in ["JSON", "binary"] {
        for policy in [CompressionPolicy.lz4, .lz4Dictionary] {
            let ratio = try await compressionRatio(directory: root, policy: policy, binary: kind == "binary", count: quick ? 5000 : 20000)
            report.row(
                "compression ratio, small \(kind) records (\(kind == "JSON" ? "~250" : "~130") B), \(policy == .lz4 ? "LZ4 alone" : "LZ4 + dictionary")",
                fixed(ratio, 2), note: "payload bytes appended / stored")
            if policy == .lz4Dictionary { if kind == "JSON" { jsonDictionary = ratio } else { binaryDictionary = ratio } }
        }
    }
    report.target(
        "small-record compression ratio ≥ 1.4 (with dictionary)", met: min(jsonDictionary, binaryDictionary) >= 1.4,
        figure: "JSON \(fixed(jsonDictionary, 2)), binary \(fixed(binaryDictionary, 2))")

    // MARK: Replay and validation of a large log.

    let replay = try await replayThroughput(directory: root, onDiskTarget: quick ? 128 << 20 : 1 << 30)
    report.row(
        "log size on disk", "\(fixed(Double(replay.bytes) / Double(1 << 30), 2)) GiB",
        note: "\(replay.frames) frames, \(fixed(Double(replay.rawBytes) / Double(1 << 30), 2)) GiB of payload")
    report.row(
        "open: validate every frame (checksums, no decompression)", "\(fixed(replay.validateGBps, 2)) GB/s",
        note: "\(Int(replay.validateFramesPerSecond)) frames/s")
    report.row(
        "open + replay: validate and decompress every payload", "\(fixed(replay.replayGBps, 2)) GB/s on disk",
        note: "\(Int(replay.replayFramesPerSecond)) frames/s, \(fixed(replay.replayRawGBps, 2)) GB/s of payload")
    report.target("replay validation ≥ 1 GB/s", met: replay.validateGBps >= 1, figure: "\(fixed(replay.validateGBps, 2)) GB/s")
    return report
}
