import ArgumentParser
import CairnLog

/// `cairn verify STORE [--repair]`: check every frame and the manifest.
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check every frame, segment and the manifest of a store.",
        discussion: """
            Prints one line per segment and exits with status 1 when anything is damaged, naming \
            the file and byte offset. With --repair, a torn tail of the active segment (an \
            incomplete last write) is saved to a side file and cut off.
            """
    )

    @Argument(help: "The store's directory.")
    var store: String

    @Flag(help: "Cut a torn tail of the active segment, after saving the removed bytes to a side file.")
    var repair = false

    func run() throws {
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
        for segment in inspection.segments {
            let range = segment.lsnRange.map { "LSN \($0.lowerBound)...\($0.upperBound)" } ?? "no frames"
            let state = segment.isSealed ? "sealed" : "active"
            print("\(segment.file)  \(state)  \(segment.frames) frames  \(range)  \(Formatting.bytes(segment.bytesOnDisk))  \(describe(segment.status))")
        }
        for problem in inspection.otherProblems { print("DAMAGED: \(problem)") }
        if inspection.isHealthy {
            print("ok: \(inspection.frames) frames in \(inspection.segments.count) segments")
        } else {
            print("damaged: see above")
            throw ExitCode(1)
        }
    }

    private func describe(_ status: LogInspection.Status) -> String {
        switch status {
        case .ok: "ok"
        case .tornTail(let offset, let reason): "TORN TAIL at offset \(offset): \(reason) (cut at next open, or run verify --repair)"
        case .damaged(let error): "DAMAGED: \(error)"
        }
    }
}
