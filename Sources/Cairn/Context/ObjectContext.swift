import CairnLog
import CairnSupport

/// A scratch pad of objects over a store, as Core Data's managed object context.
///
/// - The store's ``Store/viewContext`` reads the latest committed state and follows every save.
/// - A background context (``Store/newBackgroundContext(name:)``) reads the snapshot of the
///   moment it was made, plus its own changes, until it saves or ``refresh()`` is called.
/// - A child context (``newChildContext(name:)``) reads through to its parent, unsaved changes
///   included; its ``save()`` pushes its changes into the parent without touching the disk.
///
/// Concurrency: a context is `Sendable` and each call is atomic, but a context is a unit of work:
/// use it from one task at a time, or wrap each task's work in ``perform(_:)`` (Core Data's
/// `perform`), and give concurrent work contexts of their own. The store and different contexts
/// may be used from any task at once.
///
/// An object lives as long as its context: to carry results out of a background context, pass
/// their IDs and read them in the destination context:
///
/// ```swift
/// let ids = try await store.performBackgroundTask { context in
///     let imported = try importPeople(into: context)
///     try await context.save()
///     return imported.map(\.objectID)
/// }
/// let people = try store.viewContext.objects(with: ids)
/// ```
public final class ObjectContext: Sendable, CustomStringConvertible {
    /// The store the context reads and saves to.
    public let store: Store
    /// The context a child context saves into; nil for a root context.
    public let parent: ObjectContext?
    /// A name for messages and debugging.
    public let name: String
    /// Whether the context reads the store's latest state (the view context).
    let followsStore: Bool
    let state: Protected<ContextState>
    /// Counts the changes to what this context reads (see ``ViewVersion``).
    package let viewVersion: ViewVersion
    /// Orders the blocks of ``perform(_:)``.
    private let queue = ContextQueue()

    init(store: Store, parent: ObjectContext?, name: String, followsStore: Bool) {
        self.store = store
        self.parent = parent
        self.name = name
        self.followsStore = followsStore
        model = store.model
        viewVersion = ViewVersion(next: parent?.viewVersion ?? store.viewVersion)
        var initial = ContextState()
        initial.viewVersion = viewVersion
        if parent == nil && !followsStore { initial.snapshot = store.snapshot }
        self.state = Protected(initial)
    }

    /// Its objects hold the state (to change their values without a weak reference to the
    /// context); a context that goes lets go of everything the state held, so that objects
    /// still held elsewhere keep nothing alive and answer that their context is gone.
    deinit {
        var left = ContextState()
        state.withLock { swap(&$0, &left) }
        // Objects still held read that their context is gone.
        viewVersion.bump()
        Reclaimer.release(left, parts: left.registered.count + left.inserted.count)
    }

    /// The context's name, as `ObjectContext(import)`.
    public var description: String { "ObjectContext(\(name))" }

    /// The model of the store (kept here, so that reading it is not a copy of the store's).
    public let model: Model

    /// How saves resolve conflicts. Default ``MergePolicy/error``.
    public var mergePolicy: MergePolicy {
        get { state.withLock { $0.mergePolicy } }
        set { state.withLock { $0.mergePolicy = newValue } }
    }

    /// The author its saves record (Core Data's `transactionAuthor`): in every
    /// ``SaveNotification`` and in the save's change record. Nil (the default): none. A child
    /// context's changes are saved by its root, under the root's author.
    public var transactionAuthor: String? {
        get { state.withLock { $0.transactionAuthor } }
        set { state.withLock { $0.transactionAuthor = newValue } }
    }

    /// A child context: it sees this context's unsaved changes; its saves go into this context.
    public func newChildContext(name: String = "child") -> ObjectContext {
        ObjectContext(store: store, parent: self, name: name, followsStore: false)
    }

    /// Whether the context has unsaved changes.
    public var hasChanges: Bool { state.withLock { $0.hasChanges } }

    /// The objects inserted since the last save.
    public var insertedObjects: Set<ManagedObject> { objects(state.withLock { Set($0.inserted.keys) }) }
    /// The objects changed since the last save (not those inserted or deleted).
    public var updatedObjects: Set<ManagedObject> {
        objects(state.withLock { state in Set(state.updated.keys).subtracting(state.deleted).subtracting(state.inserted.keys) })
    }
    /// The objects deleted since the last save.
    public var deletedObjects: Set<ManagedObject> { objects(state.withLock { $0.deleted }) }

    private func objects(_ ids: Set<ObjectID>) -> Set<ManagedObject> { Set(ids.map(registeredObject)) }

    // MARK: Reading

    /// The snapshot a root context reads.
    var rootSnapshot: StoreSnapshot { state.withLock { $0.snapshot } ?? store.snapshot }

    /// The committed record an object had in this root context's snapshot.
    func baseRecord(_ id: ObjectID) -> ObjectRecord? {
        parent?.baseRecord(id) ?? rootSnapshot.record(id)
    }

    /// The values of an object as this context sees them; nil when it does not exist here.
    func values(of id: ObjectID) -> [PropertyValue]? {
        view(of: id)?.allValues
    }

    /// An object's values as this context sees them, decoded only as they are read; nil when it
    /// does not exist here.
    func view(of id: ObjectID) -> ObjectView? {
        view(of: id, in: nil)
    }

    /// Like ``view(of:)``, reading committed values from `snapshot` (one snapshot for a whole
    /// fetch, so that it never mixes two saves) instead of the root's current one.
    func view(of id: ObjectID, in snapshot: StoreSnapshot?) -> ObjectView? {
        enum Local { case gone, new([PropertyValue]), changed(PropertyChanges?) }
        let local = state.withLock { state -> Local in
            if state.deleted.contains(id) || state.discarded.contains(id) { return .gone }
            if let values = state.inserted[id] { return .new(values) }
            return .changed(state.updated[id]?.values)
        }
        switch local {
        case .gone: return nil
        case .new(let values): return ObjectView(base: .values(values), changes: nil)
        case .changed(let changes):
            let base: ObjectView?
            if let parent {
                base = parent.view(of: id, in: snapshot)
            } else {
                base = (snapshot ?? rootSnapshot).record(id).map { ObjectView(base: .row($0.row), changes: nil) }
            }
            guard var view = base else { return nil }
            if let changes, !changes.isEmpty { view.apply(changes) }
            return view
        }
    }

    /// `state.withLock(body)` for a body that may sweep the identity map: the typed objects the
    /// sweep let go of are freed after the lock (a typed object's `deinit` may read a property,
    /// which takes the lock), on this thread (they are not `Sendable`).
    func withStateSweeping<R>(_ body: (inout ContextState) throws -> R) rethrows -> R {
        var swept: [AnyObject] = []
        let result = try state.withLock { state in
            defer { swept = state.registered.takeSwept() }
            return try body(&state)
        }
        swept.removeAll()  // the deinits run here
        return result
    }

    /// The one object instance of an ID in this context.
    func registeredObject(_ id: ObjectID) -> ManagedObject {
        withStateSweeping { register(id, in: &$0) }
    }

    /// The object instances of these IDs, in order (one lock for all of them).
    func registeredObjects<IDs: Collection<ObjectID>>(_ ids: IDs) -> [ManagedObject] {
        let descriptions = store.model.descriptions
        return withStateSweeping { state in
            state.registered.prepare(forAdding: ids.count)
            return ids.map { register($0, in: &state, descriptions) }
        }
    }

    func register(_ id: ObjectID, in state: inout ContextState, _ descriptions: [EntityDescription]? = nil) -> ManagedObject {
        state.registered.object(id) { ManagedObject(id: id, entity: (descriptions ?? store.model.descriptions)[id.entity], context: self) }
    }

    /// The object with this ID, if it exists in this context.
    public func object(with id: ObjectID) -> ManagedObject? {
        guard id.entity >= 0, id.entity < model.descriptions.count, view(of: id) != nil else { return nil }
        return registeredObject(id)
    }

    /// The objects with these IDs, in order, as this context sees them: how results of a
    /// background context reach the view context.
    ///
    /// - Throws: ``StoreError/Code/invalidObject`` naming the IDs that do not exist here
    ///   (deleted, never saved, or of another store's model).
    public func objects<IDs: Sequence<ObjectID>>(with ids: IDs) throws -> [ManagedObject] {
        let ids = Array(ids)
        let missing = ids.filter { object(with: $0) == nil }
        guard missing.isEmpty else {
            let shown = missing.prefix(5).map(\.description).joined(separator: ", ")
            throw StoreError(
                .invalidObject, "\(missing.count) of the objects do not exist in \(name): \(shown)\(missing.count > 5 ? ", …" : "")",
                objects: Array(missing.prefix(100)))
        }
        return registeredObjects(ids)
    }

    /// Runs `body` once the blocks given to this context before it have finished, one at a time
    /// (Core Data's `perform`): for tasks that share one context. A `perform` inside a block of
    /// the same context, on the same task, runs at once; one on another task waits for the block
    /// to end, so a block must not wait for a child task (`async let`, a task group) that calls
    /// `perform` on the same context.
    ///
    /// ```swift
    /// try await context.perform {
    ///     let counter = try context.fetchFirst(FetchRequest("Counter"))
    ///     try counter?.setValue((try counter?.value(forKey: "value", as: Int.self) ?? 0) + 1, forKey: "value")
    ///     try await context.save()
    /// }
    /// ```
    public func perform<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
        try await queue.run(body)
    }

    /// Whether the object was inserted, or deleted, in this context since its last save.
    func isInserted(_ id: ObjectID) -> Bool { state.withLock { $0.inserted[id] != nil } }
    func isDeleted(_ id: ObjectID) -> Bool { state.withLock { $0.deleted.contains(id) || $0.discarded.contains(id) } }
    func isUpdated(_ id: ObjectID) -> Bool { state.withLock { $0.updated[id] != nil && !$0.deleted.contains(id) } }
    func changes(of id: ObjectID) -> [Int: PropertyValue] {
        state.withLock {
            $0.inserted[id].map { Dictionary(uniqueKeysWithValues: $0.enumerated().map { ($0, $1) }) } ?? $0.updated[id]?.values.dictionary ?? [:]
        }
    }

    // MARK: Changing

    /// Inserts a new object of an entity, with the attributes' default values.
    ///
    /// - Throws: ``StoreError`` for an unknown or abstract entity.
    @discardableResult
    public func insert(_ entityName: String) throws -> ManagedObject {
        let entity = try model.require(entityName)
        guard !entity.isAbstract else {
            throw StoreError(.abstractEntity, "\(entity.name) is abstract; insert one of its sub-entities", entity: entity.name)
        }
        return try withStateSweeping { state in
            let id = ObjectID(entity: entity.index, key: try state.newKeys.next(reserve: store.reserveKeys))
            let slot = state.insert(id, entity.newObjectValues, constrained: !entity.uniqueness.isEmpty)
            let object = ManagedObject(id: id, entity: entity, context: self, slot: slot)
            state.registered.add(object)
            return object
        }
    }

    /// Sets one property's raw value, recording the change (no inverse maintenance).
    func setRaw(_ id: ObjectID, _ position: Int, _ value: PropertyValue) throws {
        // The common case first: a new object only changes its own values.
        let description = model.descriptions[id.entity]
        let constrained = description.isConstrained[position], validated = description.isValidated[position]
        if parent == nil {
            // A root context: the state's lock once (the snapshot read under it), and one lookup
            // of the committed record (the object's original the first time it changes here,
            // and whether it exists).
            let updated = try state.withLock { state -> Bool in
                if state.setInserted(id, slot: -1, position, value, constrained: constrained) { return false }
                guard !state.deleted.contains(id), !state.discarded.contains(id), let committed = (state.snapshot ?? store.snapshot).record(id) else {
                    throw StoreError(.invalidObject, "object \(id) was deleted or does not exist in \(name)", objects: [id])
                }
                state.update(id, position, value, validated: validated, original: committed)
                return true
            }
            if updated && constrained { refreshPendingKeys(of: [id]) }
            return
        }
        // A child context: the object exists if its parent chain has it (a child keeps no
        // original records: its parent checks conflicts when it saves).
        if state.withLock({ $0.setInserted(id, slot: -1, position, value, constrained: constrained) }) { return }
        defer { if constrained { refreshPendingKeys(of: [id]) } }
        let exists = view(of: id) != nil
        try state.withLock { state in
            if state.inserted.setValue(value, at: position, of: id) { return }
            guard exists else {
                throw StoreError(.invalidObject, "object \(id) was deleted or does not exist in \(name)", objects: [id])
            }
            state.update(id, position, value, validated: validated, original: nil)
        }
    }

    /// Recomputes the pending uniqueness keys of objects from their current values.
    func refreshPendingKeys(of ids: some Sequence<ObjectID>) {
        let keys = ids.map { id in (id, values(of: id).map { model.uniqueKeys(entity: id.entity, values: $0) } ?? []) }
        state.withLock { state in
            for (id, objectKeys) in keys { state.keys.set(objectKeys, for: id) }
        }
    }

    /// The objects with unsaved changes that have this uniqueness key, here and in ancestors.
    func pendingHolders(of key: UniqueKey) -> Set<ObjectID> {
        var ids = parent?.pendingHolders(of: key) ?? []
        state.withLock { state in
            state.keys.refresh(model, inserted: state.inserted)
            if let holders = state.keys.holders[key] { ids.formUnion(holders) }
        }
        return ids
    }

    /// Sets a relationship to `targets`, keeping the inverse relationship in step.
    package func setRelationship(_ id: ObjectID, _ relationshipIndex: Int, to targets: [ObjectID]) throws {
        let entity = model.descriptions[id.entity]
        let relationship = entity.relationships[relationshipIndex]
        let position = entity.attributes.count + relationshipIndex
        guard let current = values(of: id) else {
            throw StoreError(.invalidObject, "object \(id) was deleted or does not exist in \(name)", objects: [id])
        }
        let destination = model.descriptions[entity.destinations[relationshipIndex]]
        var unique: [ObjectID] = []
        var seen = Set<ObjectID>(minimumCapacity: targets.count)
        for target in targets where seen.insert(target).inserted {
            guard target.entity == destination.index || destination.descendants.contains(target.entity) else {
                throw StoreError(
                    .typeMismatch, "\(entity.name).\(relationship.name) takes \(destination.name) objects, not \(model.descriptions[target.entity].name)",
                    entity: entity.name, property: relationship.name, objects: [target])
            }
            guard view(of: target) != nil else {
                throw StoreError(
                    .invalidObject, "object \(target) was deleted or does not exist in \(name)",
                    entity: entity.name, property: relationship.name, objects: [target])
            }
            unique.append(target)
        }
        guard relationship.isToMany || unique.count <= 1 else {
            throw StoreError(.typeMismatch, "\(entity.name).\(relationship.name) is to-one", entity: entity.name, property: relationship.name)
        }
        let old = current[position].targets
        let value: PropertyValue = relationship.isToMany ? .toMany(relationship.isOrdered ? unique : unique.sorted()) : .toOne(unique.first)
        try setRaw(id, position, value)
        guard let inverseIndex = entity.inverses[relationshipIndex] else { return }
        for target in old where !unique.contains(target) { try unlink(target, inverseIndex, from: id) }
        for target in unique where !old.contains(target) { try link(target, inverseIndex, to: id) }
    }

    /// Adds `object` to `target`'s relationship at `relationshipIndex` (an inverse), taking
    /// `target` away from a previous holder of a to-one inverse.
    private func link(_ target: ObjectID, _ relationshipIndex: Int, to object: ObjectID) throws {
        let entity = model.descriptions[target.entity]
        let position = entity.attributes.count + relationshipIndex
        guard let values = values(of: target) else { return }
        switch values[position] {
        case .toMany(var ids):
            if entity.relationships[relationshipIndex].isOrdered {
                guard !ids.contains(object) else { return }
                ids.append(object)
            } else {
                // Kept sorted by one binary search instead of a scan and a sort (the list is
                // still copied once a link: many links to one object cost that copy each).
                var low = 0
                var high = ids.count
                while low < high {
                    let middle = (low + high) / 2
                    if ids[middle] < object { low = middle + 1 } else { high = middle }
                }
                guard low == ids.count || ids[low] != object else { return }
                ids.insert(object, at: low)
            }
            try setRaw(target, position, .toMany(ids))
        case .toOne(let previous):
            guard previous != object else { return }
            if let previous, let back = entity.inverses[relationshipIndex] {
                try unlink(previous, back, from: target)
            }
            try setRaw(target, position, .toOne(object))
        case .attribute:
            return
        }
    }

    /// Removes `object` from `target`'s relationship at `relationshipIndex` (an inverse).
    private func unlink(_ target: ObjectID, _ relationshipIndex: Int, from object: ObjectID) throws {
        let entity = model.descriptions[target.entity]
        let position = entity.attributes.count + relationshipIndex
        guard let values = values(of: target) else { return }
        switch values[position] {
        case .toMany(let ids) where ids.contains(object): try setRaw(target, position, .toMany(ids.filter { $0 != object }))
        case .toOne(object): try setRaw(target, position, .toOne(nil))
        default: return
        }
    }

    /// Deletes an object, applying its relationships' delete rules (nullify, cascade; deny is
    /// checked when saving).
    public func delete(_ object: ManagedObject) throws {
        try checkOwnership(object)
        try delete(object.objectID)
    }

    func delete(_ first: ObjectID) throws {
        // A list of objects still to delete rather than recursion: a cascade may run along a
        // chain of any length (each object already gone is skipped, so cycles end).
        var pending = [first]
        while let id = pending.popLast() {
            guard let values = values(of: id) else { continue }
            let entity = model.descriptions[id.entity]
            let original = parent == nil ? baseRecord(id) : nil
            state.withLock { state in
                if state.inserted.removeValue(forKey: id) != nil {
                    state.discarded.insert(id)
                } else {
                    state.deleteExisting(id, original: original)
                }
            }
            for (index, relationship) in entity.relationships.enumerated() {
                let targets = values[entity.attributes.count + index].targets
                guard !targets.isEmpty else { continue }
                switch relationship.deleteRule {
                case .nullify:
                    if let inverse = entity.inverses[index] { for target in targets { try unlink(target, inverse, from: id) } }
                case .cascade:
                    if let inverse = entity.inverses[index] { for target in targets { try unlink(target, inverse, from: id) } }
                    pending.append(contentsOf: targets.reversed())
                case .deny, .noAction:
                    continue
                }
            }
        }
    }

    /// Throws unless `object` belongs to this context.
    func checkOwnership(_ object: ManagedObject) throws {
        guard object.context === self else {
            throw StoreError(.invalidObject, "object \(object.objectID) belongs to another context", objects: [object.objectID])
        }
    }

    /// Discards every unsaved change.
    public func rollback() {
        state.withLock { state in _ = state.takeChanges() }
    }

    /// Discards unsaved changes and forgets every object handed out, and moves a root context
    /// to the store's latest state.
    public func reset() {
        withStateSweeping { state in
            _ = state.takeChanges()
            state.registered.removeAll()
            if state.snapshot != nil { state.snapshot = store.snapshot }
        }
    }

    /// Moves a root background context to the store's latest state, keeping unsaved changes,
    /// and lets go of the objects nobody holds any more when many were registered since the
    /// identity map last did.
    public func refresh() {
        withStateSweeping { state in
            if state.snapshot != nil { state.snapshot = store.snapshot }
            state.registered.sweepIfDue()
        }
    }

    /// Lets go at once of the objects this context handed out that nobody holds any more (the
    /// context otherwise does so as it registers more objects, and at saves). Objects still held
    /// keep their instance. A pass over every object the context holds.
    public func releaseUnusedObjects() {
        // The managed objects of the typed objects a pass lets go of are free after it: passes
        // until one lets go of no typed object (each lets go of one at least, so they end).
        var sweptTyped = true
        while sweptTyped {
            withStateSweeping { state in
                state.registered.sweep()
                sweptTyped = state.registered.hasSwept
            }
        }
    }
}
