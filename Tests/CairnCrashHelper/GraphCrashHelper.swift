import Cairn
import CairnLog
import Glibc

/// The object-graph half of `CairnCrashHelper --graph`: concurrent writers, each saving
/// batches of entries together with an update of its counter, printing `saved W S K` once the
/// save of batch S (K entries) by writer W returned.
enum GraphCrashHelper {
    /// The model: entries (writer, sequence, index, payload) and one counter per writer.
    static func model() throws -> Model {
        try Model {
            Entity("Entry") {
                Attribute("writer", .integer32, optional: false)
                Attribute("sequence", .integer64, optional: false)
                Attribute("index", .integer32, optional: false)
                Attribute("payload", .string, optional: false)
                Unique("writer", "sequence", "index")
            }
            Entity("Counter") {
                Attribute("writer", .integer32, optional: false)
                Attribute("value", .integer64, optional: false, default: 0)
                Unique("writer")
            }
        }
    }

    /// How many entries batch `sequence` holds.
    static func batchSize(_ sequence: Int64) -> Int { 1 + Int(sequence % 7) }

    /// The payload of an entry.
    static func payload(writer: Int, sequence: Int64, index: Int) -> String {
        "w\(writer)-s\(sequence)-i\(index)-" + String(repeating: "x", count: Int((sequence * 31 + Int64(index)) % 90))
    }

    static func run(
        store path: String, writers: Int, segmentSize: Int, compactEvery: Int = 0, crashAt: CompactionStep? = nil,
        emit: @escaping @Sendable (String) -> Void
    ) async throws {
        var options = StoreOptions()
        options.segmentSize = segmentSize
        options.automaticCompaction = .disabled
        if let crashAt {
            options.compactionStep = { step in
                guard step == crashAt else { return }
                emit("crash at \(step.rawValue)")
                _exit(9)
            }
        }
        let store = try Store(at: path, model: try model(), options: options)
        emit("ready \(getpid()) \(store.lastSaveLSN)")
        try await withThrowingTaskGroup(of: Void.self) { group in
            if compactEvery > 0 {
                group.addTask {
                    while true {
                        try await Task.sleep(for: .milliseconds(compactEvery))
                        let report = try await store.compact()
                        emit("compacted \(report.lsn)")
                    }
                }
            }
            for writer in 0..<writers {
                group.addTask {
                    let setup = store.newBackgroundContext()
                    var counter = try setup.fetchFirst(FetchRequest("Counter", predicate: .equal("writer", .integer(Int64(writer)))))
                    if counter == nil {
                        counter = try setup.insert("Counter")
                        try counter?.setValue(.integer(Int64(writer)), forKey: "writer")
                        try await setup.save()
                    }
                    guard let counterID = counter?.objectID, case .integer(var sequence) = try counter?.value(forKey: "value", as: Value.self) else { return }
                    while true {
                        sequence += 1
                        let context = store.newBackgroundContext(name: "writer \(writer)")
                        for index in 0..<batchSize(sequence) {
                            let entry = try context.insert("Entry")
                            try entry.setValue(.integer(Int64(writer)), forKey: "writer")
                            try entry.setValue(.integer(sequence), forKey: "sequence")
                            try entry.setValue(.integer(Int64(index)), forKey: "index")
                            try entry.setValue(.string(payload(writer: writer, sequence: sequence, index: index)), forKey: "payload")
                        }
                        try context.object(with: counterID)?.setValue(.integer(sequence), forKey: "value")
                        try await context.save()
                        emit("saved \(writer) \(sequence) \(batchSize(sequence))")
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}
