import CairnLog

/// What a context holds: its snapshot, its pending changes, and the objects it handed out.
struct ContextState {
    /// The snapshot a root context reads (nil: follow the store's latest, or read the parent).
    var snapshot: StoreSnapshot?
    /// New objects with all their values.
    var inserted: [ObjectID: [PropertyValue]] = [:]
    /// Changed properties of existing objects, by position.
    var updated: [ObjectID: [Int: PropertyValue]] = [:]
    /// Existing objects deleted.
    var deleted: Set<ObjectID> = []
    /// Objects inserted, then deleted before a save (they answer `isDeleted`).
    var discarded: Set<ObjectID> = []
    /// The committed record of each object as the context first changed it (root contexts).
    var originals: [ObjectID: ObjectRecord] = [:]
    /// The identity map: one object instance per ID.
    var registered: [ObjectID: ManagedObject] = [:]
    /// How saves resolve conflicts.
    var mergePolicy: MergePolicy = .error
    /// Uniqueness keys of objects with unsaved changes (inserted, or with a constrained attribute
    /// changed), so that a lookup by unique key need not scan every pending object.
    var pendingKeys: [UniqueKey: Set<ObjectID>] = [:]
    var keysOfObject: [ObjectID: [UniqueKey]] = [:]

    /// Records the current uniqueness keys of an object with unsaved changes.
    mutating func setPendingKeys(_ keys: [UniqueKey], for id: ObjectID) {
        for key in keysOfObject[id] ?? [] {
            pendingKeys[key]?.remove(id)
            if pendingKeys[key]?.isEmpty == true { pendingKeys[key] = nil }
        }
        keysOfObject[id] = keys.isEmpty ? nil : keys
        for key in keys { pendingKeys[key, default: []].insert(id) }
    }

    var hasChanges: Bool { !inserted.isEmpty || !updated.isEmpty || !deleted.isEmpty }

    /// The pending changes, taken out of the state (put back with ``restore(_:)`` on failure).
    mutating func takeChanges() -> PendingChanges {
        defer {
            inserted = [:]
            updated = [:]
            deleted = []
            discarded = []
            originals = [:]
            pendingKeys = [:]
            keysOfObject = [:]
        }
        return PendingChanges(inserted: inserted, updated: updated, deleted: deleted, originals: originals)
    }

    /// Puts back changes taken for a save that failed, under any made since.
    mutating func restore(_ changes: PendingChanges) {
        inserted.merge(changes.inserted) { newer, _ in newer }
        for (id, properties) in changes.updated {
            updated[id] = properties.merging(updated[id] ?? [:]) { _, newer in newer }
        }
        deleted.formUnion(changes.deleted)
        originals.merge(changes.originals) { newer, _ in newer }
    }
}

/// A context's pending changes, as a save takes them.
struct PendingChanges: Sendable {
    var inserted: [ObjectID: [PropertyValue]]
    var updated: [ObjectID: [Int: PropertyValue]]
    var deleted: Set<ObjectID>
    var originals: [ObjectID: ObjectRecord]

    var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }
}
