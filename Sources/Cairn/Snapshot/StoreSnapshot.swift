import CairnLog
import CairnSupport

/// The committed state of a store at one LSN: every object, and the uniqueness indexes.
///
/// Immutable once published. Persistent structures (the chunked ``ObjectTable``, the attribute
/// indexes' chunks) make a new snapshot share almost everything with the previous one, and the
/// ``UniqueIndex`` is shared by the whole line of snapshots, each reading it as of its LSN, so a
/// save costs in proportion to what it changed and readers holding an older snapshot are never
/// disturbed. Objects are kept as compact
/// rows; the uniqueness index maps a 64-bit hash of each key to its holders, checked against the row.
struct StoreSnapshot: Sendable {
    /// The state, behind one reference: a snapshot is handed from the store to contexts and
    /// fetches many times a second, and one retain costs less than one per structure.
    private final class Storage: @unchecked Sendable {
        // Safety: a storage is changed only through a snapshot holding the only reference to it
        // (`edit()` copies a shared one first), so no reader ever sees it change. Unchecked
        // exclusivity: the same rule makes every access exclusive already.
        let model: Model
        /// Registered with the uniqueness index, which keeps what a snapshot at this LSN reads.
        @exclusivity(unchecked) var lsn: LSN {
            didSet { if lsn != oldValue { unique.unregister(oldValue); unique.register(lsn) } }
        }
        @exclusivity(unchecked) var objects: ObjectTable
        /// Shared with the other snapshots of the line of saves, read as of ``lsn``.
        @exclusivity(unchecked) var unique: UniqueIndex {
            didSet { oldValue.unregister(lsn); unique.register(lsn) }
        }
        @exclusivity(unchecked) var nextKey: UInt64
        @exclusivity(unchecked) var indexes: [AttributeIndex]
        /// During a bulk build (replay): the attribute indexes are left as they are and built
        /// whole from the objects at its end (``StoreSnapshot/finishBulkIndexing()``).
        @exclusivity(unchecked) var indexesDeferred = false

        init(model: Model, lsn: LSN, objects: ObjectTable, unique: UniqueIndex, nextKey: UInt64, indexes: [AttributeIndex]) {
            self.model = model
            self.lsn = lsn
            self.objects = objects
            self.unique = unique
            self.nextKey = nextKey
            self.indexes = indexes
            unique.register(lsn)
        }

        deinit { unique.unregister(lsn) }

        /// A storage sharing every structure with this one (each copied on its first change).
        func copy() -> Storage {
            let copy = Storage(model: model, lsn: lsn, objects: objects, unique: unique, nextKey: nextKey, indexes: indexes)
            copy.indexesDeferred = indexesDeferred
            return copy
        }
    }

    private var storage: Storage

    /// The model the snapshot's objects follow.
    var model: Model { storage.model }
    /// The LSN of the last save it includes.
    var lsn: LSN { storage.lsn }
    /// Objects by key.
    var objects: ObjectTable { storage.objects }
    /// The next object key to hand out.
    var nextKey: UInt64 { storage.nextKey }
    /// One per slot of the model's ``IndexLayout``.
    var indexes: [AttributeIndex] { storage.indexes }
    /// The uniqueness index of the snapshot's line of saves, read as of ``lsn``.
    var uniqueIndex: UniqueIndex { storage.unique }

    /// The storage, this snapshot's alone (copied first when shared), for a change.
    private mutating func edit() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        return storage
    }

    /// An empty store.
    init(model: Model) {
        storage = Storage(
            model: model, lsn: .zero, objects: ObjectTable(entityCount: model.descriptions.count), unique: UniqueIndex(),
            nextKey: 1, indexes: model.indexLayout.emptyIndexes())
    }

    /// An object's committed record.
    func record(_ id: ObjectID) -> ObjectRecord? {
        storage.objects.record(id)
    }

    /// The number of objects of an entity (with its sub-entities when asked).
    func count(entity: Int, includingSubentities: Bool = true) -> Int {
        let entities = includingSubentities ? [entity] + storage.model.descriptions[entity].descendants : [entity]
        return entities.reduce(0) { $0 + storage.objects.counts[$1] }
    }

    /// The IDs of all objects of an entity (with its sub-entities when asked).
    func ids(entity: Int, includingSubentities: Bool = true) -> [ObjectID] {
        storage.objects.ids(includingSubentities ? storage.model.descriptions[entity].family : [entity])
    }

    /// The uniqueness keys of a record (constraints whose values are all non-nil).
    func uniqueKeys(entity: Int, values: [PropertyValue]) -> [UniqueKey] {
        storage.model.uniqueKeys(entity: entity, values: values)
    }

    /// The object holding these values of a uniqueness constraint.
    func holder(of key: UniqueKey) -> ObjectID? {
        guard let constraint = storage.model.descriptions[key.owner].uniqueness.first(where: { $0.number == key.number }) else { return nil }
        guard key.values.count == constraint.positions.count else { return nil }
        if key.values.count == 1 { return holder(of: key.values[0], for: constraint) }
        let encoded = key.values.map(ValueEncoding.encoded)
        var hasher = KeyHasher(owner: key.owner, number: key.number)
        for bytes in encoded { bytes.withUnsafeBytes { hasher.combine($0) } }
        return firstHolder(hasher.value, for: constraint) { row in
            zip(constraint.positions, encoded).allSatisfy { position, bytes in
                bytes.withUnsafeBytes { RowBytes.same(row.value(position), $0) }
            }
        }
    }

    /// The object holding `value` for a constraint of one attribute (a lookup by unique key:
    /// the value is encoded on the stack and compared with the holders' row bytes); nil for a
    /// constraint of several attributes.
    func holder(of value: Value, for constraint: UniquenessConstraint) -> ObjectID? {
        guard constraint.positions.count == 1 else { return nil }
        let position = constraint.positions[0]
        return ValueEncoding.withEncoded(value) { bytes in
            return firstHolder(KeyHasher.hash(of: bytes, for: constraint), for: constraint) { RowBytes.same($0.value(position), bytes) }
        }
    }

    /// ``holder(encoded:for:)`` for a constraint of one attribute (nil for another), with no
    /// array made for the lookup: the batch upsert's references by key. Called only with the
    /// store's commit lock held, as that one is.
    func holder(encodedValue value: UnsafeRawBufferPointer, for constraint: UniquenessConstraint) -> ObjectID? {
        guard constraint.positions.count == 1 else { return nil }
        let position = constraint.positions[0]
        return firstHolder(KeyHasher.hash(of: value, for: constraint), for: constraint, committing: true) { RowBytes.same($0.value(position), value) }
    }

    /// The object holding these values of a constraint, given as their stored bytes in the
    /// constraint's order (a lookup without a ``Value``: the batch upsert of encoded rows).
    /// Called only with the store's commit lock held (the batch upsert's plan): the lookup
    /// leaves the uniqueness index's lock to readers.
    func holder(encoded values: [UnsafeRawBufferPointer], for constraint: UniquenessConstraint) -> ObjectID? {
        guard values.count == constraint.positions.count else { return nil }
        var hasher = KeyHasher(owner: constraint.owner, number: constraint.number)
        for bytes in values { hasher.combine(bytes) }
        return firstHolder(hasher.value, for: constraint, committing: true) { row in
            zip(constraint.positions, values).allSatisfy { position, bytes in RowBytes.same(row.value(position), bytes) }
        }
    }

    /// The first object filed under `hash` in the uniqueness index, of the constraint's entity
    /// family and other than `excluded`, whose row `matches` (read in place).
    /// `committing`: the caller holds the store's commit lock (``UniqueIndex/firstHolderWhileCommitting(_:at:where:)``).
    private func firstHolder(
        _ hash: UInt64, for constraint: UniquenessConstraint, except excluded: ObjectID? = nil, committing: Bool = false,
        where matches: (RowBytes) -> Bool
    ) -> ObjectID? {
        let family = storage.model.descriptions[constraint.owner].family
        func test(_ id: ObjectID) -> Bool { id != excluded && family.contains(id.entity) && storage.objects.withRowBytes(id, matches) == true }
        return committing
            ? storage.unique.firstHolderWhileCommitting(hash, at: storage.lsn, where: test) : storage.unique.firstHolder(hash, at: storage.lsn, where: test)
    }

    /// Applies one save's changes as of `lsn`. Returns the objects whose new uniqueness keys
    /// share their hash with another object's: the only ones that may break a constraint, for
    /// the caller to check against rows.
    ///
    /// - Throws: ``StoreError/Code/corruptRecord`` when the changes do not fit the state (an
    ///   insert of an existing object, an update or delete of a missing one).
    @discardableResult
    mutating func apply(_ changes: RowChangeSet, at lsn: LSN) throws -> [ObjectID] {
        let storage = edit()
        // The uniqueness index is changed in place, as of `lsn`, unless this snapshot branches
        // off a state another save already moved on from.
        if !storage.unique.canApply(after: storage.lsn) { storage.unique = storage.unique.copy(asOf: storage.lsn) }
        storage.unique.begin(lsn)
        do {
            let clashing = try applyChanges(changes, at: lsn, to: storage)
            checkAfterMutation { () throws(InvariantViolation) in try checkInvariants(after: changes) }
            return clashing
        } catch {
            storage.unique.rollback(lsn)
            throw error
        }
    }

    /// Adds a chunk of objects as a base holds them (each with its version), its rows checked
    /// against the model first, filed in the indexes as of `lsn` (the base's LSN).
    ///
    /// - Throws: ``StoreError/Code/corruptRecord`` for a row that does not fit its entity, or a
    ///   chunk the table already has.
    mutating func load(_ loaded: LoadedChunk, at lsn: LSN) throws {
        let storage = edit()
        do {
            try loaded.chunk.checkLoadedRows(model: storage.model)
        } catch let problem as EncodingProblem {
            throw StoreError(
                .corruptRecord,
                "base \(loaded.location.path), block at offset \(loaded.location.blockOffset): chunk \(loaded.number), \(problem.message)")
        }
        guard storage.objects.install(loaded.chunk, number: loaded.number) else {
            throw StoreError(.corruptRecord, "a base holds chunk \(loaded.number) twice", lsn: lsn)
        }
        // The chunk's uniqueness keys are filed together (one lock of the index); the entity's
        // constraints are looked up when the entity changes (a chunk mostly holds one).
        let first = loaded.number << Tuning.objectChunkShift
        let descriptions = storage.model.descriptions
        let indexed = storage.model.indexLayout.byEntity
        var keys: [UniqueIndex.Key] = []
        keys.reserveCapacity(Tuning.objectChunkSize)
        var last = first
        var entity = -1
        var constraints: [UniquenessConstraint] = []
        var hasIndexes = false
        loaded.chunk.forEachRow { slot, _, rowEntity, row in
            let id = ObjectID(entity: rowEntity, key: first | UInt64(slot))
            if rowEntity != entity {
                entity = rowEntity
                constraints = descriptions[entity].uniqueness
                hasIndexes = !indexed[entity].isEmpty
            }
            for index in constraints.indices {
                if let hash = Self.keyHash(row, constraints[index]) { keys.append(UniqueIndex.Key(hash: hash, id: id)) }
            }
            if hasIndexes { indexValues(of: id, row: row, positions: nil, adding: true) }
            last = id.key
        }
        _ = storage.unique.add(keys, at: lsn)
        storage.nextKey = max(storage.nextKey, last + 1)
        storage.lsn = max(storage.lsn, lsn)
    }

    /// Undoes the uniqueness-index changes of the save at `lsn` just applied to this snapshot,
    /// which the caller then drops (a save refused after it was applied).
    func abandon(_ lsn: LSN) {
        storage.unique.rollback(lsn)
    }

    private func applyChanges(_ changes: RowChangeSet, at lsn: LSN, to storage: Storage) throws -> [ObjectID] {
        func damaged(_ message: String) -> StoreError { StoreError(.corruptRecord, message, lsn: lsn) }
        var clashing: [ObjectID] = []
        for insert in changes.inserts {
            guard insert.id.key > 0, insert.id.key < ObjectID.keyLimit else { throw damaged("object key \(insert.id.key) is out of range") }
        }
        // New objects' keys are filed together (in bucket order: the cache misses overlap); for
        // a large save, on another core while this one files the rows (nearly every key is a
        // cache miss in a large index). Filing must end before this returns or throws: a
        // failure's rollback must not run alongside it.
        let newKeys = changes.insertKeys ?? Self.insertKeys(of: changes, model: storage.model)
        let unique = storage.unique
        let filing =
            newKeys.count >= Tuning.concurrentKeys && !unique.isBuildingInBulk
            ? ConcurrentResult { [newKeys] () throws(Never) in unique.add(newKeys, at: lsn) } : nil
        if filing == nil { clashing += unique.add(newKeys, at: lsn) }
        do {
            if let taken = storage.objects.insert(changes, version: lsn) { throw damaged("insert of existing object \(taken)") }
            if changes.inserts.count >= Tuning.gatheredIndexInserts && !storage.indexesDeferred {
                fileInserted(changes, in: storage)
            } else {
                for insert in changes.inserts {
                    let id = insert.id
                    changes.withRow(insert) { row in indexValues(of: id, row: row.bytes, positions: nil, adding: true) }
                }
            }
            storage.nextKey = changes.inserts.reduce(storage.nextKey) { max($0, $1.id.key + 1) }
        } catch {
            _ = filing?.value()
            throw error
        }
        if let filing { clashing += filing.value() }
        // Each updated row is built in one scratch buffer from the old one (read in place,
        // without a record of it), then copied into its chunk (a long row: kept in a buffer
        // of its own).
        var scratch = RowStorage.make(capacity: 0)
        let descriptions = storage.model.descriptions
        for update in changes.updates {
            let id = update.id
            try changes.withPatch(update) { positions, patch in
                let constrained = descriptions[id.entity].isConstrained
                let touchesKeys = positions.contains { constrained[$0] }
                let built = storage.objects.withBorrowedRow(id) { old -> (RowStorage, count: Int) in
                    if touchesKeys { indexKeys(of: id, row: old.bytes, adding: false, at: lsn) }
                    indexValues(of: id, row: old.bytes, positions: positions, adding: false)
                    let count = old.bytes.count
                    return (Row.replacing(old.bytes.bytes, count: count, positions: positions, with: patch, in: &scratch), count)
                }
                guard let (buffer, count) = built else { throw damaged("update of missing object \(id)") }
                buffer.withBytes { bytes in
                    let new = BorrowedRow(bytes: RowBytes(bytes: bytes, count: count), storage: buffer, start: 0)
                    storage.objects.replace(new, version: lsn, entity: id.entity, key: id.key)
                    if touchesKeys && indexKeys(of: id, row: new.bytes, adding: true, at: lsn) { clashing.append(id) }
                    indexValues(of: id, row: new.bytes, positions: positions, adding: true)
                }
            }
        }
        for id in changes.deletes {
            guard let record = storage.objects.remove(id) else { throw damaged("delete of missing object \(id)") }
            record.row.withBorrowed { old in
                indexKeys(of: id, row: old.bytes, adding: false, at: lsn)
                indexValues(of: id, row: old.bytes, positions: nil, adding: false)
            }
        }
        storage.lsn = max(storage.lsn, lsn)
        return clashing
    }

    /// The uniqueness keys of a change set's inserted rows, in insert order.
    static func insertKeys(of changes: RowChangeSet, model: Model) -> [UniqueIndex.Key] {
        var keys: [UniqueIndex.Key] = []
        for insert in changes.inserts {
            let id = insert.id
            changes.withRow(insert) { row in
                for constraint in model.descriptions[id.entity].uniqueness {
                    if let hash = Self.keyHash(row.bytes, constraint) { keys.append(UniqueIndex.Key(hash: hash, id: id)) }
                }
            }
        }
        return keys
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
            if ValueEncoding.isNull(bytes) { return nil }
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

    /// An object other than `id`, of the constraint's entity family, whose key for the
    /// constraint equals `row`'s (the hash found in the uniqueness index, then the values
    /// compared in the holders' rows, in place); nil when `id` holds its key alone.
    func otherHolder(of row: RowBytes, hash: UInt64, for constraint: UniquenessConstraint, except id: ObjectID) -> ObjectID? {
        firstHolder(hash, for: constraint, except: id) { other in
            constraint.positions.allSatisfy { RowBytes.same(other.value($0), row.value($0)) }
        }
    }

    /// Adds or removes an object's entries in the attribute indexes (only those of `positions`
    /// when given).
    private func indexValues(of id: ObjectID, row: RowBytes, positions: ArraySlice<Int>?, adding: Bool) {
        guard !storage.indexesDeferred else { return }
        for (position, slot) in storage.model.indexLayout.byEntity[id.entity] where positions?.contains(position) ?? true {
            guard case .attribute(let value) = ValueEncoding.decodeProperty(row.value(position)) else { continue }
            if adding { storage.indexes[slot].insert(value, id) } else { storage.indexes[slot].remove(value, id) }
        }
    }

    /// Files the attribute values of a large save's inserted objects: each index's entries
    /// gathered and sorted, then filed together (``AttributeIndex/insert(gathered:filings:entity:)``).
    private func fileInserted(_ changes: RowChangeSet, in storage: Storage) {
        let layout = storage.model.indexLayout
        guard !layout.slots.isEmpty else { return }
        var gatherer = IndexEntryGatherer(layout: layout)
        for insert in changes.inserts { changes.withRow(insert) { gatherer.visit(insert.id, $0) } }
        let gathered = gatherer.takeResult()
        for slot in layout.slots.indices {
            storage.indexes[slot].insert(gathered: gathered.ordered[slot], filings: gathered.filings[slot], entity: layout.slots[slot].entity)
        }
    }

    /// Adds or removes an object's entries in the uniqueness index.
    /// Returns whether an added key shares its hash with another object's.
    @discardableResult
    private func indexKeys(of id: ObjectID, row: RowBytes, adding: Bool, at lsn: LSN) -> Bool {
        var shared = false
        for constraint in storage.model.descriptions[id.entity].uniqueness {
            guard let hash = Self.keyHash(row, constraint) else { continue }
            if adding {
                if storage.unique.add(hash, id, at: lsn) { shared = true }
            } else {
                storage.unique.remove(hash, id, at: lsn)
            }
        }
        return shared
    }

    /// Whether the attribute indexes wait for the end of a bulk build (``startBulkIndexing()``).
    var attributeIndexesDeferred: Bool { storage.indexesDeferred }

    /// Queues uniqueness-index changes from now on and builds the index in bulk at
    /// ``finishBulkIndexing()``; leaves the attribute indexes alone until then, when they are
    /// built whole from the objects (replay: no one reads the snapshot until then, and one sort
    /// of each index's entries costs far less than filing every object one at a time).
    mutating func startBulkIndexing() {
        let storage = edit()
        storage.unique.startBulkBuild()
        storage.indexesDeferred = true
    }

    /// Applies the queued uniqueness-index changes and builds the attribute indexes.
    mutating func finishBulkIndexing() {
        let storage = edit()
        storage.unique.finishBulkBuild()
        if storage.indexesDeferred {
            storage.indexesDeferred = false
            storage.indexes = AttributeIndex.built(from: storage.objects, layout: storage.model.indexLayout)
        }
        checkAfterMutation { () throws(InvariantViolation) in if objects.counts.reduce(0, +) <= Tuning.wholeCheckLimit { try checkInvariants() } }
    }

    /// Makes sure keys below `key` are never handed out again.
    mutating func reserveKeys(below key: UInt64) {
        let storage = edit()
        storage.nextKey = max(storage.nextKey, key)
    }

    /// Every uniqueness constraint that two objects break, one line each (for migration, which
    /// may add constraints to existing data).
    func uniquenessClashes() -> [String] {
        var lines: [String] = []
        for entity in storage.model.descriptions {
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
                    lines.append(
                        "uniqueness constraint \(entity.name)(\(constraint.names.joined(separator: ", "))) is broken by \(clashes) object\(clashes == 1 ? "" : "s")"
                    )
                }
            }
        }
        return lines
    }

    /// Marks the snapshot as including everything up to `lsn` (a record with no object changes).
    mutating func advance(to lsn: LSN) {
        let storage = edit()
        storage.lsn = max(storage.lsn, lsn)
    }
}

/// FNV-1a over a constraint's number and its values' encoded bytes.
struct KeyHasher {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    init(owner: Int, number: Int) {
        mix(UInt64(owner) &* 31 &+ UInt64(number))
    }

    /// The key hash of one value's bytes for a constraint of one attribute.
    static func hash(of bytes: UnsafeRawBufferPointer, for constraint: UniquenessConstraint) -> UInt64 {
        var hasher = KeyHasher(owner: constraint.owner, number: constraint.number)
        hasher.combine(bytes)
        return hasher.value
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
