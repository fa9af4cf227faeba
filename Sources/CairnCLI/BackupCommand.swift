import ArgumentParser
import Cairn
import CairnLog
import Foundation

/// `cairn backup STORE DEST`: a consistent copy of a store, while processes write to it.
struct BackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy a store into a backup directory as of one LSN, while it is in use.",
        discussion: """
            The base and sealed segments are hard-linked (copied when DEST is on another file \
            system); the active segment is copied up to its last complete frame; DEST gets a \
            manifest of its own, written last. Running it again into the same DEST copies only \
            what is new, so DEST can be shipped with rclone sync or aws s3 sync. Opening DEST \
            (or a copy of it) is the restore; cairn verify DEST checks it. Shows progress on \
            standard error when it is a terminal.
            """
    )

    @Argument(help: "The store's directory.")
    var store: String

    @Argument(help: "The backup's directory (created if missing; an earlier backup of the same store is brought up to date).")
    var destination: String

    @Flag(help: "Print the result as JSON.")
    var json = false

    /// What `--json` prints.
    struct Result: Encodable {
        var store: String
        var destination: String
        var lsn: UInt64
        var linked: [String]
        var copied: [String]
        var unchanged: [String]
        var removed: [String]
        var bytesCopied: UInt64
        var seconds: Double
    }

    func run() async throws {
        try StoreLocation.requireFolder(store)
        let started = ContinuousClock.now
        var options = LogOptions()
        options.readOnly = true
        let (store, destination) = (self.store, self.destination)
        // Compacted by its writer meanwhile (busy): opened and read again, a few times.
        let report = try await Log.retryingWhileBusy { () async throws -> BackupReport in
            // Read-only: no writer lock is taken, so that the process writing the store goes on.
            // Without a replay the open checks every frame without decompressing it, and the
            // base's length: a backup copies files, it does not read their records.
            let log = try Log.open(at: store, options: options)
            let meter = ProgressMeter()
            let report: BackupReport
            do {
                report = try log.backup(to: destination) { progress in
                    meter.report(
                        fraction: progress.fractionDone,
                        "\(progress.filesDone) of \(progress.fileCount) files, "
                            + "\(Formatting.bytes(progress.bytesDone)) of \(Formatting.bytes(progress.byteCount))")
                }
            } catch {
                meter.finish()
                try? await log.close()
                throw error
            }
            meter.finish()
            try await log.close()
            return report
        }
        let elapsed = ContinuousClock.now - started
        if json {
            print(
                try JSONOutput.line(
                    Result(
                        store: store, destination: report.destination, lsn: report.lsn.rawValue, linked: report.linked, copied: report.copied,
                        unchanged: report.unchanged, removed: report.removed, bytesCopied: report.bytesCopied, seconds: elapsed.inSeconds)))
            return
        }
        print(
            "backed up \(store) to \(report.destination) as of LSN \(report.lsn): \(report.linked.count) linked, "
                + "\(report.copied.count) copied (\(Formatting.bytes(report.bytesCopied))), \(report.unchanged.count) unchanged, "
                + "\(report.removed.count) removed, in \(Formatting.duration(elapsed))")
    }
}
