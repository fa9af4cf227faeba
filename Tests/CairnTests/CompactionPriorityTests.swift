import CairnTestSupport
import Foundation
import Synchronization
import Testing

@testable import Cairn

/// Compaction gives way to the app: the thread writing a base runs at a lower priority, and no
/// other thread of Cairn's (the sync thread, pooled workers, the threads of opens, compactions
/// and backups) runs at another than the app's.
@Suite struct CompactionPriorityTests {
    /// The nice value of a thread (field 19 of its `stat`, at `path`).
    static func nice(stat path: String) -> Int? {
        guard let stat = try? String(contentsOfFile: path, encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 16 ? Int(fields[16]) : nil
    }

    /// The name and nice value of every thread of this process.
    static func threads() -> [(name: String, nice: Int)] {
        let tids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tids.compactMap { tid in
            guard let name = try? String(contentsOfFile: "/proc/self/task/\(tid)/comm", encoding: .utf8), let nice = nice(stat: "/proc/self/task/\(tid)/stat")
            else { return nil }
            return (name.trimmingCharacters(in: .whitespacesAndNewlines), nice)
        }
    }

    @Test func theCompactingThreadGivesWayAndNoThreadOfTheAppInheritsIt() async throws {
        let directory = TemporaryDirectory()
        let model = try Model {
            Entity("Item") {
                Attribute("number", .integer64)
            }
        }
        let store = try await Store.open(at: directory.store(), model: model)
        let context = store.newBackgroundContext()
        for number in 0..<600 {
            try context.insert("Item").setValue(.integer(Int64(number)), forKey: "number")
            if number % 100 == 99 { try await context.save() }
        }
        let seen = Mutex<Int?>(nil)
        try await store.compact { _ in
            let own = Self.nice(stat: "/proc/thread-self/stat")
            seen.withLock { $0 = own }
        }
        #expect(seen.withLock { $0 } == Int(Tuning.backgroundNice), "the thread writing the base runs at nice \(Tuning.backgroundNice)")
        try await store.backup(to: directory.store("backup"))
        // Saves after the compaction and the backup, on the threads the store keeps.
        try context.insert("Item").setValue(.integer(1000), forKey: "number")
        try await context.save()
        // The base writers' own threads (this test's, ending, or another suite's) are lowered.
        let lowered = Self.threads().filter { $0.name.hasPrefix("cairn") && $0.name != "cairn-base" && $0.nice != 0 }
        #expect(lowered.isEmpty, "Cairn's threads left at a lower priority: \(lowered)")
        #expect(Self.threads().contains { $0.name == "cairn-sync" }, "the store's sync thread is among those checked")
        try await store.close()
    }
}
