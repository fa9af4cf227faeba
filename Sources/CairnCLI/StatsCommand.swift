import ArgumentParser
import Cairn
import CairnLog
import Foundation

/// `cairn stats STORE [--json]`: the base, sizes, frames, LSNs, live objects and compression
/// of a store.
struct StatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Print the base, segments, frames, last LSN, live objects, bytes and compression ratio of a store.",
        discussion:
            "Exits with status 1 when the store is damaged, as verify does, or when its objects cannot be counted (after printing the figures and why)."
    )

    @Argument(help: "The store's directory.")
    var store: String

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    func run() throws {
        try StoreLocation.requireFolder(store)
        let inspection = try LogInspection.inspect(directory: store)
        var stats = StoreStatistics(inspection)
        // Objects are counted when the log is an object graph's; a store that holds one and does
        // not open says why, and the command then fails (after printing the figures).
        var countsFailed = false
        do {
            stats.entities = try StoreStatistics.entityCounts(store)
        } catch let error as StoreError where error.code == .notObjectGraph {
            stats.entities = nil
            stats.notObjectGraph = error.message
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

/// The figures of a run of frames, which `cairn stats` gives for the store and for each
/// segment: in its JSON, members of the store's or the segment's object. For the store,
/// `lastLSN` is the store's last LSN, the base's when no frame follows it.
struct FrameFigures: Encodable {
    var frames: UInt64
    var firstLSN: UInt64?
    var lastLSN: UInt64?
    var bytesOnDisk: UInt64
    var storedPayloadBytes: UInt64
    var rawPayloadBytes: UInt64

    init(frames: UInt64, lsnRange: ClosedRange<LSN>?, bytesOnDisk: UInt64, storedBytes: UInt64, rawBytes: UInt64) {
        self.frames = frames
        firstLSN = lsnRange?.lowerBound.rawValue
        lastLSN = lsnRange?.upperBound.rawValue
        self.bytesOnDisk = bytesOnDisk
        storedPayloadBytes = storedBytes
        rawPayloadBytes = rawBytes
    }

    /// Writes the figures as members of the object `encoder` writes, and returns its container
    /// for the other members (a segment's file, the store's ratio…).
    func members<Key: CodingKey>(of encoder: any Encoder, keyedBy key: Key.Type) throws -> KeyedEncodingContainer<Key> {
        try encode(to: encoder)
        return encoder.container(keyedBy: key)
    }

    /// The LSNs as `first...last`, or `none` when there are none.
    func lsnText(none: String) -> String { firstLSN.map { "\($0)...\(lastLSN ?? $0)" } ?? none }
}

/// The figures `cairn stats` prints.
struct StoreStatistics: Encodable {
    struct Segment: Encodable {
        var file: String
        var sealed: Bool
        var figures: FrameFigures
        var status: String

        private enum CodingKeys: String, CodingKey { case file, sealed, status }

        func encode(to encoder: any Encoder) throws {
            var container = try figures.members(of: encoder, keyedBy: CodingKeys.self)
            try container.encode(file, forKey: .file)
            try container.encode(sealed, forKey: .sealed)
            try container.encode(status, forKey: .status)
        }
    }

    /// The base compaction wrote: its file, size and the LSN whose state it holds.
    struct Base: Encodable {
        var file: String
        var bytesOnDisk: UInt64
        var lastLSN: UInt64
        var status: String
    }

    var store: String
    var base: Base?
    var segments: [Segment]
    var figures: FrameFigures
    var compressionRatio: Double
    var dictionaries: Int
    var healthy: Bool
    /// Live objects per entity (objects of exactly that entity), when the store has a model.
    var entities: [String: Int]?
    /// Live objects in all, when the store has a model.
    var objects: Int? { entities?.values.reduce(0, +) }
    /// Why the log's records are not an object graph's (a log written with CairnLog alone, or
    /// one that holds no model yet), when they are not: no objects are counted.
    var notObjectGraph: String?

    private enum CodingKeys: String, CodingKey {
        case store, base, segments, compressionRatio, dictionaries, healthy, entities, objects, objectGraph
    }

    func encode(to encoder: any Encoder) throws {
        var container = try figures.members(of: encoder, keyedBy: CodingKeys.self)
        try container.encode(store, forKey: .store)
        try container.encodeIfPresent(base, forKey: .base)
        try container.encode(segments, forKey: .segments)
        try container.encode(compressionRatio, forKey: .compressionRatio)
        try container.encode(dictionaries, forKey: .dictionaries)
        try container.encode(healthy, forKey: .healthy)
        try container.encodeIfPresent(entities, forKey: .entities)
        try container.encodeIfPresent(objects, forKey: .objects)
        if notObjectGraph != nil { try container.encode(false, forKey: .objectGraph) }
    }

    /// Counts the live objects of each entity, opening the store read-only (with its own
    /// model: a store without one is ``StoreError/Code/notObjectGraph``).
    static func entityCounts(_ path: String) throws -> [String: Int] {
        let store = try Store(at: path, options: readOnlyOptions())
        let model = store.model
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
            let figures = FrameFigures(
                frames: segment.frames, lsnRange: segment.lsnRange, bytesOnDisk: segment.bytesOnDisk, storedBytes: segment.storedBytes,
                rawBytes: segment.rawBytes)
            return Segment(file: segment.file, sealed: segment.isSealed, figures: figures, status: status)
        }
        figures = FrameFigures(
            frames: inspection.frames, lsnRange: inspection.lsnRange, bytesOnDisk: inspection.bytesOnDisk, storedBytes: inspection.storedBytes,
            rawBytes: inspection.rawBytes)
        base = inspection.base.map { base in
            Base(
                file: base.file, bytesOnDisk: base.bytesOnDisk, lastLSN: base.lastLSN.rawValue,
                status: base.statusText)
        }
        // After a compaction the base holds the state as of its LSN, and frames follow it.
        if let base, figures.lastLSN.map({ $0 < base.lastLSN }) ?? true { figures.lastLSN = base.lastLSN }
        compressionRatio = (inspection.compressionRatio * 1000).rounded() / 1000
        dictionaries = inspection.dictionaries
        healthy = inspection.isHealthy
    }

    var table: String {
        var lines = ["store \(store)"]
        lines.append(
            Formatting.left("segment", 18) + Formatting.left("state", 8) + Formatting.right("frames", 10)
                + Formatting.right("LSNs", 22) + Formatting.right("on disk", 12) + Formatting.right("raw", 12) + "  status")
        if let base {
            lines.append(
                Formatting.left(base.file, 18) + Formatting.left("base", 8) + Formatting.right("-", 10)
                    + Formatting.right("state as of \(base.lastLSN)", 22) + Formatting.right(Formatting.bytes(base.bytesOnDisk), 12)
                    + Formatting.right("-", 12) + "  " + base.status)
        }
        for segment in segments {
            lines.append(
                Formatting.left(segment.file, 18) + Formatting.left(segment.sealed ? "sealed" : "active", 8)
                    + Formatting.right(String(segment.figures.frames), 10) + Formatting.right(segment.figures.lsnText(none: "-"), 22)
                    + Formatting.right(Formatting.bytes(segment.figures.bytesOnDisk), 12)
                    + Formatting.right(Formatting.bytes(segment.figures.rawPayloadBytes), 12) + "  " + segment.status)
        }
        lines.append(
            "segments: \(segments.count)   frames: \(figures.frames)   LSNs in segments: \(figures.lsnText(none: "none"))   "
                + "last LSN: \(figures.lastLSN.map(String.init) ?? "none")   dictionaries: \(dictionaries)")
        lines.append(
            "bytes on disk: \(Formatting.bytes(figures.bytesOnDisk))   payload stored: \(Formatting.bytes(figures.storedPayloadBytes))   "
                + "payload raw: \(Formatting.bytes(figures.rawPayloadBytes))   compression ratio: \(Formatting.fixed(compressionRatio, 2))")
        if let entities, let objects {
            let each = entities.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            lines.append("objects: \(objects) live" + (each.isEmpty ? "" : " (\(each))"))
        }
        if let notObjectGraph { lines.append("records: not an object graph's, no objects counted: \(notObjectGraph)") }
        lines.append(healthy ? "healthy" : "DAMAGED (run cairn verify)")
        return lines.joined(separator: "\n")
    }
}
