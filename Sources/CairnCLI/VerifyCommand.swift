import ArgumentParser
import Cairn
import CairnLog
import Foundation

/// `cairn verify STORE [--repair]`: check every frame, every record and the manifest.
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check every frame, record, segment and the manifest of a store.",
        discussion: """
            Prints one line per segment and exits with status 1 when anything is damaged, naming \
            the file and byte offset: a frame that fails its checks, a record the store would \
            refuse at open, or a segment the manifest does not list although it holds frames (a \
            stale manifest). A log whose records are not an object graph's (written with CairnLog \
            alone) has its frames checked and exits 0 when they are sound. A compaction by another \
            process while it reads makes it read again. With --repair, a torn tail of the active \
            segment (an incomplete last write) is saved to a side file and cut off; a frame whose \
            header checksum holds is never cut. Shows progress on standard error when it is a \
            terminal; --json prints the findings as one JSON object.
            """
    )

    @Argument(help: "The store's directory.")
    var store: String

    @Flag(help: "Cut a torn tail of the active segment, after saving the removed bytes to a side file.")
    var repair = false

    @Flag(help: "Print the findings as JSON.")
    var json = false

    func run() async throws {
        try StoreLocation.requireFolder(store)
        if repair {
            let result = try Log.repairTornTail(directory: store)
            let line =
                if let segment = result.segment, let offset = result.offset, let saved = result.savedTo {
                    "repaired: cut \(result.bytes) bytes at offset \(offset) of \(segment); saved them to \(saved)"
                } else {
                    "repair: no torn tail to cut"
                }
            // (With --json, standard output holds the JSON alone.)
            if json { FileHandle.standardError.write(Data((line + "\n").utf8)) } else { print(line) }
        }
        // The library reads again when a compaction in another process replaces the files under
        // it; when that keeps happening, the whole check starts over, as `backup` does. Only the
        // report of the check that ran to its end is printed.
        let store = self.store
        let meter = ProgressMeter()
        defer { meter.finish() }
        let report = try await Log.retryingWhileBusy { try await Self.check(store, meter: meter) }
        meter.finish()
        if json {
            var findings = report.findings
            findings.sound = report.isSound
            print(try JSONOutput.line(findings))
        } else {
            print(report.lines.joined(separator: "\n"))
        }
        if !report.isSound { throw ExitCode(1) }
    }

    /// What one check found: the lines to print, the findings `--json` prints, and whether the
    /// store was found sound.
    struct Report {
        var lines: [String] = []
        var findings: Findings
        var isSound = true

        mutating func fail(_ lines: String...) {
            self.lines += lines
            findings.problems += lines
            isSound = false
        }
    }

    /// What `--json` prints.
    struct Findings: Encodable {
        /// One checked file: the base, a segment.
        struct File: Encodable {
            var file: String
            var kind: String
            var frames: UInt64?
            var firstLSN: UInt64?
            var lastLSN: UInt64?
            var bytesOnDisk: UInt64
            var status: String
        }

        var store: String
        var sound = true
        var manifestGeneration: UInt64?
        var dictionaries: Int?
        var frames: UInt64?
        var files: [File] = []
        var unlisted: [String] = []
        /// `readable`, `not an object graph`, `newer format`, `not checked`, `damaged`.
        var records = "not checked"
        var problems: [String] = []
    }

    /// One check of the frames, then of the records. A file the reader cannot open or read for
    /// another reason than its absence (too many open files, no permission: an I/O error of the
    /// reader, not damage of the store) makes the report say the store could not be checked.
    static func check(_ store: String, meter: ProgressMeter) async throws -> Report {
        var report = Report(findings: Findings(store: store))
        let inspection: LogInspection
        do {
            inspection = try LogInspection.inspect(directory: store) { done, total in
                meter.report(fraction: total == 0 ? 1 : Double(done) / Double(total), "frames: \(done) of \(total) segments checked")
            }
        } catch let error as LogError where error.isReaderIOError {
            report.fail("could not be checked: \(error)")
            return report
        }
        if let note = inspection.manifestNote { report.lines.append("manifest: \(note)") }
        report.lines.append("manifest generation \(inspection.manifestGeneration), \(inspection.dictionaries) dictionaries")
        report.findings.manifestGeneration = inspection.manifestGeneration
        report.findings.dictionaries = inspection.dictionaries
        report.findings.frames = inspection.frames
        report.findings.files =
            inspection.base.map { base in
                [
                    Findings.File(
                        file: base.file, kind: "base", lastLSN: base.lastLSN.rawValue, bytesOnDisk: base.bytesOnDisk,
                        status: base.statusText)
                ]
            } ?? []
        report.findings.files += inspection.segments.map { segment in
            Findings.File(
                file: segment.file, kind: segment.isSealed ? "sealed" : "active", frames: segment.frames,
                firstLSN: segment.lsnRange?.lowerBound.rawValue, lastLSN: segment.lsnRange?.upperBound.rawValue,
                bytesOnDisk: segment.bytesOnDisk, status: describe(segment.status))
        }
        report.findings.unlisted = inspection.unlistedFiles.map(\.name)
        if let base = inspection.base {
            report.lines.append(
                "\(base.file)  base  state as of LSN \(base.lastLSN)  \(Formatting.bytes(base.bytesOnDisk))  \(base.damage == nil ? "ok" : "DAMAGED")")
        }
        for segment in inspection.segments {
            let range = segment.lsnRange.map { "LSN \($0.lowerBound)...\($0.upperBound)" } ?? "no frames"
            let state = segment.isSealed ? "sealed" : "active"
            report.lines.append(
                "\(segment.file)  \(state)  \(segment.frames) frames  \(range)  \(Formatting.bytes(segment.bytesOnDisk))  \(describe(segment.status))")
        }
        for file in inspection.unlistedFiles {
            let verdict =
                file.holdsUnaccountedFrames
                ? "NOT IN THE MANIFEST, HOLDS FRAMES (opening refuses the store)"
                : file.isSideFile ? "kept" : "left-over (a writable open removes it)"
            report.lines.append("\(file.name)  \(verdict): \(file.reason)")
        }
        for problem in inspection.otherProblems {
            report.lines.append("DAMAGED: \(problem)")
            report.findings.problems.append("\(problem)")
        }
        guard inspection.isHealthy else {
            // (`--json` names the damaged files in `files`, each with its status.)
            report.lines.append("damaged: see above")
            report.findings.problems.append("damaged: a file is not sound (see each file's status)")
            report.isSound = false
            return report
        }
        // Frames can be whole while a record in one is not what the store accepts: read every
        // record as an open does (each change record decoded against its model).
        let frames = "\(inspection.frames) frames in \(inspection.segments.count) segments"
        meter.report(fraction: 1, "frames checked; reading every record")
        switch try await checkRecords(store) {
        case .readable:
            report.lines.append("ok: \(frames), every record readable")
            report.findings.records = "readable"
        case .notObjectGraph(let reason):
            report.lines.append("ok: \(frames), every frame sound")
            report.lines.append("records: not an object graph's, so not checked as records (\(reason))")
            report.findings.records = "not an object graph"
        case .newerFormat(let reason):
            report.lines.append("frames ok: \(frames), every frame sound")
            report.fail("records: not checked: \(reason); use a version of cairn that reads them")
            report.findings.records = "newer format"
        case .uncheckable(let reason):
            report.lines.append("frames ok: \(frames), every frame sound")
            report.fail("records: could not be checked: \(reason)")
        case .damaged(let problem):
            report.fail("DAMAGED: records: \(problem)")
            report.lines.append("damaged: see above")
            report.findings.records = "damaged"
        }
        return report
    }

    /// What reading every record found.
    enum RecordCheck {
        /// Every record read as an open reads it (or the log holds none yet).
        case readable
        /// The log's records are not an object graph's (a log written with CairnLog alone).
        case notObjectGraph(String)
        /// The records are in a format this build does not read (a newer version of Cairn's).
        case newerFormat(String)
        /// The reader could not open or read a file (an I/O error of the reader's, not damage).
        case uncheckable(String)
        /// A record the store would refuse at open.
        case damaged(String)
    }

    /// Opens the store read-only with the model it holds, replaying every record. A `busy`
    /// error (compacted meanwhile, again and again; or migrated by another process between the
    /// reading of its model and the open) is thrown, never called damage.
    static func checkRecords(_ store: String) async throws -> RecordCheck {
        do {
            guard let model = try Store.storedModel(at: store) else { return .readable }
            var options = readOnlyOptions()
            options.modelMismatch = .fail
            let opened: Store
            do {
                opened = try Store(at: store, model: model, options: options)
            } catch let error as StoreError where error.code == .modelMismatch && (try? Store.storedModel(at: store)) != model {
                throw LogError(.busy, "the store's model changed (migrated) while it was checked: \(error.message)", path: store)
            }
            try await opened.close()
            return .readable
        } catch let error as LogError where error.code == .busy {
            throw error
        } catch let error as LogError where error.isReaderIOError {
            return .uncheckable(error.description)
        } catch let error as StoreError where error.code == .notObjectGraph {
            return .notObjectGraph(error.description)
        } catch let error as StoreError where error.code == .unsupportedFormat {
            return .newerFormat(error.description)
        } catch {
            return .damaged("\(error)")
        }
    }

    private static func describe(_ status: LogInspection.Status) -> String {
        switch status {
        case .ok: "ok"
        case .tornTail(let offset, let reason):
            "TORN TAIL at offset \(offset): \(reason) (a writable open, or verify --repair, saves it to a side file and cuts it)"
        case .writeInProgress(let offset, let reason):
            "ok, a write in progress at offset \(offset) (another process holds the store for writing): \(reason)"
        case .damaged(let error): "DAMAGED: \(error)"
        }
    }
}
