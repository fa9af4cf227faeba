import CairnLog
import CairnSupport
import Foundation

/// A change record's changes as history lists them, decoded from the record when first asked
/// for (``HistoryTransaction/changes``), then kept.
final class HistoryChanges: Sendable {
    private let record: LogRecord
    let model: Model
    /// The entities wanted, by index (nil: all).
    private let wanted: Set<Int>?
    private let decodedChanges = Protected<Result<[HistoryChange], StoreError>?>(nil)

    init(record: LogRecord, model: Model, wanted: Set<Int>?) {
        self.record = record
        self.model = model
        self.wanted = wanted
    }

    /// The changes (decoded at the first call; the same changes, or error, at every call).
    func decoded() throws -> [HistoryChange] {
        try decodedChanges.withLock { decoded in
            if let decoded { return decoded }
            let result: Result<[HistoryChange], StoreError>
            do {
                result = .success(try decode())
            } catch var error as StoreError {
                if error.file == nil {
                    error.file = record.file
                    error.offset = record.offset
                }
                result = .failure(error)
            } catch {
                result = .failure(StoreError(.corruptRecord, "record at LSN \(record.lsn): \(error)", lsn: record.lsn, file: record.file))
            }
            decoded = result
            return result
        }.get()
    }

    private func decode() throws -> [HistoryChange] {
        let bytes = record.payload
        let body = try StoreRecord.changeRecordBody(bytes, lsn: record.lsn, model: model)
        let rows = try StoreRecord.changes(bytes, lsn: record.lsn, model: model, body: body)
        return Self.changes(rows, tombstones: body.transaction?.tombstones ?? [:], model: model, wanted: wanted)
    }

    /// The changes of a record's rows, of the entities `wanted` (nil: all).
    private static func changes(_ rows: RowChangeSet, tombstones: [ObjectID: [Int: Value]], model: Model, wanted: Set<Int>?) -> [HistoryChange] {
        let descriptions = model.descriptions
        func include(_ id: ObjectID) -> Bool {
            descriptions.indices.contains(id.entity) && (wanted?.contains(id.entity) ?? true)
        }
        func names(_ positions: some Sequence<Int>, of description: EntityDescription) -> [String] {
            let all = description.propertyNames
            return positions.map { all.indices.contains($0) ? all[$0] : "#\($0)" }
        }
        var changes: [HistoryChange] = []
        changes.reserveCapacity(rows.inserts.count + rows.updates.count + rows.deletes.count)
        for insert in rows.inserts where include(insert.id) {
            let description = descriptions[insert.id.entity]
            changes.append(
                HistoryChange(
                    kind: .inserted, objectID: insert.id, entity: description.entity.name, properties: description.propertyNames,
                    values: rows.row(insert).values))
        }
        for update in rows.updates where include(update.id) {
            let description = descriptions[update.id.entity]
            let (properties, values) = rows.withPatch(update) { positions, patch in
                (names(positions, of: description), Row.decodedValues(patch, count: positions.count))
            }
            changes.append(
                HistoryChange(kind: .updated, objectID: update.id, entity: description.entity.name, properties: properties, values: values))
        }
        for id in rows.deletes where include(id) {
            let description = descriptions[id.entity]
            let tombstone = (tombstones[id] ?? [:]).sorted { $0.key < $1.key }
            changes.append(
                HistoryChange(
                    kind: .deleted, objectID: id, entity: description.entity.name, properties: names(tombstone.map(\.key), of: description),
                    values: tombstone.map { .attribute($0.value) }))
        }
        return changes
    }
}
