/// The uniqueness keys of a context's objects with unsaved changes, so that a lookup by unique
/// key need not scan every pending object.
///
/// Inserted objects are filed lazily: a change to a constrained attribute only marks the object
/// stale (``markStale(_:insertedCount:)``), and its keys are worked out when a lookup needs them
/// (``refresh(_:inserted:)``), so a context that inserts many objects and saves never files
/// them at all.
struct PendingKeys {
    /// The objects holding each key.
    private(set) var holders: [UniqueKey: Set<ObjectID>] = [:]
    /// The keys filed for each object.
    private var keysOfObject: [ObjectID: [UniqueKey]] = [:]
    /// Inserted objects whose keys changed since they were last filed. A list, with repeats (an
    /// append costs less than a set's insert, and objects are marked at every change of a
    /// constrained attribute), kept within twice the inserted objects.
    private(set) var stale: [ObjectID] = []

    /// Notes that an inserted object's keys changed (`inserted`: the context's inserted objects,
    /// which bound the list).
    mutating func markStale(_ id: ObjectID, among inserted: InsertedObjects) {
        stale.append(id)
        if stale.count > 2 * inserted.count + 64 {
            stale = Set(stale).filter(inserted.contains).sorted()
        }
    }

    /// Files the current keys of the stale objects still inserted.
    mutating func refresh(_ model: Model, inserted: InsertedObjects) {
        guard !stale.isEmpty else { return }
        for id in Set(stale) {
            // An object no longer inserted had its keys filed by whatever changed that.
            guard let values = inserted[id] else { continue }
            set(model.uniqueKeys(entity: id.entity, values: values), for: id)
        }
        stale = []
    }

    /// Files an object's current keys in place of those filed before (none: forgets it).
    mutating func set(_ keys: [UniqueKey], for id: ObjectID) {
        for key in keysOfObject[id] ?? [] {
            holders[key]?.remove(id)
            if holders[key]?.isEmpty == true { holders[key] = nil }
        }
        keysOfObject[id] = keys.isEmpty ? nil : keys
        for key in keys { holders[key, default: []].insert(id) }
    }

    /// Forgets every key.
    mutating func removeAll() { self = PendingKeys() }
}

/// Object keys a context reserved from the store for its new objects and has not used yet.
///
/// Keys are reserved (under the store's lock) in runs that double up to 256, so that an import
/// takes that lock once per 256 objects rather than once per object, while a context that
/// inserts a few objects reserves a few keys. What a context leaves of its run stays unused:
/// object keys may have gaps (the object table's chunks then have empty slots).
struct KeyReservation {
    private var free: Range<UInt64> = 0..<0
    private var run = 1

    /// A key for a new object, reserving a run with `reserve` when none is left.
    mutating func next(reserve: (Int) throws -> Range<UInt64>) rethrows -> UInt64 {
        if free.isEmpty {
            free = try reserve(run)
            run = min(2 * run, 256)
        }
        let key = free.lowerBound
        free = (key + 1)..<free.upperBound
        return key
    }
}
