/// What CairnModels' typed classes need of a context and its objects beyond the public API:
/// values by position, the typed object registered for an ID, errors kept for the next save.
extension ObjectContext {
    /// The managed object and the typed object of each ID, in order, under one lock: those
    /// registered, or made and registered from now on (`make` gets the ID's index and its
    /// managed object, and gives nil for no typed object). The objects are not checked to exist
    /// here. `make` runs under the context's lock: it must not call into the context.
    @usableFromInline
    package func typedObjects(
        for ids: [ObjectID], make: (Int, ManagedObject) -> AnyObject?
    ) -> [(object: ManagedObject, typed: AnyObject?)] {
        let descriptions = store.model.descriptions
        return withStateSweeping { state in
            state.registered.prepare(forAdding: ids.count)
            return ids.enumerated().map { index, id in registerTyped(id, in: &state, descriptions) { make(index, $0) } }
        }
    }

    /// ``typedObjects(for:make:)`` for one ID, without arrays (a lookup's, a to-one's).
    @usableFromInline
    package func typedObject(for id: ObjectID, make: (ManagedObject) -> AnyObject?) -> (object: ManagedObject, typed: AnyObject?) {
        let descriptions = store.model.descriptions
        return withStateSweeping { state in registerTyped(id, in: &state, descriptions, make) }
    }

    /// The managed object of `id` and its typed object: those registered, or new ones.
    private func registerTyped(
        _ id: ObjectID, in state: inout ContextState, _ descriptions: [EntityDescription], _ make: (ManagedObject) -> AnyObject?
    ) -> (object: ManagedObject, typed: AnyObject?) {
        state.registered.typedObject(id, orMake: { ManagedObject(id: id, entity: descriptions[id.entity], context: self) }, typed: make)
    }

    /// The typed objects registered for these IDs (those that have one).
    package func registeredTypedObjects<IDs: Sequence<ObjectID>>(_ ids: IDs) -> [AnyObject] {
        state.withLock { state in ids.compactMap { state.registered.typedObject($0) } }
    }

    /// Inserts a new object of `entity` holding its attributes' defaults with the values
    /// `values` gives (each by position, to the function it is handed) set over them, each
    /// converted to its attribute's type as ``ManagedObject/setValue(_:forKey:)-(Value,_)``
    /// converts, under one lock, and registers `typed` as its typed object. A value that does not
    /// fit is left out and returned as the error to keep for the next save. (The values go
    /// straight into the new row: no array of them on the way.)
    package func insertTyped(
        _ entity: EntityDescription, values: ((_ position: Int, _ value: Value) -> Void) -> Void, typed: (ManagedObject) -> AnyObject
    ) throws -> (ManagedObject, StoreError?) {
        guard !entity.isAbstract else {
            throw StoreError(.abstractEntity, "\(entity.name) is abstract; insert one of its sub-entities", entity: entity.name)
        }
        var row = entity.newObjectValues
        var refused: StoreError?
        values { position, value in
            guard position >= 0, position < row.count, position < entity.attributes.count else {
                // (A binding's position is checked when it is made: this is a bug, said at save.)
                if refused == nil {
                    refused = StoreError(
                        .invalidObject, "\(entity.name): a value for attribute position \(position), which it does not have", entity: entity.name)
                }
                return
            }
            let type = entity.attributes[position].type
            if value.fits(type) {
                row[position] = .attribute(value)
            } else if let converted = value.converted(to: type) {
                row[position] = .attribute(converted)
            } else if refused == nil {
                let name = entity.attributes[position].name
                refused = StoreError(.typeMismatch, "\(entity.name).\(name): \(value.misfit(type))", entity: entity.name, property: name)
            }
        }
        return try withStateSweeping { state in
            let id = ObjectID(entity: entity.index, key: try state.newKeys.next(reserve: store.reserveKeys))
            let slot = state.insert(id, row, constrained: !entity.uniqueness.isEmpty)
            let object = ManagedObject(id: id, entity: entity, context: self, slot: slot)
            state.registered.add(object, typed: typed(object))
            return (object, refused)
        }
    }

    /// Keeps `error` for the next ``save()`` to throw (the first one kept wins), for a change a
    /// typed property's setter could not make. A rollback forgets it.
    package func deferError(_ error: StoreError) {
        state.withLock { state in if state.deferredError == nil { state.deferredError = error } }
    }
}

extension ManagedObject {
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

/// A typed class and an entity of a store's model: the key of the store's bindings.
package struct TypedBindingKey: Hashable, Sendable {
    /// The class.
    package var type: ObjectIdentifier
    /// The entity's index.
    package var entity: Int

    package init(type: ObjectIdentifier, entity: Int) {
        self.type = type
        self.entity = entity
    }
}
