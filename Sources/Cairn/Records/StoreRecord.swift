import CairnLog
import CairnSupport
import Foundation

/// What one log frame of a Cairn store holds: the model, one save's changes, or a migration to
/// another model.
///
/// ```
/// model record:     0x01, version (u8, 1), the model in Cairn's JSON model format
/// change record:    0x02, version (u8, 1), inserts, updates, deletes (docs/FORMAT.md)
/// migration record: 0x03, version (u8, 1), the new model's JSON length (varint) and JSON,
///                   then the plan (docs/FORMAT.md)
/// ```
enum StoreRecord: Sendable {
    case model(Model)
    case changes(ChangeSet)
    /// From here on, the store holds the objects of the previous model migrated to this one, by
    /// this plan.
    case migration(Model, MigrationPlan)

    /// A record as read back: a model, or changes as rows ready to apply.
    enum Decoded: Sendable {
        case model(Model)
        case changes(RowChangeSet)
        case migration(Model, MigrationPlan)
    }

    static let modelKind: UInt8 = 1
    static let changesKind: UInt8 = 2
    static let migrationKind: UInt8 = 3
    static let version: UInt8 = 1

    /// The record's bytes.
    func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 256)
        switch self {
        case .model(let model):
            writer.write(Self.modelKind)
            writer.write(Self.version)
            writer.write(bytes: model.jsonData(pretty: false))
        case .migration(let model, let plan):
            writer.write(Self.migrationKind)
            writer.write(Self.version)
            writer.writeLengthPrefixed(Array(model.jsonData(pretty: false)))
            plan.encode(into: &writer)
        case .changes(let changes):
            writer.write(Self.changesKind)
            writer.write(Self.version)
            ChangeSetCodec.encode(changes, into: &writer)
        }
        return writer.bytes
    }

    /// The bytes of a change record that inserts new objects alone (a batch insert), each
    /// object's values written by `writeValues` (see ``ChangeSetCodec/encodeInserts(_:into:values:)``).
    static func encodedInserts(
        _ ids: [ObjectID], capacity: Int, updates: [ChangeSet.Update] = [], values writeValues: (Int, inout ByteWriter) throws -> Void
    ) rethrows -> [UInt8] {
        var writer = ByteWriter(capacity: capacity)
        writer.write(changesKind)
        writer.write(version)
        try ChangeSetCodec.encodeInserts(ids, into: &writer, updates: updates, values: writeValues)
        return writer.bytes
    }

    /// Parses a record of the frame at `lsn`, checking a change record against `model`.
    static func decode(_ bytes: [UInt8], lsn: LSN, model: Model?) throws -> Decoded {
        func damaged(_ message: String) -> StoreError {
            StoreError(.corruptRecord, "record at LSN \(lsn): \(message)", lsn: lsn)
        }
        guard bytes.count >= 2 else { throw damaged("too short") }
        guard bytes[1] == version else {
            let what =
                bytes[1] > version
                ? "was written by a newer version of Cairn (record version \(bytes[1]))" : "has record version \(bytes[1]), which Cairn does not write"
            throw StoreError(.unsupportedFormat, "record at LSN \(lsn) \(what); this build reads version \(version)", lsn: lsn)
        }
        switch bytes[0] {
        case modelKind:
            do {
                return .model(try Model(jsonData: Data(bytes[2...])))
            } catch {
                throw damaged("the stored model does not load: \(error)")
            }
        case migrationKind:
            guard let model else { throw damaged("a migration comes before any model record") }
            return try bytes.withUnsafeBytes { raw in
                var reader = ByteReader(raw, offset: 2)
                do {
                    let json = try reader.readLengthPrefixed()
                    let recorded: Model
                    do {
                        recorded = try Model(jsonData: Data(json))
                    } catch {
                        throw damaged("the migration's model does not load: \(error)")
                    }
                    let plan = try MigrationPlan.decode(&reader, from: model, to: recorded)
                    guard reader.isAtEnd else { throw damaged("\(reader.remaining) bytes after the migration plan") }
                    return .migration(recorded, plan)
                } catch let overrun as ByteReader.Overrun {
                    throw damaged("truncated at byte \(overrun.offset)")
                } catch let problem as EncodingProblem {
                    throw damaged(problem.message)
                }
            }
        case changesKind:
            guard let model else { throw damaged("a change record comes before any model record") }
            return .changes(
                try bytes.withUnsafeBytes { raw in
                    var reader = ByteReader(raw, offset: 2)
                    do {
                        let changes = try ChangeSetCodec.decodeRows(&reader, model: model)
                        guard reader.isAtEnd else { throw damaged("\(reader.remaining) bytes after the last change") }
                        return changes
                    } catch let overrun as ByteReader.Overrun {
                        throw damaged("truncated at byte \(overrun.offset)")
                    } catch let problem as EncodingProblem {
                        throw damaged(problem.message)
                    }
                })
        default:
            throw damaged("unknown record kind \(bytes[0])")
        }
    }
}
