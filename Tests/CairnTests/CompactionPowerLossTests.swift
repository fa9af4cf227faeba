import CairnLog
import CairnSupport
import CairnTestSupport
import Foundation
import Testing

@testable import Cairn

/// The power-cut simulation of the log tests (``PowerCutFileIO``: unsynced bytes and directory
/// entries may or may not survive, sectors in any order) over compactions that run while
/// writers save: every image opens and holds every save acknowledged before it.
@Suite struct CompactionPowerLossTests {
    static func model() throws -> Model {
        try Model {
            Entity("Item") {
                Attribute("number", .integer64, optional: false)
                Attribute("version", .integer64)
                Unique("number")
            }
        }
    }

    /// An item's states, in the order its writer saved them: versions 0, 1, … then, for some,
    /// nil (deleted). Each writer owns its items, so an item's saves never race.
    typealias History = [Int: [Int?]]

    /// Three writers insert, overwrite and delete their own items, each change in a save of its
    /// own, while a fourth task compacts every 15 ms. Every 7th call to the file system records
    /// what a power cut would leave, with the state each item had in the last acknowledged save
    /// (its index in the item's history). Each image opens (read-write, so recovery runs; or,
    /// where a segment is refused as corruption because a later sector of an unsynced batch
    /// reached the disk and an earlier one did not, with salvage, as in the log's test) and every
    /// item is in its acknowledged state or a later one of its history.
    @Test func aPowerCutDuringCompactionsLosesNoAcknowledgedSave() async throws {
        let seed = TestSeed.named()
        let directory = TemporaryDirectory()
        let acknowledged = Protected<[Int: Int]>([:])  // item → index in its history
        let images = Protected<[(acknowledged: [Int: Int], files: [String: [UInt8]])]>([])
        let midway = Protected(0)  // cuts while a base was being written
        let path = directory.store()
        let io = PowerCutFileIO(seed: seed, every: 7) { files in
            let before = acknowledged.current
            // Inside the file system's lock: the directory as the calls so far left it.
            let writingBase = (try? FileManager.default.contentsOfDirectory(atPath: path))?.contains { $0.hasSuffix(".base.tmp") } ?? false
            images.withLock { if $0.count < 160 { $0.append((before, files)) } }
            if writingBase { midway.withLock { $0 += 1 } }
        }
        var options = CompactionTests.manual(segmentSize: 8192, io: io)
        // Replaced files are cut down 1 KiB at a time: cuts, too, are cut short by power losses.
        options.releaseStep = 1024
        let store = try Store(at: path, model: try Self.model(), options: options)
        let histories = Protected<History>([:])
        let compactions = Protected(0)
        let writing = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<3 {
                    group.addTask { try await Self.write(writer, to: store, histories: histories, acknowledged: acknowledged) }
                }
                try await group.waitForAll()
            }
        }
        let compacting = Task {
            while !writing.isCancelled {
                try await Task.sleep(for: .milliseconds(15))
                try await store.compact()
                compactions.withLock { $0 += 1 }
                if images.current.count >= 160 { break }
            }
        }
        defer { compacting.cancel() }
        try await writing.value
        compacting.cancel()
        _ = try? await compacting.value
        try await store.close()
        #expect(compactions.current >= 2, "compactions ran while the writers saved")

        let history = histories.current
        var salvaged = 0
        for (number, image) in images.current.enumerated() {
            let cut = directory.store("cut-\(number)")
            try FileManager.default.createDirectory(atPath: cut, withIntermediateDirectories: false)
            for (name, bytes) in image.files { try Data(bytes).write(to: URL(fileURLWithPath: cut + "/" + name)) }
            let state: [Int: Int]
            do {
                state = try await Self.items(at: cut, recovery: .pointInTime)
            } catch let error as LogError where error.code == .corruption && error.path?.hasSuffix(".seg") == true {
                state = try await Self.items(at: cut, recovery: .salvage)
                salvaged += 1
            } catch let error as LogError where image.acknowledged.isEmpty {
                #expect(error.code == .notFound || error.code == .corruption, "image \(number): \(error)")
                continue
            } catch {
                Issue.record("image \(number) (CAIRN_TEST_SEED=\(TestSeed.base)): \(error)")
                continue
            }
            for (item, index) in image.acknowledged {
                let states = history[item] ?? []
                let found = state[item]
                // Kept: the acknowledged state or one saved after it (a later save may have
                // reached the disk before the cut).
                let allowed = states[index...].contains { $0 == found }
                if !allowed {
                    Issue.record(
                        "image \(number) (CAIRN_TEST_SEED=\(TestSeed.base)): item \(item) is \(found.map(String.init) ?? "missing"), acknowledged \(states[index].map(String.init) ?? "deleted")"
                    )
                }
            }
        }
        print("CompactionPowerLossTests: \(images.current.count) power-cut images over \(compactions.current) compactions, \(salvaged) needed salvage")
        #expect(images.current.count > 40)
        #expect(midway.current > 0, "some power cuts came while a base was being written")
    }

    /// One writer's saves: items `writer * 1000 + i`, each inserted, overwritten twice, and
    /// every third deleted, one change per save.
    static func write(_ writer: Int, to store: Store, histories: Protected<History>, acknowledged: Protected<[Int: Int]>) async throws {
        let context = store.newBackgroundContext(name: "writer \(writer)")
        for round in 0..<40 {
            let item = writer * 1000 + round
            let object = try context.insert("Item")
            try object.setValue(.integer(Int64(item)), forKey: "number")
            for version in 0..<3 {
                try object.setValue(.integer(Int64(version)), forKey: "version")
                histories.withLock { $0[item, default: []].append(version) }
                try await context.save()
                acknowledged.withLock { $0[item] = version }
            }
            if round % 3 == 0 {
                try object.delete()
                histories.withLock { $0[item, default: []].append(nil) }
                try await context.save()
                acknowledged.withLock { $0[item] = 3 }
            }
        }
    }

    /// Every item's version in the store at `path`.
    static func items(at path: String, recovery: RecoveryMode) async throws -> [Int: Int] {
        var options = CompactionTests.manual()
        options.recovery = recovery
        let store = try Store(at: path, model: try model(), options: options)
        var items: [Int: Int] = [:]
        for object in try store.viewContext.fetch(FetchRequest("Item")) {
            let number = try object.value(forKey: "number", as: Int.self)
            items[number] = try object.value(forKey: "version", as: Int.self)
        }
        try await store.close()
        return items
    }
}
