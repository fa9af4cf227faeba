import ArgumentParser
import CairnLog
import CairnSupport
import Glibc

/// `CairnCrashHelper STORE`: appends until killed, printing `ack LSN ID` for each
/// acknowledged append. The crash tests kill it with SIGKILL at random moments and check that
/// every acknowledged frame survives. A test-only executable: it is not part of `cairn`.
@main
struct CrashHelperCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cairn-crash-helper",
        abstract: "Append until killed, printing each acknowledged LSN (for crash tests)."
    )

    @Argument(help: "The store's directory.")
    var store: String

    @Option(help: "Concurrent appenders.")
    var appenders = 4

    @Option(help: "Segment size in bytes.")
    var segmentSize = 64 << 10

    @Option(help: "Stop after this many appends (0: open, print 'ready', and wait to be killed).")
    var maxRecords = Int.max

    @Flag(help: "Save object-graph batches from concurrent contexts instead of appending raw frames.")
    var graph = false

    @Option(help: "With --graph: compact the store every this many milliseconds while saving (0: never).")
    var compactEvery = 0

    @Option(help: "With --compact-every: end the process (exit status 9) at this named step of the first compaction.")
    var crashAt: String?

    func validate() throws {
        guard (1...1024).contains(appenders) else { throw ValidationError("--appenders takes 1 to 1024") }
    }

    func run() async throws {
        if graph {
            let step = try crashAt.map { name in
                guard let step = CompactionStep(rawValue: name) else { throw ValidationError("no compaction step \(name)") }
                return step
            }
            try await GraphCrashHelper.run(
                store: store, writers: appenders, segmentSize: segmentSize, compactEvery: compactEvery, crashAt: step, emit: emit)
            return
        }
        var options = LogOptions()
        options.segmentSize = segmentSize
        let log = try Log.open(at: store, options: options)
        emit("ready \(getpid()) \(log.lastLSN)")
        guard maxRecords > 0 else {
            while true { try await Task.sleep(for: .seconds(3600)) }
        }
        let counter = IDCounter()
        let limit = maxRecords
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<appenders {
                group.addTask {
                    while true {
                        let id = counter.next()
                        guard id <= limit else { return }
                        let lsn = try await log.append(CrashPayload.make(id: UInt64(id)))
                        emit("ack \(lsn) \(id)")
                    }
                }
            }
            try await group.waitForAll()
        }
        try await log.close()
        emit("done")
    }
}

/// The payload for append number `id`: `id:<id>;` followed by filler to a length that
/// depends on the id, so that a reader can tell a whole payload from a partial one.
enum CrashPayload {
    static func length(id: UInt64) -> Int { 40 + Int((id &* 7919) % 600) }

    static func make(id: UInt64) -> [UInt8] {
        var bytes = Array("id:\(id);".utf8)
        var value = id
        while bytes.count < length(id: id) {
            value = value &* 6364136223846793005 &+ 1442695040888963407
            bytes.append(UInt8(ascii: "a") + UInt8((value >> 59) % 26))
        }
        return bytes
    }
}

/// Writes one line to standard output at once (a single `write`, so lines never interleave).
@Sendable func emit(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    bytes.withUnsafeBytes { _ = write(1, $0.baseAddress, $0.count) }
}

/// Hands out append numbers 1, 2, 3… to concurrent appenders.
private final class IDCounter: Sendable {
    private let value = Protected(0)
    func next() -> Int {
        value.withLock { value in
            value += 1
            return value
        }
    }
}
