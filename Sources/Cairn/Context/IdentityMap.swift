import CairnSupport

/// A context's identity map: one ``ManagedObject`` instance per object ID while anyone holds it.
///
/// The map holds its objects strongly and lets go, in a sweep, of those nobody else holds (the
/// map's reference is then the only one: `isKnownUniquelyReferenced`). A sweep runs when the map
/// has grown to twice what the last one left (and to at least ``Tuning/identityMapMinimumSweep``); at the end of
/// a save of the context and at `refresh()` when an eighth of the map was registered since the
/// last sweep (``sweepIfDue()``); and on `releaseUnusedObjects()`. Registering an
/// object costs O(1) amortized; between sweeps the map may hold objects its callers have
/// dropped — up to twice as many as were held at the last sweep, plus a few thousand. A weak
/// reference per object would let an object go as soon as it is released, but costs a side
/// table and a lock at each release, a large part of a fetch of objects through an index.
/// A sweep takes the context's lock for a pass over the map.
///
/// Nothing outside the map can make a strong reference to an object the map alone holds, except
/// by promoting a weak or unowned reference of its own: an object kept only that way may be
/// swept, and a later fetch of its ID then gives a new instance.
///
/// Used under the context's lock.
struct IdentityMap {
    /// One ID's registration: its managed object, and its typed object (CairnModels' `@Managed`
    /// class instance) when it has one. A typed object holds its ``ManagedObject``. (One entry
    /// for both: a typed fetch or insert files each object once.)
    struct Entry {
        var object: ManagedObject
        var typed: AnyObject?
    }

    /// The objects by ID. Internal, not private, only so that the tests can damage it and see
    /// ``checkInvariants()`` fail.
    var objects: [ObjectID: Entry] = [:]
    /// The typed objects a sweep (or ``removeAll()``) let go of, set aside for the context to
    /// free once it no longer holds its lock (``takeSwept()``): a typed object's `deinit` may
    /// read a property, which takes that lock. Their managed objects go at the sweep after.
    private var swept: [AnyObject] = []
    /// The count at which the next registration sweeps first.
    private var sweepAt = Tuning.identityMapMinimumSweep
    /// Objects registered since the last sweep.
    private var registeredSinceSweep = 0
    /// The managed objects the last sweep kept only because their typed objects, set aside,
    /// still held them: they go at the next sweep, and count for no one's next sweep size.
    private var keptForSweptTyped = 0

    /// The objects registered, held by callers or not yet swept.
    var count: Int { objects.count }

    /// The object registered for `id`, or the one `make` makes (registered from now on).
    mutating func object(_ id: ObjectID, orMake make: () -> ManagedObject) -> ManagedObject {
        if let entry = objects[id] { return entry.object }
        let object = make()
        add(object)
        return object
    }

    /// The object registered for `id` (or the one `make` makes, registered from now on) and its
    /// typed object: the one registered, or the one `makeTyped` makes for it (registered from now
    /// on when not nil).
    mutating func typedObject(
        _ id: ObjectID, orMake make: () -> ManagedObject, typed makeTyped: (ManagedObject) -> AnyObject?
    ) -> (object: ManagedObject, typed: AnyObject?) {
        if let index = objects.index(forKey: id) {
            let entry = objects.values[index]
            if let typed = entry.typed { return (entry.object, typed) }
            let typed = makeTyped(entry.object)
            if let typed { objects.values[index].typed = typed }
            return (entry.object, typed)
        }
        let object = make()
        let typed = makeTyped(object)
        add(object, typed: typed)
        return (object, typed)
    }

    /// The typed object registered for `id`, if any.
    func typedObject(_ id: ObjectID) -> AnyObject? { objects[id]?.typed }

    /// Prepares to register up to `more` objects at once (a fetch's): sweeps first when they
    /// would reach the next sweep, puts the next one beyond them (their caller holds them until
    /// it is done: a sweep among them would keep them all), and makes room for them, so that the
    /// dictionary grows once.
    mutating func prepare(forAdding more: Int) {
        guard more > 1 else { return }
        if objects.count + more >= sweepAt {
            sweep()
            // Twice what is held now, these included.
            sweepAt = max(sweepAt, 2 * (objects.count - min(objects.count, keptForSweptTyped) + more))
        }
        // No sweep among these. (Only past them: raising it to twice the map here, objects
        // nobody holds included, would put every later sweep out of reach of a loop of fetches.)
        sweepAt = max(sweepAt, objects.count + more + 1)
        objects.reserveCapacity(objects.count + more)
    }

    /// Registers the object of an ID that has none yet (a new object's: no lookup first), with
    /// its typed object if it has one.
    mutating func add(_ object: ManagedObject, typed: AnyObject? = nil) {
        if objects.count >= sweepAt { sweep() }
        objects[object.objectID] = Entry(object: object, typed: typed)
        registeredSinceSweep += 1
        checkAfterMutation { () throws(InvariantViolation) in
            if objects.count <= Tuning.wholeCheckLimit { return try checkInvariants() }
            try require(objects[object.objectID]?.object === object, "IdentityMap", "object \(object.objectID) is not filed under its ID")
        }
    }

    /// Sweeps when the objects registered since the last sweep number at least an eighth of the
    /// map, so that a context holding many objects does not pass over all of them at every
    /// save, while one that registered many and dropped them lets them go at its next save.
    mutating func sweepIfDue() {
        if registeredSinceSweep * 8 >= objects.count { sweep() }
    }

    /// Lets go of every object nobody else holds, and sets the size of the next sweep.
    mutating func sweep() {
        // Each object is checked where it is stored (`values[index]`, accessed in place: a copy
        // would not be the only reference); those still held elsewhere go into a new
        // dictionary, and the old one is dropped whole, freeing the rest. (Removing objects one
        // at a time moves and rehashes their neighbours at each removal: most of a sweep's time.
        // A new dictionary also shrinks with the map.)
        // (Managed objects let go of here are freed here: freeing them on another thread while
        // this one fetches more made both wait on the allocator, and fetches ran slower.)
        let sweptBefore = swept.count
        // (Room for what a steady loop of registrations keeps, so that the new map does not grow
        // by doubling all the way up again; a larger one grows to what it keeps.)
        var kept: [ObjectID: Entry] = [:]
        kept.reserveCapacity(min(objects.count, Tuning.identityMapMinimumSweep))
        var index = objects.startIndex
        while index != objects.endIndex {
            // A typed object nobody else holds goes (set aside, to be freed outside the lock); its
            // managed object, held by it until then, at the next sweep.
            // (Each reference is checked before it is copied out: a copy is a second reference.)
            if objects.values[index].typed != nil, isKnownUniquelyReferenced(&objects.values[index].typed) {
                let entry = objects.values[index]
                if let typed = entry.typed { swept.append(typed) }
                kept[entry.object.objectID] = Entry(object: entry.object, typed: nil)
            } else if !isKnownUniquelyReferenced(&objects.values[index].object) {
                let entry = objects.values[index]
                kept[entry.object.objectID] = entry
            }
            objects.formIndex(after: &index)
        }
        objects = kept
        // (The managed objects of the typed objects just swept go once those are freed.)
        keptForSweptTyped = min(objects.count, swept.count - sweptBefore)
        sweepAt = max(Tuning.identityMapMinimumSweep, 2 * (objects.count - keptForSweptTyped))
        registeredSinceSweep = 0
        checkAfterMutation { () throws(InvariantViolation) in try checkInvariants() }
    }

    /// Whether a sweep let go of typed objects not yet taken.
    var hasSwept: Bool { !swept.isEmpty }

    /// The typed objects sweeps let go of since the last call, for the caller to free outside
    /// the context's lock.
    mutating func takeSwept() -> [AnyObject] {
        guard !swept.isEmpty else { return [] }
        defer { swept = [] }
        return swept
    }

    /// Forgets every object; the typed objects join those a sweep let go of (``takeSwept()``),
    /// to be freed outside the context's lock.
    mutating func removeAll() {
        swept.append(contentsOf: objects.values.lazy.compactMap(\.typed))
        objects = [:]
        sweepAt = Tuning.identityMapMinimumSweep
        registeredSinceSweep = 0
        keptForSweptTyped = 0
    }

    /// Checks the map's rules: each object is filed under its own ID, once; the next sweep is
    /// due no sooner than ``Tuning/identityMapMinimumSweep``.
    func checkInvariants() throws(InvariantViolation) {
        try require(sweepAt >= Tuning.identityMapMinimumSweep, "IdentityMap", "the next sweep is due at \(sweepAt) objects")
        for (id, entry) in objects {
            try require(entry.object.objectID == id, "IdentityMap", "object \(entry.object.objectID) is filed under \(id)")
        }
    }
}
