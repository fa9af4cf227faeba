import CairnSupport

// The rules of a snapshot as a whole, checked after every save applied to it when
// `CAIRN_INTERNAL_CHECKS` is set: every object while the store is small, the objects the save
// touched otherwise.

extension StoreSnapshot {
    /// Checks every rule of the snapshot: the object table's; each object's (see
    /// ``checkObject(_:)``); outside a bulk build, that each ordered index holds exactly the
    /// objects' values, and a slot has a hash index exactly when its values do not pack; at
    /// the newest LSN, that the uniqueness index holds exactly their keys.
    func checkInvariants() throws(InvariantViolation) {
        try objects.checkInvariants()
        var keys = 0
        var values = Array(repeating: 0, count: indexes.count)
        for description in model.descriptions {
            for id in objects.ids([description.index]) {
                keys += try checkObject(id)
                guard let record = record(id) else { continue }
                for (position, slot) in model.indexLayout.byEntity[id.entity] where slot < values.count {
                    if case .attribute(let value)? = record.row.withBorrowed({ ValueEncoding.decodeProperty($0.bytes.value(position)) }), value != .null {
                        values[slot] += 1
                    }
                }
            }
        }
        for (slot, index) in indexes.enumerated() where !attributeIndexesDeferred {
            try require(
                (index.hashed == nil) == (model.indexLayout.kinds[slot] != nil), "StoreSnapshot",
                "index slot \(slot) has \(index.hashed == nil ? "no" : "a") hash index")
            try require(
                index.ordered.count == values[slot], "StoreSnapshot", "index slot \(slot) files \(index.ordered.count) values; the objects hold \(values[slot])"
            )
        }
        if !uniqueIndex.isBuildingInBulk && uniqueIndex.canApply(after: lsn) {
            try require(uniqueIndex.count == keys, "StoreSnapshot", "the uniqueness index holds \(uniqueIndex.count) keys; the objects have \(keys)")
        }
    }

    /// Checks the objects a save changed (every object while the store is small): those it
    /// inserted or updated follow ``checkObject(_:)``, those it deleted are gone.
    func checkInvariants(after changes: RowChangeSet) throws(InvariantViolation) {
        if objects.counts.reduce(0, +) <= Tuning.wholeCheckLimit { return try checkInvariants() }
        for insert in changes.inserts { try checkObject(insert.id) }
        for update in changes.updates { try checkObject(update.id) }
        for id in changes.deletes { try require(record(id) == nil, "StoreSnapshot", "deleted object \(id) is still there") }
    }

    /// Checks one object's rules and returns the number of its uniqueness keys: it exists, of a
    /// concrete entity of the model; its version is a save at or before the snapshot's LSN; its
    /// key is below the next key handed out; each of its uniqueness keys is filed once for it
    /// (outside a bulk build); each indexed value is in its attribute's indexes (outside a bulk
    /// build, which builds them at its end).
    @discardableResult
    func checkObject(_ id: ObjectID) throws(InvariantViolation) -> Int {
        guard let record = record(id) else { throw InvariantViolation("StoreSnapshot", "object \(id) is missing") }
        try require(
            model.descriptions.indices.contains(record.entity) && !model.descriptions[record.entity].isAbstract, "StoreSnapshot",
            "object \(id) has entity \(record.entity), not a concrete entity of the model")
        try require(record.version.rawValue > 0 && record.version <= lsn, "StoreSnapshot", "object \(id) has version \(record.version), snapshot at \(lsn)")
        try require(id.key < nextKey, "StoreSnapshot", "object \(id)'s key is not below the next key \(nextKey)")
        var keys = 0
        for constraint in model.descriptions[id.entity].uniqueness {
            guard let hash = Self.keyHash(record.row, constraint) else { continue }
            keys += 1
            guard !uniqueIndex.isBuildingInBulk else { continue }
            let filed = uniqueIndex.holders(hash, at: lsn).count(where: { $0 == id })
            try require(filed == 1, "StoreSnapshot", "object \(id)'s key of constraint \(constraint.number) is filed \(filed) times")
        }
        for (position, slot) in model.indexLayout.byEntity[id.entity] where slot < indexes.count && !attributeIndexesDeferred {
            guard case .attribute(let value)? = record.row.withBorrowed({ ValueEncoding.decodeProperty($0.bytes.value(position)) }), value != .null
            else { continue }
            try require(indexes[slot].contains(value, id), "StoreSnapshot", "object \(id)'s value at \(position) is missing from index slot \(slot)")
        }
        return keys
    }
}
