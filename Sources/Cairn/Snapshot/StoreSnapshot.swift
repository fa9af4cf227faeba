import CairnLog

/// The committed state of a store at one LSN: every object, and the uniqueness indexes.
///
/// Immutable once published. Persistent structures (the chunked ``ObjectTable``, the
/// ``UniqueIndex``'s copy-on-write buckets, the attribute indexes' chunks) make a new snapshot
/// share almost everything with the previous one, so a save costs in proportion to what it
/// changed and readers holding an older snapshot are never disturbed. Objects are kept as compact
/// rows; the uniqueness index maps a 64-bit hash of each key to its holders, checked against the row.
struct StoreSnapshot: Sendable {
    let model: Model
    /// The LSN of the last save it includes.
    private(set) var lsn: LSN
    /// Objects by key.
    private(set) var objects: ObjectTable
    /// Uniqueness index: key hash → holders.
    private var unique: UniqueIndex
    /// The next object key to hand out.
    private(set) var nextKey: UInt64
    /// One per slot of the model's ``IndexLayout``.
    private(set) var indexes: [AttributeIndex]

    /// An empty store.
    init(model: Model) {
        self.model = model
        lsn = .zero
        objects = ObjectTable(entityCount: model.descriptions.count)
        unique = UniqueIndex()
        nextKey = 1
        indexes = Array(repeating: AttributeIndex(), count: model.indexLayout.slots.count)
    }

    /// An object's committed record.
    func record(_ id: ObjectID) -> ObjectRecord? {
        objects.record(id)
    }

    /// The number of objects of an entity (with its sub-entities when asked).
    func count(entity: Int, includingSubentities: Bool = true) -> Int {
        let entities = includingSubentities ? [entity] + model.descriptions[entity].descendants : [entity]
        return entities.reduce(0) { $0 + objects.counts[$1] }
    }

    /// The IDs of all objects of an entity (with its sub-entities when asked).
    func ids(entity: Int, includingSubentities: Bool = true) -> [ObjectID] {
        objects.ids(includingSubentities ? model.descriptions[entity].family : [entity])
    }

    /// The uniqueness keys of a record (constraints whose values are all non-nil).
    func uniqueKeys(entity: Int, values: [PropertyValue]) -> [UniqueKey] {
        model.uniqueKeys(entity: entity, values: values)
    }

    /// The object holding these values of a uniqueness constraint.
    func holder(of key: UniqueKey) -> ObjectID? {
        guard let constraint = model.descriptions[key.owner].uniqueness.first(where: { $0.number == key.number }) else { return nil }
        let encoded = key.values.map(ChangeSetCodec.encoded)
        var hasher = KeyHasher(owner: key.owner, number: key.number)
        for bytes in encoded { bytes.withUnsafeBytes { hasher.combine($0) } }
        let family = model.descriptions[key.owner].family
        return unique.holders(hasher.value).first { id in
            guard family.contains(id.entity), let record = record(id) else { return false }
            return zip(constraint.positions, encoded).allSatisfy { position, bytes in
                record.row.withValueBytes(position) { $0.elementsEqual(bytes) }
            }
        }
    }

    /// Applies one save's changes as of `lsn`.
    ///
    /// - Throws: ``StoreError/Code/corruptRecord`` when the changes do not fit the state (an
    ///   insert of an existing object, an update or delete of a missing one).
    mutating func apply(_ changes: RowChangeSet, at lsn: LSN) throws {
        func damaged(_ message: String) -> StoreError { StoreError(.corruptRecord, message, lsn: lsn) }
        for insert in changes.inserts {
            // Keys come from a counter that starts at 1; half the range is more than any store
            // can use, and keeps the counter far from overflowing.
            guard insert.id.key > 0, insert.id.key < UInt64.max >> 1 else { throw damaged("object key \(insert.id.key) is out of range") }
        }
        if let taken = objects.insert(changes, version: lsn) { throw damaged("insert of existing object \(taken)") }
        for insert in changes.inserts {
            let id = insert.id
            changes.withRow(insert) { row in
                indexKeys(of: id, row: row.bytes, adding: true)
                indexValues(of: id, row: row.bytes, positions: nil, adding: true)
            }
            nextKey = max(nextKey, id.key + 1)
        }
        for update in changes.updates {
            let id = update.id
            guard let record = objects.record(id) else { throw damaged("update of missing object \(id)") }
            let touchesKeys = update.positions.contains(where: model.descriptions[id.entity].uniquePositions.contains)
            record.row.withBorrowed { old in
                if touchesKeys { indexKeys(of: id, row: old.bytes, adding: false) }
                indexValues(of: id, row: old.bytes, positions: update.positions, adding: false)
            }
            let row = record.row.replacing(update.positions, with: update.patch)
            objects.replace(ObjectRecord(row: row, version: lsn, entity: id.entity), key: id.key)
            row.withBorrowed { new in
                if touchesKeys { indexKeys(of: id, row: new.bytes, adding: true) }
                indexValues(of: id, row: new.bytes, positions: update.positions, adding: true)
            }
        }
        for id in changes.deletes {
            guard let record = objects.remove(id) else { throw damaged("delete of missing object \(id)") }
            record.row.withBorrowed { old in
                indexKeys(of: id, row: old.bytes, adding: false)
                indexValues(of: id, row: old.bytes, positions: nil, adding: false)
            }
        }
        self.lsn = max(self.lsn, lsn)
    }

    /// The hash of a row's key for a constraint; nil when one of its values is nil (no key).
    static func keyHash(_ row: Row, _ constraint: UniquenessConstraint) -> UInt64? {
        row.withBorrowed { keyHash($0.bytes, constraint) }
    }

    /// The hash of a row's key for a constraint, from its bytes.
    static func keyHash(_ row: RowBytes, _ constraint: UniquenessConstraint) -> UInt64? {
        var hasher = KeyHasher(owner: constraint.owner, number: constraint.number)
        for position in constraint.positions {
            let bytes = row.value(position)
            if bytes.first == ChangeSetCodec.Tag.null.rawValue { return nil }
            hasher.combine(bytes)
        }
        return hasher.value
    }

    /// Whether two rows hold the same values at `positions`.
    static func sameKey(_ a: Row, _ b: Row, _ positions: [Int]) -> Bool {
        positions.allSatisfy { position in
            a.withValueBytes(position) { first in b.withValueBytes(position) { first.elementsEqual($0) } }
        }
    }

    /// The committed objects of the constraint's entity family whose key has this hash.
    func holders(ofHash hash: UInt64, for constraint: UniquenessConstraint) -> [ObjectID] {
        let family = model.descriptions[constraint.owner].family
        return unique.holders(hash).filter { family.contains($0.entity) }
    }

    /// Adds or removes an object's entries in the attribute indexes (only those of `positions`
    /// when given).
    private mutating func indexValues(of id: ObjectID, row: RowBytes, positions: [Int]?, adding: Bool) {
        for (position, slot) in model.indexLayout.byEntity[id.entity] where positions?.contains(position) ?? true {
            guard case .attribute(let value) = ChangeSetCodec.decodeStored(row.value(position)) else { continue }
            if adding { indexes[slot].insert(value, id) } else { indexes[slot].remove(value, id) }
        }
    }

    /// Adds or removes an object's entries in the uniqueness index.
    private mutating func indexKeys(of id: ObjectID, row: RowBytes, adding: Bool) {
        for constraint in model.descriptions[id.entity].uniqueness {
            guard let hash = Self.keyHash(row, constraint) else { continue }
            if adding { unique.add(hash, id) } else { unique.remove(hash, id) }
        }
    }

    /// Queues uniqueness-index changes from now on and builds the index in bulk at
    /// ``finishBulkIndexing()`` (replay: no one reads the snapshot until then).
    mutating func startBulkIndexing() { unique.startBulkBuild() }

    /// Applies the queued uniqueness-index changes.
    mutating func finishBulkIndexing() { unique.finishBulkBuild() }

    /// Makes sure keys below `key` are never handed out again.
    mutating func reserveKeys(below key: UInt64) { nextKey = max(nextKey, key) }

    /// Every uniqueness constraint that two objects break, one line each (for migration, which
    /// may add constraints to existing data).
    func uniquenessClashes() -> [String] {
        var lines: [String] = []
        for entity in model.descriptions {
            for constraint in entity.uniqueness where constraint.owner == entity.index {
                var seen: [UInt64: [Row]] = [:]
                var clashes = 0
                for id in ids(entity: entity.index) {
                    guard let row = record(id)?.row, let hash = Self.keyHash(row, constraint) else { continue }
                    if seen[hash]?.contains(where: { Self.sameKey($0, row, constraint.positions) }) == true {
                        clashes += 1
                    } else {
                        seen[hash, default: []].append(row)
                    }
                }
                if clashes > 0 {
                    lines.append("uniqueness constraint \(entity.name)(\(constraint.names.joined(separator: ", "))) is broken by \(clashes) object\(clashes == 1 ? "" : "s")")
                }
            }
        }
        return lines
    }

    /// Marks the snapshot as including everything up to `lsn` (a record with no object changes).
    mutating func advance(to lsn: LSN) { self.lsn = max(self.lsn, lsn) }
}

/// FNV-1a over a constraint's number and its values' encoded bytes.
struct KeyHasher {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    init(owner: Int, number: Int) {
        mix(UInt64(owner) &* 31 &+ UInt64(number))
    }

    mutating func combine(_ bytes: UnsafeRawBufferPointer) {
        for byte in bytes {
            value ^= UInt64(byte)
            value &*= 0x0000_0100_0000_01b3
        }
        mix(UInt64(bytes.count))
    }

    private mutating func mix(_ word: UInt64) {
        value ^= word
        value &*= 0x0000_0100_0000_01b3
    }
}
