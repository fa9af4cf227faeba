import CairnLog
import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// A helper process saves batches from concurrent contexts; it is killed with SIGKILL at random
/// moments; reopening must show exactly the acknowledged saves (or later ones), never part of
/// one. `CAIRN_CRASH_CYCLES` sets the number of cycles (default 20).
@Suite(.serialized) struct GraphCrashTests {
    static func batchSize(_ sequence: Int64) -> Int { 1 + Int(sequence % 7) }
    static func payload(writer: Int64, sequence: Int64, index: Int64) -> String {
        "w\(writer)-s\(sequence)-i\(index)-" + String(repeating: "x", count: Int((sequence * 31 + index) % 90))
    }

    @Test func killedWritersLoseNoAcknowledgedSaveAndLeaveNoPartialOne() async throws {
        let cycles = ProcessInfo.processInfo.environment["CAIRN_CRASH_CYCLES"].flatMap(Int.init) ?? 20
        let folder = TemporaryDirectory()
        let store = folder.store()
        var acknowledged: [Int64: Int64] = [:]  // writer → highest acknowledged sequence
        var generator = TestSeed.generator()
        for cycle in 0..<cycles {
            let helper = try HelperProcess([store, "--graph", "--appenders", "3", "--segment-size", "32768"])
            try await Task.sleep(for: .milliseconds(Int.random(in: 30...300, using: &generator)))
            helper.kill()
            try await Self.check(store, lines: helper.lines, acknowledged: &acknowledged, cycle: cycle)
        }
        #expect(!acknowledged.isEmpty, "the helper acknowledged saves before being killed")
    }

    /// Compaction runs every 30 ms while three writers save: the helper ends itself at each
    /// named step of a compaction, then is killed at random moments; after each, the store
    /// holds every acknowledged save and no part of one, and its files check out.
    @Test func compactionEndedAtEachStepOrAtRandomLosesNothing() async throws {
        let cycles = ProcessInfo.processInfo.environment["CAIRN_CRASH_CYCLES"].flatMap(Int.init) ?? 20
        let folder = TemporaryDirectory()
        let store = folder.store()
        var acknowledged: [Int64: Int64] = [:]
        let arguments = [store, "--graph", "--appenders", "3", "--segment-size", "16384", "--compact-every", "30"]
        for (cycle, step) in CompactionStep.allCases.enumerated() {
            let helper = try HelperProcess(arguments + ["--crash-at", step.rawValue])
            let crashed = try await helper.waitForLine(startingWith: "crash at", timeout: .seconds(60))
            helper.kill()
            #expect(crashed == "crash at \(step.rawValue)", "cycle \(cycle): \(helper.lines.suffix(3))")
            try await Self.check(store, lines: helper.lines, acknowledged: &acknowledged, cycle: cycle)
        }
        var generator = TestSeed.generator()
        for cycle in 0..<max(1, cycles / 2) {
            let helper = try HelperProcess(arguments)
            try await Task.sleep(for: .milliseconds(Int.random(in: 50...400, using: &generator)))
            helper.kill()
            try await Self.check(store, lines: helper.lines, acknowledged: &acknowledged, cycle: CompactionStep.allCases.count + cycle)
        }
        #expect(try LogInspection.inspect(directory: store).base != nil, "the helper compacted")
    }

    /// Reads the acknowledged saves from a killed helper's `lines`, reopens the store and checks
    /// that it holds every acknowledged save (or later ones) and no part of any, and that the
    /// store's files check out.
    static func check(_ store: String, lines: [String], acknowledged: inout [Int64: Int64], cycle: Int) async throws {
        for line in lines where line.hasPrefix("saved ") {
            let parts = line.split(separator: " ").compactMap { Int64($0) }
            guard parts.count == 3 else { Issue.record("malformed line \(line)"); continue }
            acknowledged[parts[0]] = max(acknowledged[parts[0]] ?? 0, parts[1])
        }
        guard let model = try? Store.storedModel(at: store) else {
            #expect(acknowledged.isEmpty, "cycle \(cycle): no store, yet saves were acknowledged")
            return
        }
        let reopened = try Store(at: store, model: model)
        let context = reopened.newBackgroundContext()
        var batches: [[Int64]: Int] = [:]
        for entry in try context.fetch(FetchRequest("Entry")) {
            guard case .integer(let writer) = try entry.value(forKey: "writer", as: Value.self),
                case .integer(let sequence) = try entry.value(forKey: "sequence", as: Value.self),
                case .integer(let index) = try entry.value(forKey: "index", as: Value.self)
            else { Issue.record("entry without values"); continue }
            #expect(entry.string("payload") == Self.payload(writer: writer, sequence: sequence, index: index))
            batches[[writer, sequence], default: 0] += 1
        }
        for (key, count) in batches {
            #expect(count == Self.batchSize(key[1]), "cycle \(cycle): batch \(key) holds \(count) of \(Self.batchSize(key[1])) entries")
        }
        var counted: Set<Int64> = []
        for counter in try context.fetch(FetchRequest("Counter")) {
            guard case .integer(let writer) = try counter.value(forKey: "writer", as: Value.self),
                case .integer(let value) = try counter.value(forKey: "value", as: Value.self)
            else {
                Issue.record("cycle \(cycle): a counter without values")
                continue
            }
            counted.insert(writer)
            let highest = batches.keys.filter { $0[0] == writer }.map { $0[1] }.max() ?? 0
            #expect(value == highest, "cycle \(cycle): counter of writer \(writer) is \(value), its last batch \(highest)")
            #expect(value >= acknowledged[writer] ?? 0, "cycle \(cycle): writer \(writer) lost acknowledged saves")
            for sequence in 1...max(1, value) where value > 0 {
                #expect(batches[[writer, sequence]] != nil, "cycle \(cycle): batch \(sequence) of writer \(writer) is missing")
            }
        }
        // Every writer with an acknowledged save (in this cycle or an earlier one) has its counter.
        for (writer, sequence) in acknowledged where sequence > 0 {
            #expect(counted.contains(writer), "cycle \(cycle): the counter of writer \(writer), acknowledged up to \(sequence), is gone")
        }
        try await reopened.close()
        let inspection = try LogInspection.inspect(directory: store)
        #expect(inspection.isHealthy, "cycle \(cycle): \(inspection.otherProblems)")
    }
}
