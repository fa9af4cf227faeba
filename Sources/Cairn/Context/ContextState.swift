import CairnLog

/// What a context holds, by the phase of its life each part belongs to:
/// - **reading**: the snapshot it reads and the objects it handed out;
/// - **changing**: its pending changes (``inserted``, ``updated``, ``deleted``, ``discarded``,
///   ``deletedOriginals``), the uniqueness keys of the objects they touch (``keys``) and the keys
///   reserved for new objects (``newKeys``);
/// - **saving**: the merge policy and whether a save is under way.
struct ContextState {
    // MARK: Reading

    /// The snapshot a root context reads (nil: follow the store's latest, or read the parent).
    var snapshot: StoreSnapshot? { didSet { viewVersion?.bump() } }
    /// Counts the changes to what the context reads (``snapshot`` and every change counted by
    /// ``changeCount``), for readers that keep a copy of an object's view.
    var viewVersion: ViewVersion?
    /// The identity map: one object instance per ID, so that a context that reads many objects
    /// keeps only (about) those its callers still hold.
    var registered = IdentityMap()

    // MARK: Changing

    /// New objects with all their values.
    var inserted = InsertedObjects() { didSet { changeCount &+= 1 } }
    /// Existing objects changed: their changed properties, and in a root context the committed
    /// record each was changed from (one entry per object, so that a save reads both at once).
    var updated = UpdatedObjects() { didSet { changeCount &+= 1 } }
    /// Existing objects deleted.
    var deleted: Set<ObjectID> = [] { didSet { changeCount &+= 1 } }
    /// The updated objects whose changes may set a required attribute or a relationship: the
    /// only updates a root context's save validates (its other changes leave committed values
    /// that were checked when they were saved). A superset: an object stays in it while it has
    /// pending changes, even when the change that put it there was undone.
    var updatesToValidate: Set<ObjectID> = []
    /// Objects inserted, then deleted before a save (they answer `isDeleted`).
    var discarded: Set<ObjectID> = [] { didSet { changeCount &+= 1 } }
    /// Counts the changes to `inserted`, `updated`, `deleted` and `discarded` (a save that finds
    /// it unchanged when it is done knows that nothing changed while it ran, and empties them at
    /// once; ``updatesToValidate`` follows `updated`). `didSet` without `oldValue` keeps their
    /// in-place changes in place.
    private(set) var changeCount: UInt64 = 0 { didSet { viewVersion?.bump() } }
    /// The committed record of each deleted object as the context first changed it (root
    /// contexts; an updated object's is in its ``PendingUpdate``).
    var deletedOriginals: [ObjectID: ObjectRecord] = [:]
    /// Uniqueness keys of objects with unsaved changes.
    var keys = PendingKeys()
    /// Keys reserved from the store for new objects.
    var newKeys = KeyReservation()

    // MARK: Saving

    /// How saves resolve conflicts.
    var mergePolicy: MergePolicy = .error
    /// The author its saves record.
    var transactionAuthor: String?
    /// Whether a save of the context is under way.
    var saving = false
    /// A change a typed property could not make (its setter cannot throw): the next save
    /// throws it, and a rollback forgets it.
    var deferredError: StoreError?

    /// Forgets every pending change and filed key (not the discarded objects).
    private mutating func forgetPendingChanges() {
        inserted = InsertedObjects()
        updated = UpdatedObjects()
        updatesToValidate = []
        deleted = []
        deletedOriginals = [:]
        keys.removeAll()
    }

    /// Records a new object with all its values (`constrained`: its entity has uniqueness
    /// constraints, whose keys are worked out when a lookup asks); returns its slot in
    /// ``inserted``.
    mutating func insert(_ id: ObjectID, _ values: [PropertyValue], constrained: Bool) -> Int {
        let slot = inserted.nextSlot
        inserted.add(id, values)
        if constrained { keys.markStale(id, among: inserted) }
        return slot
    }

    /// Sets a property of an object inserted in this context, in place (no copy of its
    /// values), through its slot in ``inserted`` when it is still there (`slot` < 0: look it
    /// up); false when the object is not one.
    mutating func setInserted(_ id: ObjectID, slot: Int, _ position: Int, _ value: PropertyValue, constrained: Bool) -> Bool {
        guard inserted.setValue(value, at: position, slot: slot, of: id) || inserted.setValue(value, at: position, of: id) else { return false }
        if constrained { keys.markStale(id, among: inserted) }  // its keys are worked out when asked for
        return true
    }

    /// Records a change to an existing object's value at `position`; `original`: the committed
    /// record it is changed from, kept the first time it changes (nil in a child context);
    /// `validated`: the position holds a required attribute or a relationship (see
    /// ``updatesToValidate``).
    mutating func update(_ id: ObjectID, _ position: Int, _ value: PropertyValue, validated: Bool, original: @autoclosure () -> ObjectRecord?) {
        updated.change(id, orAdd: { PendingUpdate(original: original()) }) { $0.set(position, value) }
        if validated { updatesToValidate.insert(id) }
    }

    /// Records the deletion of an existing object, keeping the committed record it was first
    /// changed from (its pending update's, else `original`).
    mutating func deleteExisting(_ id: ObjectID, original: ObjectRecord?) {
        deleted.insert(id)
        if deletedOriginals[id] == nil, let original = updated[id]?.original ?? original { deletedOriginals[id] = original }
    }

    var hasChanges: Bool { !inserted.isEmpty || !updated.isEmpty || !deleted.isEmpty }

    /// Whether an object's committed value at `position` is still its value in this state: the
    /// object was not deleted, and that value not changed.
    func keepsCommittedValue(_ id: ObjectID, at position: Int) -> Bool {
        !deleted.contains(id) && !discarded.contains(id) && !inserted.contains(id) && updated[id]?.values[position] == nil
    }

    /// After a save of everything that was pending, when nothing changed since it began
    /// (``changeCount`` as it was then): forgets every pending change and key at once. False
    /// when something changed (the caller then removes what was saved one object at a time).
    mutating func clearSaved(changeCount taken: UInt64) -> Bool {
        guard changeCount == taken else { return false }
        // Objects inserted and deleted before the save stay discarded (they answer isDeleted).
        forgetPendingChanges()
        return true
    }

    /// The pending changes, taken out of the state (a rollback or a reset drops them).
    mutating func takeChanges() -> PendingChanges {
        defer {
            forgetPendingChanges()
            discarded = []
            deferredError = nil
        }
        return pendingChanges
    }

    /// A copy of the pending changes; they stay in the context (and visible) while it saves.
    var pendingChanges: PendingChanges {
        PendingChanges(
            inserted: inserted, updated: updated, updatesToValidate: updatesToValidate, deleted: deleted, deletedOriginals: deletedOriginals)
    }

    /// After `saved` was saved: drops what was saved, and keeps what changed since, now as
    /// changes to the saved state. `committed` gives an object's record as saved (root contexts),
    /// the base for later conflict checks.
    mutating func removeSaved(_ saved: PendingChanges, committed: (ObjectID) -> ObjectRecord?) {
        /// Changes kept are now changes to the saved state: their conflict checks start from it.
        func keep(_ id: ObjectID, _ values: PropertyChanges) {
            updated[id] = PendingUpdate(values: values, original: committed(id))
            updatesToValidate.insert(id)  // checked again at the next save, whatever it changed
        }
        for (id, values) in saved.inserted {
            if discarded.remove(id) != nil {  // deleted during the save: now delete it for real
                deleted.insert(id)
                deletedOriginals[id] = committed(id)
                continue
            }
            guard let current = inserted.removeValue(forKey: id) else { continue }
            // Unchanged since the save took them (the same storage): nothing to keep.
            if Self.sameStorage(current, values) { continue }
            let since = PropertyChanges(Dictionary(uniqueKeysWithValues: current.indices.filter { current[$0] != values[$0] }.map { ($0, current[$0]) }))
            if !since.isEmpty { keep(id, since) }
        }
        for (id, update) in saved.updated where saved.inserted[id] == nil {
            guard var current = updated[id]?.values else { continue }
            for (position, value) in update.values where current[position] == value { current[position] = nil }
            if current.isEmpty { updated[id] = nil } else { keep(id, current) }
            if deleted.contains(id) { deletedOriginals[id] = committed(id) }
        }
        for id in saved.deleted {
            deleted.remove(id)
            deletedOriginals[id] = nil
        }
        // Objects no longer updated leave the updates to validate (those kept stay in it).
        updatesToValidate = updatesToValidate.filter(updated.contains)
    }
}

extension ContextState {
    /// Whether two arrays share their storage (so hold the same values), without comparing them.
    static func sameStorage(_ a: [PropertyValue], _ b: [PropertyValue]) -> Bool {
        a.count == b.count && a.withUnsafeBufferPointer { x in b.withUnsafeBufferPointer { y in x.baseAddress == y.baseAddress } }
    }
}

/// A context's pending changes, as a save takes them.
struct PendingChanges: Sendable {
    var inserted: InsertedObjects
    var updated: UpdatedObjects
    /// ``ContextState/updatesToValidate``.
    var updatesToValidate: Set<ObjectID>
    var deleted: Set<ObjectID>
    var deletedOriginals: [ObjectID: ObjectRecord]

    var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }
}
