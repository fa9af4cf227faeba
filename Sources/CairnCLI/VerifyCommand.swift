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
        if repair {
            let result = try Log.repairTornTail(directory: store)
            if let segment = result.segment, let offset = result.offset, let saved = result.savedTo {
                print("repaired: cut \(result.bytes) bytes at offset \(offset) of \(segment); saved them to \(saved)")
            } else {
                print("repair: no torn tail to cut")
            }
        }
        // The library reads again when a compaction in another process replaces the files under
        // it; when that keeps happening, the whole check starts over, as `backup` does.
        var attempt = 1
        while true {
            do {
                return try await check()
            } catch let error as LogError where error.code == .busy && attempt < 5 {
                print("the store was compacted while it was read: checking again")
                attempt += 1
            }
        }
    }

    /// One check of the frames, then of the records; throws `ExitCode(1)` when damaged.
    private func check() async throws {
        let inspection = try LogInspection.inspect(directory: store)
        if let note = inspection.manifestNote { print("manifest: \(note)") }
        print("manifest generation \(inspection.manifestGeneration), \(inspection.dictionaries) dictionaries")
        if let base = inspection.base {
            print("\(base.file)  base  state as of LSN \(base.lastLSN)  \(Formatting.bytes(base.bytesOnDisk))  \(base.damage == nil ? "ok" : "DAMAGED")")
        }
        for segment in inspection.segments {
            let range = segment.lsnRange.map { "LSN \($0.lowerBound)...\($0.upperBound)" } ?? "no frames"
            let state = segment.isSealed ? "sealed" : "active"
            print("\(segment.file)  \(state)  \(segment.frames) frames  \(range)  \(Formatting.bytes(segment.bytesOnDisk))  \(describe(segment.status))")
        }
        for file in inspection.unlistedFiles {
            let verdict =
                file.holdsUnaccountedFrames
                ? "NOT IN THE MANIFEST, HOLDS FRAMES (opening refuses the store)"
                : file.isSideFile ? "kept" : "left-over (a writable open removes it)"
            print("\(file.name)  \(verdict): \(file.reason)")
        }
        for problem in inspection.otherProblems { print("DAMAGED: \(problem)") }
        guard inspection.isHealthy else {
            print("damaged: see above")
            throw ExitCode(1)
        }
        // Frames can be whole while a record in one is not what the store accepts: read every
        // record as an open does (each change record decoded against its model).
        switch try await Self.checkRecords(store) {
        case .readable:
            print("ok: \(inspection.frames) frames in \(inspection.segments.count) segments, every record readable")
        case .notObjectGraph(let reason):
            print("ok: \(inspection.frames) frames in \(inspection.segments.count) segments, every frame sound")
            print("records: not an object graph's, so not checked as records (\(reason))")
        case .newerFormat(let reason):
            print("frames ok: \(inspection.frames) frames in \(inspection.segments.count) segments, every frame sound")
            print("records: not checked: \(reason); use a version of cairn that reads them")
            throw ExitCode(1)
        case .damaged(let problem):
            print("DAMAGED: records: \(problem)")
            print("damaged: see above")
            throw ExitCode(1)
        }
    }

    /// What reading every record found.
    enum RecordCheck {
        /// Every record read as an open reads it (or the log holds none yet).
        case readable
        /// The log's records are not an object graph's (a log written with CairnLog alone).
        case notObjectGraph(String)
        /// The records are in a format this build does not read (a newer version of Cairn's).
        case newerFormat(String)
        /// A record the store would refuse at open.
        case damaged(String)
    }

    /// Opens the store read-only, replaying every record. A `busy` error (compacted meanwhile,
    /// again and again) is thrown, never called damage.
    static func checkRecords(_ store: String) async throws -> RecordCheck {
        do {
            guard let model = try Store.storedModel(at: store) else { return .readable }
            var options = StoreOptions()
            options.readOnly = true
            let opened = try Store(at: store, model: model, options: options)
            try await opened.close()
            return .readable
        } catch let error as LogError where error.code == .busy {
            throw error
        } catch let error as StoreError where error.code == .notObjectGraph {
            return .notObjectGraph(error.description)
        } catch let error as StoreError where error.code == .unsupportedFormat {
            return .newerFormat(error.description)
        } catch {
            return .damaged("\(error)")
        }
    }

    private func describe(_ status: LogInspection.Status) -> String {
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
