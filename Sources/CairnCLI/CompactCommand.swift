import ArgumentParser
import Cairn
import CairnLog
import CairnSupport
import Glibc

extension CompactionLevel: ExpressibleByArgument {}

/// `cairn compact STORE [--level fast|high] [--retain-history LSN] [--even-if-larger] [--json]`:
/// rewrite a store that no process has open down to its live state.
struct CompactCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact",
        abstract: "Rewrite a store down to its live state (a base file), offline.",
        usage: "cairn compact <store> [<options>]",
        discussion: """
            The store must not be open in another process: compact refuses, naming the process \
            that holds it. Shows progress on standard error when it is a terminal, and prints the \
            sizes before and after and the time taken. Memory use is that of the live objects, \
            whatever the log's length. A crash or kill at any moment leaves the store as it was or \
            compacted, never in between. A base that would not make the store smaller (a store \
            with few dead bytes) is removed and the store keeps its files, saying so (the active \
            segment stays sealed); \
            --even-if-larger installs it anyway (a store opens from a base faster than it replays \
            its frames).
            """
    )

    @Argument(help: "The store's directory.")
    var store: String

    @Option(help: "How hard the base is compressed: fast (LZ4) or high (LZ4-HC, smaller).")
    var level: CompactionLevel = .high

    @Option(
        name: .customLong("retain-history"),
        help: "Keep every save after this LSN in the log, so that the store can still be read as of any LSN from there on.")
    var retainHistory: UInt64?

    @Flag(help: "Install the base even when it is not smaller than the files it replaces.")
    var evenIfLarger = false

    @Flag(help: "Print the result as JSON.")
    var json = false

    /// What `--json` prints.
    struct Result: Encodable {
        var store: String
        var compacted: Bool
        var lsn: UInt64
        var objects: Int
        var bytesBefore: UInt64
        var bytesAfter: UInt64
        var baseBytes: UInt64
        var level: String
        var seconds: Double
        var removedFiles: [String]
        var skipped: String?
    }

    func run() async throws {
        try StoreLocation.requireFolder(store)
        // The model is read first, read-only: a writable open changes files (a manifest's frame
        // limit, a promoted `MANIFEST.tmp`) before it could find that the log is not a store's.
        guard let model = try Store.storedModel(at: store) else { throw CommandFailure("\(store) holds no model yet") }
        var options = StoreOptions()
        options.automaticCompaction = .disabled
        let opened = try Store(at: store, model: model, options: options)
        RecoveryWarning.print(opened.recoveryReport, store: store)
        let meter = ProgressMeter()
        let report: CompactionReport
        do {
            report = try await opened.compact(
                level: level, retainHistory: retainHistory.map { .since(LSN($0)) }, onlyIfSmaller: !evenIfLarger
            ) { progress in
                let seconds = progress.elapsed.inSeconds
                let rate = seconds > 0 ? Double(progress.bytesWritten) / seconds : 0
                let left =
                    rate > 0 && progress.bytesExpected > progress.bytesWritten
                    ? ", \(Int((Double(progress.bytesExpected - progress.bytesWritten) / rate).rounded(.up))) s left" : ""
                meter.report(
                    fraction: progress.fractionDone,
                    "\(Formatting.bytes(progress.bytesWritten)) of \(Formatting.bytes(progress.bytesExpected)), "
                        + "\(Formatting.bytes(UInt64(rate)))/s\(left)")
            }
        } catch {
            meter.finish()
            try? await opened.close()
            throw error
        }
        meter.finish()
        try await opened.close()
        if json {
            print(
                try JSONOutput.line(
                    Result(
                        store: store, compacted: report.skipped == nil, lsn: report.lsn.rawValue, objects: report.objects,
                        bytesBefore: report.bytesBefore, bytesAfter: report.bytesAfter, baseBytes: report.baseBytes, level: level.rawValue,
                        seconds: report.duration.inSeconds, removedFiles: report.removedFiles, skipped: report.skipped?.description)))
        } else if let skipped = report.skipped {
            var why = "\(skipped)"
            if case .wouldNotShrink(let base, let replaced) = skipped {
                why =
                    "a base of \(Formatting.bytes(base)) would have replaced \(Formatting.bytes(replaced)) of files (few dead bytes to drop); "
                    + "--even-if-larger installs it anyway"
            }
            print(
                "left \(store) as it was, \(Formatting.bytes(report.bytesBefore)) -> \(Formatting.bytes(report.bytesAfter)) "
                    + "(\(report.objects) objects): \(why); in \(Formatting.duration(report.duration))")
        } else {
            print(
                "compacted \(store) at LSN \(report.lsn): \(Formatting.bytes(report.bytesBefore)) -> \(Formatting.bytes(report.bytesAfter)) "
                    + "(\(report.objects) objects, base \(Formatting.bytes(report.baseBytes)), \(level.rawValue)) in \(Formatting.duration(report.duration))"
            )
        }
    }
}
