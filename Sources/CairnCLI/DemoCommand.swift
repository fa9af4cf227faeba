import ArgumentParser
import CairnLog

/// `cairn demo [--dir PATH]`: the main job until the object graph lands — append realistic
/// records, reopen, verify, print statistics, and leave the store for the other commands.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Append realistic records to a store, reopen it, verify it and print its statistics."
    )

    @Option(help: "The store's directory (created when missing; appended to when it exists).")
    var dir = "cairn-demo.store"

    @Option(help: "How many records to append.")
    var records = 5000

    @Option(help: "How many tasks append at once (their appends share syncs: group commit).")
    var appenders = 8

    func run() async throws {
        guard records > 0, appenders > 0 else { throw ValidationError("--records and --appenders must be positive") }
        print("Cairn log demo: \(records) change records of a lending-library app, \(appenders) concurrent appenders, durable appends")
        let log = try Log.open(at: dir)
        if !log.recoveryReport.isClean { print("recovery at open: \(log.recoveryReport)") }
        let before = log.lastLSN
        let clock = ContinuousClock()
        let started = clock.now
        let perAppender = (records + appenders - 1) / appenders
        try await withThrowingTaskGroup(of: Void.self) { group in
            for appender in 0..<appenders {
                let count = min(perAppender, records - appender * perAppender)
                guard count > 0 else { continue }
                group.addTask {
                    var generator = DemoRecords(seed: before.rawValue &* 131 &+ UInt64(appender))
                    for _ in 0..<count { try await log.append(generator.next()) }
                }
            }
            try await group.waitForAll()
        }
        let elapsed = clock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print("appended LSN \(before.next)...\(log.lastLSN) in \(Formatting.fixed(seconds * 1000, 1)) ms "
              + "(\(Int(Double(records) / max(seconds, 1e-9))) durable appends/s)")
        try await log.close()

        let reopened = try Log.open(at: dir)
        var count = 0
        var rawBytes = 0
        try reopened.records(from: before.next).forEach { record in
            guard record.payload.first == UInt8(ascii: "{") else {
                throw ValidationError("record \(record.lsn) does not hold the JSON that was appended")
            }
            count += 1
            rawBytes += record.payload.count
        }
        try await reopened.close()
        guard count == records else { throw ValidationError("reopened log holds \(count) new records, expected \(records)") }
        print("reopened: read back all \(count) records (\(Formatting.bytes(UInt64(rawBytes))))")

        let inspection = try LogInspection.inspect(directory: dir)
        print(inspection.isHealthy ? "verify: every frame checks out" : "verify: DAMAGED")
        print(StoreStatistics(inspection).table)
        print("\nThe store stays in \(dir). Try:  cairn verify \(dir)   cairn stats \(dir) --json")
        if !inspection.isHealthy { throw ExitCode(1) }
    }
}
