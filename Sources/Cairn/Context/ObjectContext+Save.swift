import CairnLog
import CairnSupport

extension ObjectContext {
    /// Saves the context's changes.
    ///
    /// A root context's save validates (required values, relationship counts, `deny` delete
    /// rules, uniqueness), resolves conflicts with saves made since its snapshot by its
    /// ``mergePolicy``, appends one change record to the log, waits for the store's durability
    /// mode, publishes the new state (the view context sees it before `save` returns) and
    /// notifies the store's observers. A child context's save moves its changes into its parent
    /// without touching the disk. A save with no changes does nothing.
    ///
    /// - Throws: ``StoreError`` (``StoreError/Code/missingValue``,
    ///   ``StoreError/Code/uniquenessViolation``, ``StoreError/Code/mergeConflict``, …) or a
    ///   `LogError`; the changes then stay in the context.
    public func save() async throws {
        let (changes, policy, author, changeCount) = try state.withLock { state -> (PendingChanges, MergePolicy, String?, UInt64) in
            guard !state.saving else {
                throw StoreError(.invalidObject, "a save of \(name) is already in progress; use a context from one task at a time")
            }
            if let error = state.deferredError { throw error }
            let changes = state.pendingChanges
            state.saving = !changes.isEmpty
            return (changes, state.mergePolicy, state.transactionAuthor, state.changeCount)
        }
        guard !changes.isEmpty else { return }
        var ended = false
        defer { if !ended { state.withLock { $0.saving = false } } }  // a save that threw
        // The changes stay visible in this context (and its children) until the save is done.
        try validate(changes)
        // When nothing changed while the save ran, everything pending was saved: forget it at
        // once. Otherwise what was saved goes object by object, and what changed since stays.
        var latest: StoreSnapshot?
        let committed: (ObjectID) -> ObjectRecord?
        if let parent {
            parent.absorb(changes)
            committed = { _ in nil }
        } else {
            // Changes kept for the next save are rebased on the state this save produced, not on
            // a later save's: their conflict checks must still see that later save.
            let saved = try await store.commit(changes, policy: policy, author: author, contextName: name)
            let published = store.snapshot
            latest = published
            committed = { (saved ?? published).record($0) }
        }
        // The end of the save, under one lock: the new snapshot, what was saved dropped, the
        // keys of saved objects forgotten, the identity map swept, the save over.
        let (clearedAll, changedSince) = withStateSweeping { state -> (Bool, Set<ObjectID>) in
            defer {
                state.registered.sweepIfDue()
                state.saving = false
            }
            if let latest, state.snapshot != nil { state.snapshot = latest }
            if state.clearSaved(changeCount: changeCount) { return (true, []) }
            state.removeSaved(changes, committed: committed)
            guard state.hasChanges else {
                state.keys.removeAll()
                return (false, [])
            }
            // Saved objects changed since the save took them stay pending; the others' keys go.
            // (Saved objects left in the stale list are no longer inserted: skipped when it is read.)
            let saved = Set(changes.inserted.keys).union(changes.updated.keys)
            let stillPending = saved.filter { state.inserted[$0] != nil || state.updated[$0] != nil }
            for id in saved.subtracting(stillPending) { state.keys.set([], for: id) }
            return (false, stillPending)
        }
        ended = true
        if clearedAll { Reclaimer.release(changes, parts: changes.inserted.count + changes.updated.count) }
        // Objects changed while the save ran: their keys are filed again from their values as
        // they are now (read outside the lock: a child reads its parent's).
        if !changedSince.isEmpty { refreshPendingKeys(of: changedSince) }
    }

    /// The values an object will have once `changes` are saved (stored values decoded only as
    /// they are read: validation reads a few positions of each object).
    /// `snapshot`: the root's snapshot, read once for a whole validation (nil: read it now).
    private func finalValues(_ id: ObjectID, _ changes: PendingChanges, in snapshot: StoreSnapshot? = nil) -> ObjectView? {
        if let values = changes.inserted[id] { return ObjectView(base: .values(values)) }
        return finalValues(id, updated: changes.updated[id]?.values, in: snapshot)
    }

    /// The values an existing object will have once `updated` (its changed properties) is saved.
    private func finalValues(_ id: ObjectID, updated: PropertyChanges?, in snapshot: StoreSnapshot?) -> ObjectView? {
        guard let parent else { return (snapshot ?? rootSnapshot).record(id).map { ObjectView(base: .row($0.row), changes: updated) } }
        guard var view = parent.view(of: id) else { return nil }
        if let updated { view.apply(updated) }
        return view
    }

    /// Required values, relationship counts and `deny` rules. The first problem in object ID
    /// order is reported (objects are checked in any order, and sorted only when one fails).
    ///
    /// An existing object changed in a root context is checked at the positions it changed
    /// alone: its other values are committed ones, which were checked when they were saved
    /// (every save checks them, and so do batch inserts, batch upserts and migrations). Its
    /// row is then not read at all. A child context checks the whole object, whose other
    /// values may be its ancestors' unsaved ones.
    private func validate(_ changes: PendingChanges) throws {
        var failed: [ObjectID] = []
        for (id, values) in changes.inserted where !changes.deleted.contains(id) && problem(id, ObjectView(base: .values(values))) != nil {
            failed.append(id)
        }
        // One snapshot for every object (the root's is read under a lock).
        let snapshot = parent == nil ? rootSnapshot : nil
        /// The first problem of an existing object's values once `changed` is saved.
        func updateProblem(_ id: ObjectID, _ changed: PropertyChanges) -> StoreError? {
            guard let snapshot else { return finalValues(id, updated: changed, in: nil).flatMap { self.problem(id, $0) } }
            // An object gone from the snapshot is left to the merge policy (a conflict, or its
            // update dropped), as a whole-object check would leave it.
            guard let found = changeProblem(id, changed), snapshot.record(id) != nil else { return nil }
            return found
        }
        if snapshot == nil {
            // A child checks every changed object whole.
            for (id, update) in changes.updated where !changes.inserted.contains(id) && !changes.deleted.contains(id) {
                if updateProblem(id, update.values) != nil { failed.append(id) }
            }
        } else {
            // A root checks only the changes that may break a rule (most updates change other
            // attributes: none of them is read here).
            checkAfterMutation { () throws(InvariantViolation) in try checkUpdatesToValidate(changes) }
            for id in changes.updatesToValidate where !changes.inserted.contains(id) && !changes.deleted.contains(id) {
                if let values = changes.updated[id]?.values, updateProblem(id, values) != nil { failed.append(id) }
            }
        }
        if let first = failed.min() {
            let problem =
                changes.inserted[first].flatMap { self.problem(first, ObjectView(base: .values($0))) }
                ?? changes.updated[first].flatMap { updateProblem(first, $0.values) }
            if let problem { throw problem }
        }
        for id in changes.deleted.sorted() {
            guard let values = finalValues(id, changes, in: snapshot) else { continue }
            let entity = model.descriptions[id.entity]
            for (index, relationship) in entity.relationships.enumerated() where relationship.deleteRule == .deny {
                let remaining = values[entity.attributes.count + index].targets.filter { !changes.deleted.contains($0) }
                if !remaining.isEmpty {
                    throw StoreError(
                        .deleteDenied, "\(entity.name) \(id) cannot be deleted while \(relationship.name) holds \(remaining.count) object(s)",
                        entity: entity.name, property: relationship.name, objects: [id] + remaining)
                }
            }
        }
    }

    /// Checks that every update changing a property a save validates is among
    /// ``PendingChanges/updatesToValidate`` (those not among them are not validated).
    private func checkUpdatesToValidate(_ changes: PendingChanges) throws(InvariantViolation) {
        for (id, update) in changes.updated where !changes.updatesToValidate.contains(id) {
            try require(
                !model.descriptions[id.entity].validates(update.values), "ContextState",
                "update of \(id) changes a validated property but is not among the updates to validate")
        }
    }

    /// What breaks the model in an object's values as they will be saved: a required value
    /// missing, a to-many relationship holding too few or too many objects. The first problem
    /// in position order.
    func problem(_ id: ObjectID, _ values: ObjectView) -> StoreError? {
        let entity = model.descriptions[id.entity]
        for position in entity.requiredPositions where values.isNull(position) {
            return missingValue(entity, id, position)
        }
        for index in entity.relationships.indices {
            if let problem = relationshipProblem(entity, id, index, count: values[entity.attributes.count + index].targets.count) {
                return problem
            }
        }
        return nil
    }

    /// What breaks the model in the values an existing object's changes set (the others are
    /// committed ones, already checked): the problem at the first position, as ``problem(_:_:)``
    /// would report it.
    func changeProblem(_ id: ObjectID, _ changed: PropertyChanges) -> StoreError? {
        let entity = model.descriptions[id.entity]
        var first: (position: Int, problem: StoreError)?
        for (position, value) in changed where position < first?.position ?? Int.max {
            let problem: StoreError?
            if position < entity.attributes.count {
                guard entity.isRequired[position], case .attribute(.null) = value else { continue }
                problem = missingValue(entity, id, position)
            } else {
                problem = relationshipProblem(entity, id, position - entity.attributes.count, count: value.targets.count)
            }
            if let problem { first = (position, problem) }
        }
        return first?.problem
    }

    /// A required attribute without a value.
    private func missingValue(_ entity: EntityDescription, _ id: ObjectID, _ position: Int) -> StoreError {
        StoreError.missingValue(entity.name, entity.attributes[position].name, objects: [id])
    }

    /// What breaks the model in relationship `index` holding `count` objects: a required one
    /// empty, a to-many one holding too few or too many.
    private func relationshipProblem(_ entity: EntityDescription, _ id: ObjectID, _ index: Int, count: Int) -> StoreError? {
        let relationship = entity.relationships[index]
        if count == 0 && !relationship.isOptional {
            return StoreError.missingValue(entity.name, relationship.name, objects: [id])
        }
        guard relationship.isToMany, count > 0 || !relationship.isOptional else { return nil }
        let minimum = relationship.minimumCount ?? 0, maximum = relationship.maximumCount ?? Int.max
        guard (minimum...maximum).contains(count) else {
            return StoreError(
                .countViolation,
                "\(entity.name).\(relationship.name) holds \(count) objects; it takes \(minimum) to \(maximum == Int.max ? "any number" : String(maximum))",
                entity: entity.name, property: relationship.name, objects: [id])
        }
        return nil
    }

    /// Takes a child's saved changes as this context's own unsaved ones.
    func absorb(_ changes: PendingChanges) {
        defer {
            let touched =
                changes.inserted.keys.filter { !model.descriptions[$0.entity].uniqueness.isEmpty }
                + changes.updated.compactMap { id, update in
                    update.values.containsPosition(where: model.descriptions[id.entity].uniquePositions.contains) ? id : nil
                }
            refreshPendingKeys(of: touched)
        }
        var originals: [ObjectID: ObjectRecord] = [:]
        if parent == nil {
            for id in Set(changes.updated.keys).union(changes.deleted) {
                if let record = baseRecord(id) { originals[id] = record }
            }
        }
        state.withLock { state in
            for (id, values) in changes.inserted { state.inserted[id] = values }
            for (id, update) in changes.updated {
                if state.inserted.contains(id) {
                    for (position, value) in update.values { _ = state.inserted.setValue(value, at: position, of: id) }
                } else {
                    state.updated.change(id, orAdd: { PendingUpdate(original: originals[id]) }) { $0.merge(update.values) }
                    if model.descriptions[id.entity].validates(update.values) { state.updatesToValidate.insert(id) }
                }
            }
            for id in changes.deleted {
                if state.inserted.removeValue(forKey: id) != nil {
                    state.discarded.insert(id)
                } else {
                    state.deleteExisting(id, original: originals[id])
                }
            }
        }
    }
}
