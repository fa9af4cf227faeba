import ArgumentParser
import Cairn
import CairnLog
import Foundation

/// `cairn stats STORE [--json]`: sizes, frames, LSNs and compression of a store.
struct StatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Print segments, frames, LSN range, bytes and compression ratio of a store.",
        discussion:
            "Exits with status 1 when the store is damaged, as verify does, or when its objects cannot be counted (after printing the figures and why)."
    )

    @Argument(help: "The store's directory.")
    var store: String

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    func run() throws {
        let inspection = try LogInspection.inspect(directory: store)
        var stats = StoreStatistics(inspection)
        // Objects are counted when the log is an object graph's; a store that holds one and does
        // not open says why, and the command then fails (after printing the figures).
        var countsFailed = false
        do {
            stats.entities = try StoreStatistics.entityCounts(store)
        } catch let error as StoreError where error.code == .notObjectGraph {
            stats.entities = nil
        } catch {
            FileHandle.standardError.write(Data("cairn: warning: \(store): objects not counted: \(error)\n".utf8))
            countsFailed = true
        }
        for segment in inspection.segments {
            if case .tornTail(let offset, let reason) = segment.status {
                let line =
                    "cairn: warning: \(store): ignored the bytes from offset \(offset) of \(segment.file), which are not a complete frame (\(reason)); run `cairn verify \(store)`\n"
                FileHandle.standardError.write(Data(line.utf8))
            }
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(stats), as: UTF8.self))
        } else {
            print(stats.table)
        }
        if !inspection.isHealthy || countsFailed { throw ExitCode(1) }
    }
}

/// The figures `cairn stats` prints.
struct StoreStatistics: Codable {
    struct Segment: Codable {
        var file: String
        var sealed: Bool
        var frames: UInt64
        var firstLSN: UInt64?
        var lastLSN: UInt64?
        var bytesOnDisk: UInt64
        var storedPayloadBytes: UInt64
        var rawPayloadBytes: UInt64
        var status: String
    }

    var store: String
    var segments: [Segment]
    var frames: UInt64
    var firstLSN: UInt64?
    var lastLSN: UInt64?
    var bytesOnDisk: UInt64
    var storedPayloadBytes: UInt64
    var rawPayloadBytes: UInt64
    var compressionRatio: Double
    var dictionaries: Int
    var healthy: Bool
    /// Live objects per entity (objects of exactly that entity), when the store has a model.
    var entities: [String: Int]?

    /// Counts the live objects of each entity, opening the store read-only.
    static func entityCounts(_ path: String) throws -> [String: Int]? {
        guard let model = try Store.storedModel(at: path) else { return nil }
        var options = StoreOptions()
        options.readOnly = true
        let store = try Store(at: path, model: model, options: options)
        let context = store.newBackgroundContext(name: "stats")
        var counts: [String: Int] = [:]
        for entity in model.entities {
            counts[entity.name] = try context.count(FetchRequest(entity.name, includesSubentities: false))
        }
        return counts
    }

    init(_ inspection: LogInspection) {
        store = inspection.directory
        segments = inspection.segments.map { segment in
            let status =
                switch segment.status {
                case .ok: "ok"
                case .tornTail(let offset, _): "torn tail at \(offset)"
                case .writeInProgress(let offset, _): "write in progress at \(offset)"
                case .damaged(let error): "damaged: \(error)"
                }
            return Segment(
                file: segment.file, sealed: segment.isSealed, frames: segment.frames,
                firstLSN: segment.lsnRange?.lowerBound.rawValue, lastLSN: segment.lsnRange?.upperBound.rawValue,
                bytesOnDisk: segment.bytesOnDisk, storedPayloadBytes: segment.storedBytes,
                rawPayloadBytes: segment.rawBytes, status: status)
        }
        frames = inspection.frames
        firstLSN = inspection.lsnRange?.lowerBound.rawValue
        lastLSN = inspection.lsnRange?.upperBound.rawValue
        bytesOnDisk = inspection.bytesOnDisk
        storedPayloadBytes = inspection.storedBytes
        rawPayloadBytes = inspection.rawBytes
        compressionRatio = (inspection.compressionRatio * 1000).rounded() / 1000
        dictionaries = inspection.dictionaries
        healthy = inspection.isHealthy
    }

    var table: String {
        var lines = ["store \(store)"]
        lines.append(
            Formatting.left("segment", 18) + Formatting.left("state", 8) + Formatting.right("frames", 10)
                + Formatting.right("LSNs", 22) + Formatting.right("on disk", 12) + Formatting.right("raw", 12) + "  status")
        for segment in segments {
            let range = segment.firstLSN.map { "\($0)...\(segment.lastLSN ?? $0)" } ?? "-"
            lines.append(
                Formatting.left(segment.file, 18) + Formatting.left(segment.sealed ? "sealed" : "active", 8)
                    + Formatting.right(String(segment.frames), 10) + Formatting.right(range, 22)
                    + Formatting.right(Formatting.bytes(segment.bytesOnDisk), 12)
                    + Formatting.right(Formatting.bytes(segment.rawPayloadBytes), 12) + "  " + segment.status)
        }
        let range = firstLSN.map { "\($0)...\(lastLSN ?? $0)" } ?? "none"
        lines.append("segments: \(segments.count)   frames: \(frames)   LSNs: \(range)   dictionaries: \(dictionaries)")
        lines.append(
            "bytes on disk: \(Formatting.bytes(bytesOnDisk))   payload stored: \(Formatting.bytes(storedPayloadBytes))   "
                + "payload raw: \(Formatting.bytes(rawPayloadBytes))   compression ratio: \(Formatting.fixed(compressionRatio, 2))")
        if let entities {
            lines.append("objects: " + entities.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        lines.append(healthy ? "healthy" : "DAMAGED (run cairn verify)")
        return lines.joined(separator: "\n")
    }
}
