import ArgumentParser
import Cairn
import CairnLog

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
            header checksum holds is never cut.
            """
    )

    @Argument(help: "The store's directory.")
    var store: String

    @Flag(help: "Cut a torn tail of the active segment, after saving the removed bytes to a side file.")
    var repair = false

    func run() async throws {
        try StoreLocation.requireFolder(store)
        if repair {
            let result = try Log.repairTornTail(directory: store)
            if let segment = result.segment, let offset = result.offset, let saved = result.savedTo {
                print("repaired: cut \(result.bytes) bytes at offset \(offset) of \(segment); saved them to \(saved)")
            } else {
                print("repair: no torn tail to cut")
            }
        }
        // The library reads again when a compaction in another process replaces the files under
        // it; when that keeps happening, the whole check starts over, as `backup` does. Only the
        // report of the check that ran to its end is printed.
        let store = self.store
        let report = try await Log.retryingWhileBusy { try await Self.check(store) }
        print(report.lines.joined(separator: "\n"))
        if !report.isSound { throw ExitCode(1) }
    }

    /// What one check found: the lines to print, and whether the store was found sound.
    struct Report {
        var lines: [String] = []
        var isSound = true

        mutating func fail(_ lines: String...) {
            self.lines += lines
            isSound = false
        }
    }

    /// One check of the frames, then of the records. A file the reader cannot open or read for
    /// another reason than its absence (too many open files, no permission: an I/O error of the
    /// reader, not damage of the store) makes the report say the store could not be checked.
    static func check(_ store: String) async throws -> Report {
        var report = Report()
        let inspection: LogInspection
        do {
            inspection = try LogInspection.inspect(directory: store)
        } catch let error as LogError where error.isReaderIOError {
            report.fail("could not be checked: \(error)")
            return report
        }
        if let note = inspection.manifestNote { report.lines.append("manifest: \(note)") }
        report.lines.append("manifest generation \(inspection.manifestGeneration), \(inspection.dictionaries) dictionaries")
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
        for problem in inspection.otherProblems { report.lines.append("DAMAGED: \(problem)") }
        guard inspection.isHealthy else {
            report.fail("damaged: see above")
            return report
        }
        // Frames can be whole while a record in one is not what the store accepts: read every
        // record as an open does (each change record decoded against its model).
        let frames = "\(inspection.frames) frames in \(inspection.segments.count) segments"
        switch try await checkRecords(store) {
        case .readable:
            report.lines.append("ok: \(frames), every record readable")
        case .notObjectGraph(let reason):
            report.lines.append("ok: \(frames), every frame sound")
            report.lines.append("records: not an object graph's, so not checked as records (\(reason))")
        case .newerFormat(let reason):
            report.lines.append("frames ok: \(frames), every frame sound")
            report.fail("records: not checked: \(reason); use a version of cairn that reads them")
        case .uncheckable(let reason):
            report.lines.append("frames ok: \(frames), every frame sound")
            report.fail("records: could not be checked: \(reason)")
        case .damaged(let problem):
            report.fail("DAMAGED: records: \(problem)", "damaged: see above")
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
