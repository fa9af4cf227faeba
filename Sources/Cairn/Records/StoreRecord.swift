import CairnLog
import CairnSupport
import Foundation

/// What one log frame of a Cairn store holds: the model, one save's changes, or a migration to
/// another model.
///
/// ```
/// model record:     0x01, version (u8, 1), the model in Cairn's JSON model format
/// change record:    0x02, version (u8, 3), the transaction header (flags, time, author, context
///                   name, the deleted objects' tombstones), then the body: inserts, updates, deletes (docs/FORMAT.md), the
///                   inserts in parts after a table of them when the header's flag says so;
///                   (read, not written:) 0x02, version 1, the body; 0x02, version 2, the body in parts
/// migration record: 0x03, version (u8, 1), the new model's JSON length (varint) and JSON,
///                   then the plan (docs/FORMAT.md)
/// ```
enum StoreRecord: Sendable {
    case model(Model)
    case changes(ChangeSet, TransactionInfo)
    /// From here on, the store holds the objects of the previous model migrated to this one, by
    /// this plan.
    case migration(Model, MigrationPlan)

    /// A record as read back: a model, or changes as rows ready to apply.
    enum Decoded: Sendable {
        case model(Model)
        case changes(RowChangeSet)
        case migration(Model, MigrationPlan)
        /// A change record of version 2 read for replay: its parts, decoded one by one.
        case parts(ChangeRecordParts)
    }

    static let modelKind: UInt8 = 1
    static let changesKind: UInt8 = 2
    static let migrationKind: UInt8 = 3
    /// The newest record version: 3, for change records (a transaction header before the
    /// changes); model and migration records are version 1.
    static let version: UInt8 = 3

    /// Where a change record's body starts and how it is laid out.
    struct ChangeRecordBody {
        /// The body's first byte.
        var start: Int
        /// Whether the inserts are in parts (version 2's layout).
        var inParts: Bool
        /// The transaction header (nil before version 3).
        var transaction: TransactionInfo?
    }

    /// The record's bytes.
    func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 256)
        switch self {
        case .model(let model):
            writer.write(Self.modelKind)
            writer.write(1 as UInt8)
            writer.write(bytes: model.jsonData(pretty: false))
        case .migration(let model, let plan):
            writer.write(Self.migrationKind)
            writer.write(1 as UInt8)
            writer.writeLengthPrefixed(Array(model.jsonData(pretty: false)))
            plan.encode(into: &writer)
        case .changes(let changes, let transaction):
            let layout = ChangeSetCodec.recordVersion(inserts: changes.inserts.count)
            writer.write(Self.changesKind)
            writer.write(Self.version)
            transaction.write(inParts: layout == 2, into: &writer)
            ChangeSetCodec.encode(changes, version: layout, into: &writer)
        }
        return writer.bytes
    }

    /// The bytes of a change record that inserts new objects alone (a batch insert), each
    /// object's values written by `writeValues` (see ``ChangeSetCodec/encodeInserts(_:into:values:)``).
    static func encodedInserts(
        _ ids: [ObjectID], capacity: Int, updates: [ChangeSet.Update] = [], transaction: TransactionInfo,
        values writeValues: (Int, inout ByteWriter) throws -> Void
    ) rethrows -> [UInt8] {
        var writer = ByteWriter(capacity: capacity)
        let layout = ChangeSetCodec.recordVersion(inserts: ids.count)
        writer.write(changesKind)
        writer.write(version)
        transaction.write(inParts: layout == 2, into: &writer)
        try ChangeSetCodec.encodeInserts(ids, version: layout, into: &writer, updates: updates, values: writeValues)
        return writer.bytes
    }

    /// Parses a record of the frame at `lsn`, checking a change record against `model`. With
    /// `inParts`, a change record of version 2 comes back as its parts (for replay, which
    /// applies them as they are decoded); otherwise as one set.
    static func decode(_ bytes: [UInt8], lsn: LSN, model: Model?, inParts: Bool = false) throws -> Decoded {
        func damaged(_ message: String) -> StoreError {
            StoreError(.corruptRecord, "record at LSN \(lsn): \(message)", lsn: lsn)
        }
        guard bytes.count >= 2 else { throw damaged("too short") }
        let recordVersion = bytes[1]
        guard recordVersion >= 1 && recordVersion <= version else {
            let what =
                recordVersion > version
                ? "was written by a newer version of Cairn (record version \(recordVersion))"
                : "has record version \(recordVersion), which Cairn does not write"
            throw StoreError(.unsupportedFormat, "record at LSN \(lsn) \(what); this build reads versions 1 to \(version)", lsn: lsn)
        }
        guard recordVersion == 1 || (bytes[0] != modelKind && bytes[0] != migrationKind) else {
            // Versions are counted per kind: a model or migration record of a later version is
            // one a newer Cairn may write, not damage.
            throw StoreError(
                .unsupportedFormat,
                "record at LSN \(lsn): a \(bytes[0] == modelKind ? "model" : "migration") record of version \(recordVersion) was written by a newer version of Cairn; this build reads version 1 of it",
                lsn: lsn)
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
            return try reading(bytes, lsn: lsn) { reader in
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
            }
        case changesKind:
            guard let model else { throw damaged("a change record comes before any model record") }
            let body = try changeRecordBody(bytes, lsn: lsn, model: model)
            if body.inParts && inParts { return .parts(try ChangeRecordParts(bytes, lsn: lsn, model: model, body: body.start)) }
            return .changes(try changes(bytes, lsn: lsn, model: model, body: body))
        default:
            throw damaged("unknown record kind \(bytes[0])")
        }
    }

    /// The changes of change record `bytes`, whose body is `body`, as one set of rows.
    static func changes(_ bytes: [UInt8], lsn: LSN, model: Model, body: ChangeRecordBody) throws -> RowChangeSet {
        try reading(bytes, lsn: lsn, from: body.start) { reader in
            let changes = try ChangeSetCodec.decodeRows(&reader, model: model, version: body.inParts ? 2 : 1)
            guard reader.isAtEnd else {
                throw StoreError(.corruptRecord, "record at LSN \(lsn): \(reader.remaining) bytes after the last change", lsn: lsn)
            }
            return changes
        }
    }

    /// Where the body of change record `bytes` (of a version this build reads) starts, its
    /// layout, and its transaction header.
    ///
    /// - Throws: ``StoreError/Code/corruptRecord`` naming the LSN for a damaged header.
    static func changeRecordBody(_ bytes: [UInt8], lsn: LSN, model: Model? = nil) throws -> ChangeRecordBody {
        guard bytes.count >= 2, bytes[1] >= 3 else { return ChangeRecordBody(start: 2, inParts: bytes.count >= 2 && bytes[1] == 2) }
        return try reading(bytes, lsn: lsn) { reader in
            let (transaction, inParts) = try TransactionInfo.read(&reader, model: model)
            return ChangeRecordBody(start: reader.offset, inParts: inParts, transaction: transaction)
        }
    }

    /// Reads the record `bytes` from byte `start` (by default its body, after its kind and
    /// version) with `body`, a truncated or damaged body thrown as
    /// ``StoreError/Code/corruptRecord`` naming the LSN and the problem.
    static func reading<R>(_ bytes: [UInt8], lsn: LSN, from start: Int = 2, _ body: (inout ByteReader) throws -> R) throws -> R {
        func damaged(_ message: String) -> StoreError {
            StoreError(.corruptRecord, "record at LSN \(lsn): \(message)", lsn: lsn)
        }
        return try bytes.withUnsafeBytes { raw in
            var reader = ByteReader(raw, offset: start)
            do {
                return try body(&reader)
            } catch let overrun as ByteReader.Overrun {
                throw damaged("truncated at byte \(overrun.offset)")
            } catch let problem as EncodingProblem {
                throw damaged(problem.message)
            }
        }
    }
}
