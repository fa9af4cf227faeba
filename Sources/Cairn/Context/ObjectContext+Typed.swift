/// What CairnModels' typed classes need of a context and its objects beyond the public API:
/// values by position, the typed object registered for an ID, errors kept for the next save.
extension ObjectContext {
    /// The typed object registered for `id`, or the one `make` makes for its managed object
    /// (registered from now on), for each object in order, under one lock. `make` runs under the
    /// context's lock: it must not call into the context.
    package func typedObjects(for objects: [ManagedObject], make: (Int, ManagedObject) -> AnyObject) -> [AnyObject] {
        state.withLock { state in
            objects.enumerated().map { index, object in
                if let typed = state.registered.typed[object.objectID] { return typed }
                let typed = make(index, object)
                state.registered.typed[object.objectID] = typed
                return typed
            }
        }
    }

    /// Registers `typed` as the typed object of `object` (an object inserted through its typed
    /// class).
    package func registerTyped(_ typed: AnyObject, for object: ManagedObject) {
        state.withLock { $0.registered.typed[object.objectID] = typed }
    }

    /// The typed objects registered for these IDs (those that have one).
    package func registeredTypedObjects<IDs: Sequence<ObjectID>>(_ ids: IDs) -> [AnyObject] {
        state.withLock { state in ids.compactMap { state.registered.typed[$0] } }
    }

    /// The managed objects of these IDs registered in this context, making those it has not
    /// (without checking that the objects exist here), under one lock.
    package func objectsForTyping(_ ids: [ObjectID]) -> [ManagedObject] { registeredObjects(ids) }

    /// Keeps `error` for the next ``save()`` to throw (the first one kept wins), for a change a
    /// typed property's setter could not make. A rollback forgets it.
    package func deferError(_ error: StoreError) {
        state.withLock { state in if state.deferredError == nil { state.deferredError = error } }
    }
}

extension ManagedObject {
    /// The value of the attribute at `position`, as this object's context sees it; nil when the
    /// object was deleted or its context is gone.
    package func attributeValue(at position: Int) -> Value? {
        guard let context, let view = context.view(of: objectID) else { return nil }
        if case .attribute(let value) = view[position] { return value }
        return .null
    }

    /// The objects a relationship (by its index among the entity's relationships) points to;
    /// nil when the object was deleted or its context is gone.
    package func targets(ofRelationship index: Int) -> [ObjectID]? {
        guard let context, let view = context.view(of: objectID) else { return nil }
        return view[entity.attributes.count + index].targets
    }

    /// Points a relationship (by index) at `targets`; the inverse follows.
    package func setTargets(ofRelationship index: Int, to targets: [ObjectID]) throws {
        guard let context else { throw goneError }
        try context.setRelationship(objectID, index, to: targets)
    }

    /// The error of an object whose context is gone.
    package var goneError: StoreError {
        StoreError(
            .invalidObject,
            "the context of \(entity.name) \(objectID) is gone: an object lives as long as its context; pass its objectID "
                + "to another context (viewContext.object(with:) or objects(with:)) to read it there",
            entity: entity.name, objects: [objectID])
    }
}
