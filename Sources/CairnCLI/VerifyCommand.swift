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
            stale manifest). With --repair, a torn tail of the active segment (an incomplete last \
            write) is saved to a side file and cut off.
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
        var healthy = inspection.isHealthy
        // Frames can be whole while a record in one is not what the store accepts: read every
        // record as an open does (each change record decoded against its model).
        if healthy, let problem = await Self.recordProblem(store) {
            print("DAMAGED: \(problem)")
            healthy = false
        }
        if healthy {
            print("ok: \(inspection.frames) frames in \(inspection.segments.count) segments, every record readable")
        } else {
            print("damaged: see above")
            throw ExitCode(1)
        }
    }

    /// The error opening the store read-only gives (replaying every record), if any.
    static func recordProblem(_ store: String) async -> String? {
        do {
            guard let model = try Store.storedModel(at: store) else { return nil }
            var options = StoreOptions()
            options.readOnly = true
            let opened = try Store(at: store, model: model, options: options)
            try await opened.close()
            return nil
        } catch {
            return "records: \(error)"
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
