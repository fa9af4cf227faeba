import CairnLog
import HashTreeCollections

/// The committed state of a store at one LSN: every object, and the uniqueness indexes.
///
/// Immutable once published. Persistent hash tries (`TreeDictionary`) make a new snapshot share
/// almost everything with the previous one, so a save costs in proportion to what it changed and
/// readers holding an older snapshot are never disturbed.
struct StoreSnapshot: Sendable {
    let model: Model
    /// The LSN of the last save it includes.
    private(set) var lsn: LSN
    /// Objects by key, one map per entity (by index).
    private(set) var objects: [TreeDictionary<UInt64, ObjectRecord>]
    /// Uniqueness indexes: the object holding each key.
    private(set) var unique: TreeDictionary<UniqueKey, ObjectID>
    /// The next object key to hand out.
    private(set) var nextKey: UInt64

    /// An empty store.
    init(model: Model) {
        self.model = model
        lsn = .zero
        objects = Array(repeating: [:], count: model.descriptions.count)
        unique = [:]
        nextKey = 1
    }

    /// An object's committed record.
    func record(_ id: ObjectID) -> ObjectRecord? {
        guard id.entity >= 0, id.entity < objects.count else { return nil }
        return objects[id.entity][id.key]
    }

    /// The number of objects of an entity (with its sub-entities when asked).
    func count(entity: Int, includingSubentities: Bool = true) -> Int {
        let entities = includingSubentities ? [entity] + model.descriptions[entity].descendants : [entity]
        return entities.reduce(0) { $0 + objects[$1].count }
    }

    /// The IDs of all objects of an entity (with its sub-entities when asked).
    func ids(entity: Int, includingSubentities: Bool = true) -> [ObjectID] {
        let entities = includingSubentities ? [entity] + model.descriptions[entity].descendants : [entity]
        return entities.flatMap { index in objects[index].keys.map { ObjectID(entity: index, key: $0) } }
    }

    /// The object holding these values of a uniqueness constraint.
    func holder(of key: UniqueKey) -> ObjectID? { unique[key] }

    /// The uniqueness keys of a record (constraints whose values are all non-nil).
    func uniqueKeys(entity: Int, values: [PropertyValue]) -> [UniqueKey] {
        model.uniqueKeys(entity: entity, values: values)
    }

    /// Reserves `count` new object keys and returns the first.
    mutating func reserveKeys(_ count: Int) -> UInt64 {
        defer { nextKey += UInt64(count) }
        return nextKey
    }

    /// Applies one save's changes as of `lsn`.
    ///
    /// - Throws: ``StoreError/Code/corruptRecord`` when the changes do not fit the state (an
    ///   insert of an existing object, an update or delete of a missing one).
    mutating func apply(_ changes: ChangeSet, at lsn: LSN) throws {
        func damaged(_ message: String) -> StoreError { StoreError(.corruptRecord, message, lsn: lsn) }
        for insert in changes.inserts {
            let id = insert.id
            guard objects[id.entity][id.key] == nil else { throw damaged("insert of existing object \(id)") }
            guard insert.values.count == model.descriptions[id.entity].propertyCount else { throw damaged("insert of \(id) with a wrong property count") }
            objects[id.entity][id.key] = ObjectRecord(values: insert.values, version: lsn)
            for key in uniqueKeys(entity: id.entity, values: insert.values) { unique[key] = id }
            nextKey = max(nextKey, id.key + 1)
        }
        for update in changes.updates {
            let id = update.id
            guard var record = objects[id.entity][id.key] else { throw damaged("update of missing object \(id)") }
            let oldKeys = uniqueKeys(entity: id.entity, values: record.values)
            for change in update.changes { record.values[change.position] = change.value }
            record.version = lsn
            objects[id.entity][id.key] = record
            let newKeys = uniqueKeys(entity: id.entity, values: record.values)
            if oldKeys != newKeys {
                for key in oldKeys where unique[key] == id { unique[key] = nil }
                for key in newKeys { unique[key] = id }
            }
        }
        for id in changes.deletes {
            guard let record = objects[id.entity].removeValue(forKey: id.key) else { throw damaged("delete of missing object \(id)") }
            for key in uniqueKeys(entity: id.entity, values: record.values) where unique[key] == id { unique[key] = nil }
        }
        self.lsn = max(self.lsn, lsn)
    }

    /// Marks the snapshot as including everything up to `lsn` (a record with no object changes).
    mutating func advance(to lsn: LSN) { self.lsn = max(self.lsn, lsn) }
}
