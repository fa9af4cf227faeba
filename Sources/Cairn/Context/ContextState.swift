import CairnLog

/// What a context holds: its snapshot, its pending changes, and the objects it handed out.
struct ContextState {
    /// The snapshot a root context reads (nil: follow the store's latest, or read the parent).
    var snapshot: StoreSnapshot?
    /// New objects with all their values.
    var inserted = InsertedObjects() { didSet { changeCount &+= 1 } }
    /// Changed properties of existing objects, by position.
    var updated: [ObjectID: [Int: PropertyValue]] = [:] { didSet { changeCount &+= 1 } }
    /// Existing objects deleted.
    var deleted: Set<ObjectID> = [] { didSet { changeCount &+= 1 } }
    /// Objects inserted, then deleted before a save (they answer `isDeleted`).
    var discarded: Set<ObjectID> = [] { didSet { changeCount &+= 1 } }
    /// Counts the changes to the four above (a save that finds it unchanged when it is done
    /// knows that nothing changed while it ran, and empties them at once). `didSet` without
    /// `oldValue` keeps their in-place changes in place.
    private(set) var changeCount: UInt64 = 0
    /// The committed record of each object as the context first changed it (root contexts).
    var originals: [ObjectID: ObjectRecord] = [:]
    /// The identity map: one object instance per ID, so that a context that reads many objects
    /// keeps only (about) those its callers still hold.
    var registered = IdentityMap()
    /// How saves resolve conflicts.
    var mergePolicy: MergePolicy = .error
    /// Object keys reserved from the store for this context's new objects and not used yet
    /// (see ``nextKey(reserve:)``), and how many the next reservation takes.
    private var freeKeys: Range<UInt64> = 0..<0
    private var keyRun = 1
    /// Whether a save of the context is under way.
    var saving = false
    /// Uniqueness keys of objects with unsaved changes (inserted, or with a constrained attribute
    /// changed), so that a lookup by unique key need not scan every pending object.
    var pendingKeys: [UniqueKey: Set<ObjectID>] = [:]
    var keysOfObject: [ObjectID: [UniqueKey]] = [:]
    /// Inserted objects whose keys changed since they were last filed in ``pendingKeys``: filed
    /// again when a lookup needs them (a context that inserts many objects and saves never
    /// files them at all). A list, with repeats (an append costs less than a set's insert, and
    /// objects are marked at every change of a constrained attribute): ``markStale(_:)`` keeps
    /// it within twice the inserted objects.
    private(set) var staleKeys: [ObjectID] = []

    /// Notes that an inserted object's uniqueness keys changed.
    mutating func markStale(_ id: ObjectID) {
        staleKeys.append(id)
        if staleKeys.count > 2 * inserted.count + 64 {
            staleKeys = Set(staleKeys).filter(inserted.contains).sorted()
        }
    }

    /// Files the current uniqueness keys of the inserted objects whose keys are stale.
    mutating func refreshStaleKeys(_ model: Model) {
        guard !staleKeys.isEmpty else { return }
        for id in Set(staleKeys) {
            // An object no longer inserted had its keys filed by whatever changed that.
            guard let values = inserted[id] else { continue }
            setPendingKeys(model.uniqueKeys(entity: id.entity, values: values), for: id)
        }
        staleKeys = []
    }

    /// Forgets every filed key once nothing is pending (after a save of everything); false when
    /// something is.
    mutating func dropKeysIfNothingPending() -> Bool {
        guard inserted.isEmpty, updated.isEmpty, deleted.isEmpty else { return false }
        forgetKeys()
        return true
    }

    private mutating func forgetKeys() {
        pendingKeys = [:]
        keysOfObject = [:]
        staleKeys = []
    }

    /// Forgets every pending change and filed key (not the discarded objects).
    private mutating func forgetPendingChanges() {
        inserted = InsertedObjects()
        updated = [:]
        deleted = []
        originals = [:]
        forgetKeys()
    }

    /// Records the current uniqueness keys of an object with unsaved changes.
    mutating func setPendingKeys(_ keys: [UniqueKey], for id: ObjectID) {
        for key in keysOfObject[id] ?? [] {
            pendingKeys[key]?.remove(id)
            if pendingKeys[key]?.isEmpty == true { pendingKeys[key] = nil }
        }
        keysOfObject[id] = keys.isEmpty ? nil : keys
        for key in keys { pendingKeys[key, default: []].insert(id) }
    }

    /// A key for a new object. Keys are reserved from the store (`reserve`, under the store's
    /// lock) in runs that double up to 256, so that an import takes that lock once per 256
    /// objects rather than once per object, while a context that inserts a few objects
    /// reserves a few keys. What a context leaves of its run stays unused: object keys may
    /// have gaps (the object table's chunks then have empty slots).
    mutating func nextKey(reserve: (Int) throws -> Range<UInt64>) rethrows -> UInt64 {
        if freeKeys.isEmpty {
            freeKeys = try reserve(keyRun)
            keyRun = min(2 * keyRun, 256)
        }
        let key = freeKeys.lowerBound
        freeKeys = (key + 1)..<freeKeys.upperBound
        return key
    }

    /// Records a new object with all its values (`constrained`: its entity has uniqueness
    /// constraints, whose keys are worked out when a lookup asks); returns its slot in
    /// ``inserted``.
    mutating func insert(_ id: ObjectID, _ values: [PropertyValue], constrained: Bool) -> Int {
        let slot = inserted.nextSlot
        inserted.add(id, values)
        if constrained { markStale(id) }
        return slot
    }

    /// Sets a property of an object inserted in this context, in place (no copy of its
    /// values), through its slot in ``inserted`` when it is still there (`slot` < 0: look it
    /// up); false when the object is not one.
    mutating func setInserted(_ id: ObjectID, slot: Int, _ position: Int, _ value: PropertyValue, constrained: Bool) -> Bool {
        guard inserted.setValue(value, at: position, slot: slot, of: id) || inserted.setValue(value, at: position, of: id) else { return false }
        if constrained { markStale(id) }                    // its keys are worked out when asked for
        return true
    }

    var hasChanges: Bool { !inserted.isEmpty || !updated.isEmpty || !deleted.isEmpty }

    /// After a save of everything that was pending, when nothing changed since it began
    /// (``changeCount`` as it was then): forgets every pending change and key at once. False
    /// when something changed (the caller then removes what was saved one object at a time).
    mutating func clearSaved(changeCount taken: UInt64) -> Bool {
        guard changeCount == taken else { return false }
        // Objects inserted and deleted before the save stay discarded (they answer isDeleted).
        forgetPendingChanges()
        return true
    }

    /// The pending changes, taken out of the state (put back with ``restore(_:)`` on failure).
    mutating func takeChanges() -> PendingChanges {
        defer {
            forgetPendingChanges()
            discarded = []
        }
        return PendingChanges(inserted: inserted, updated: updated, deleted: deleted, originals: originals)
    }

    /// A copy of the pending changes; they stay in the context (and visible) while it saves.
    var pendingChanges: PendingChanges {
        PendingChanges(inserted: inserted, updated: updated, deleted: deleted, originals: originals)
    }

    /// After `saved` was saved: drops what was saved, and keeps what changed since, now as
    /// changes to the saved state. `committed` gives an object's record as saved (root contexts),
    /// the base for later conflict checks.
    mutating func removeSaved(_ saved: PendingChanges, committed: (ObjectID) -> ObjectRecord?) {
        func rebase(_ id: ObjectID) { originals[id] = committed(id) }
        for (id, values) in saved.inserted {
            if discarded.remove(id) != nil {            // deleted during the save: now delete it for real
                deleted.insert(id)
                rebase(id)
                continue
            }
            guard let current = inserted.removeValue(forKey: id) else { continue }
            // Unchanged since the save took them (the same storage): nothing to keep.
            if Self.sameStorage(current, values) { continue }
            let since = Dictionary(uniqueKeysWithValues: current.indices.filter { current[$0] != values[$0] }.map { ($0, current[$0]) })
            if !since.isEmpty {
                updated[id] = since
                rebase(id)
            }
        }
        for (id, properties) in saved.updated where saved.inserted[id] == nil {
            guard var current = updated[id] else { continue }
            for (position, value) in properties where current[position] == value { current[position] = nil }
            updated[id] = current.isEmpty ? nil : current
            if current.isEmpty && !deleted.contains(id) { originals[id] = nil } else { rebase(id) }
        }
        for id in saved.deleted {
            deleted.remove(id)
            if updated[id] == nil { originals[id] = nil }
        }
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
    var updated: [ObjectID: [Int: PropertyValue]]
    var deleted: Set<ObjectID>
    var originals: [ObjectID: ObjectRecord]

    var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }
}
