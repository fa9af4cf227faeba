import CairnTestSupport
import Glibc
import Testing
@testable import CairnLog

@Suite struct FaultInjectionTests {
    enum Position: CaseIterable, Sendable { case first, middle, last }

    struct Scenario: Sendable, CustomTestStringConvertible {
        var operation: FaultOperation
        var fault: Fault
        var position: Position
        var testDescription: String { "\(fault) on \(operation) at the \(position) operation" }
    }

    static let scenarios: [Scenario] = {
        let faults: [(FaultOperation, Fault)] = [
            (.write, .error(EIO)), (.sync, .error(EIO)), (.write, .shortThenError(ENOSPC)),
            (.write, .error(ENOSPC)), (.write, .shortWrite)
        ]
        return faults.flatMap { operation, fault in Position.allCases.map { Scenario(operation: operation, fault: fault, position: $0) } }
    }()

    static let appends = 60

    /// Opens a store and appends, acknowledging what succeeds; returns the acknowledged
    /// payloads by LSN and the errors, in order.
    static func workload(_ store: String, io: FaultyFileIO) async -> (acknowledged: [LSN: [UInt8]], errors: [LogError]) {
        var options = smallSegments(4096)
        options.fileIO = io
        var acknowledged: [LSN: [UInt8]] = [:]
        var errors: [LogError] = []
        do {
            let log = try Log.open(at: store, options: options)
            for index in 0..<appends {
                do {
                    let bytes = payload(index, size: 150)
                    acknowledged[try await log.append(bytes)] = bytes
                } catch let error as LogError {
                    errors.append(error)
                } catch {
                    Issue.record("unexpected error type: \(error)")
                }
            }
            try? await log.close()
        } catch let error as LogError {
            errors.append(error)
        } catch {
            Issue.record("unexpected error type: \(error)")
        }
        return (acknowledged, errors)
    }

    @Test(arguments: scenarios)
    func faultGivesAClearErrorAndReopenShowsExactlyTheAcknowledgedFrames(_ scenario: Scenario) async throws {
        // A dry run counts the operations of the workload, opening included.
        let dry = TemporaryDirectory()
        let counter = FaultyFileIO()
        _ = await Self.workload(dry.store(), io: counter)
        let total = scenario.operation == .write ? counter.writeCount : counter.syncCount
        var call =
            switch scenario.position {
            case .first: 1
            case .middle: total / 2
            case .last: total - 1  // the last one is the sync at close; the one before it is an append's
            }
        // (A write of ACKNOWLEDGED after the open is advisory, not the log's failure: the middle
        // write is the next one of a store file.)
        if scenario.operation == .write && scenario.position == .middle {
            let paths = counter.writePaths
            while call < paths.count && paths[call - 1].hasSuffix(AcknowledgedFile.name) { call += 1 }
        }

        let directory = TemporaryDirectory()
        let io = FaultyFileIO()
        io.inject(scenario.fault, at: scenario.operation, call: call)
        let (acknowledged, errors) = await Self.workload(directory.store(), io: io)

        if scenario.fault == .shortWrite {
            #expect(errors.isEmpty, "a short write is continued: \(errors)")
            #expect(acknowledged.count == Self.appends)
        } else {
            let first = try #require(errors.first, "the fault surfaced as an error")
            let full = scenario.fault != .error(EIO)
            let allowed: Set<LogError.Code> = full ? [.diskFull, .readOnly] : [.io, .poisoned]
            #expect(allowed.contains(first.code), "\(first)")
            #expect(first.path != nil, "the error names a file: \(first)")
            if acknowledged.count + errors.count == Self.appends, let firstFailure = errors.indices.first {
                // Every append after the failure is refused too.
                for later in errors[firstFailure...].dropFirst() {
                    #expect(later.code == (full ? .readOnly : .poisoned), "\(later)")
                }
            }
        }

        var healthy = LogOptions()
        healthy.readOnly = true
        healthy.segmentSize = 4096
        let records: [LogRecord]
        do {
            records = try readAll(directory.store(), options: healthy)
        } catch let error as LogError where error.code == .notFound {
            records = []
        }
        #expect(Dictionary(uniqueKeysWithValues: records.map { ($0.lsn, $0.payload) }) == acknowledged)
        // And the store can be opened for writing again.
        var writable = smallSegments(4096)
        writable.createIfMissing = true
        let reopened = try Log.open(at: directory.store(), options: writable)
        #expect(reopened.lastLSN == LSN(UInt64(acknowledged.count)))
        try await reopened.close()
    }

    @Test func failedSyncIsNeverRetriedAndPoisonsUntilReopen() async throws {
        let directory = TemporaryDirectory()
        let io = FaultyFileIO()
        var options = LogOptions()
        options.fileIO = io
        let log = try Log.open(at: directory.store(), options: options)
        try await log.append(payload(1))
        io.inject(.error(EIO), at: .sync, call: 1)
        let syncs = io.dataSyncCount
        await #expect { try await log.append(payload(2)) } throws: { ($0 as? LogError)?.code == .io }
        await #expect { try await log.append(payload(3)) } throws: { ($0 as? LogError)?.code == .poisoned }
        #expect(io.dataSyncCount == syncs + 1, "no fdatasync after the failed one (the cut that follows is made durable by fsync, which acknowledges nothing)")
        try await log.close()
        let reopened = try Log.open(at: directory.store(), options: options)
        #expect(reopened.lastLSN == LSN(1))
        #expect(try await reopened.append(payload(4)) == LSN(2))
        try await reopened.close()
    }
}
