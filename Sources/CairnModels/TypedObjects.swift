import Cairn

/// Typed objects of a context: made for fetched objects (one instance per object and context),
/// inserted, linked, and set through their bindings.
@usableFromInline
enum TypedObjects {
    /// The typed objects of these IDs in `context`, of class `M` (each bound to its object's
    /// entity, a sub-entity's objects included): the instances the context already has, or new
    /// ones. An ID of an entity `M` does not bind to is left out.
    /// (Inlinable, as the one-ID form: specialized for the class where it is called, it makes its
    /// arrays and optionals of `M` without looking up their generic metadata at each call.)
    /// `own` is `M`'s binding to its own entity when the caller has it (a fetch's), so that it
    /// is not looked up again.
    @inlinable
    static func make<M: ManagedModel>(
        _ ids: [ObjectID], of type: M.Type = M.self, in context: ObjectContext, own: EntityBinding? = nil
    ) -> [M] {
        guard !ids.isEmpty else { return [] }
        if ids.count == 1 {
            guard let one = make(ids[0], of: type, in: context, own: own) else { return [] }
            return [one]
        }
        // Usually one entity: its binding looked up once.
        var last: (entity: Int, binding: EntityBinding?) = (own?.entity.index ?? -1, own)
        var bindings: [EntityBinding?] = []
        bindings.reserveCapacity(ids.count)
        for id in ids {
            if id.entity != last.entity { last = (id.entity, try? ModelBinding.binding(M.self, entityIndex: id.entity, in: context.store)) }
            bindings.append(last.binding)
        }
        let made = context.typedObjects(for: ids) { index, object -> AnyObject? in
            // (Runs under the context's lock, the class's declared property values with it: they must
            // not call into the context, docs/MODELS.md.)
            bindings[index].map { M(managedState: ManagedState(object: object, binding: $0)) }
        }
        var result: [M] = []
        result.reserveCapacity(made.count)
        // (An object registered as another class bound to the same entity gets an instance of
        // its own, not registered: one class per entity keeps one instance per object.)
        for (index, (object, typed)) in made.enumerated() {
            if let typed, Swift.type(of: typed) == M.self {
                result.append(unsafeDowncast(typed, to: M.self))
            } else if let binding = bindings[index] {
                result.append(M(managedState: ManagedState(object: object, binding: binding)))
            }
        }
        return result
    }

    /// ``make(_:of:in:)`` for one ID (a lookup's, a to-one's): no arrays on the way.
    @inlinable
    static func make<M: ManagedModel>(_ id: ObjectID, of type: M.Type = M.self, in context: ObjectContext, own: EntityBinding? = nil) -> M? {
        let binding: EntityBinding
        if let own, own.entity.index == id.entity {
            binding = own
        } else {
            guard let found = try? ModelBinding.binding(M.self, entityIndex: id.entity, in: context.store) else { return nil }
            binding = found
        }
        // (Runs under the context's lock, as a fetch's: docs/MODELS.md.)
        let (object, typed) = context.typedObject(for: id) { M(managedState: ManagedState(object: $0, binding: binding)) }
        if let typed, Swift.type(of: typed) == M.self { return unsafeDowncast(typed, to: M.self) }
        return M(managedState: ManagedState(object: object, binding: binding))
    }

    /// The typed object of one ID for a class known only at run time (a to-one's destination).
    static func make(_ id: ObjectID, _ type: any ManagedModel.Type, in context: ObjectContext) -> AnyObject? {
        func opened<D: ManagedModel>(_ type: D.Type) -> AnyObject? { make(id, of: type, in: context) }
        return opened(type)
    }

    /// ``make(_:of:in:)`` for a class known only at run time (a relationship's destination).
    static func make(_ ids: [ObjectID], _ type: any ManagedModel.Type, in context: ObjectContext) -> [AnyObject] {
        func opened<D: ManagedModel>(_ type: D.Type) -> [AnyObject] { make(ids, of: type, in: context) }
        return opened(type)
    }

    /// The context of the object (or the first of the objects) a relationship's new value
    /// links to, when it is in one.
    static func context(ofLinked value: Any) -> ObjectContext? {
        if let model = linked(value).first(where: { $0._managedState.object != nil }) { return model._managedState.object?.context }
        return nil
    }

    /// The typed objects a relationship's value holds: none, one, or an array's.
    static func linked(_ value: Any) -> [any ManagedModel] {
        if let optional = value as? any OptionalValue {
            guard let wrapped = optional.wrapped else { return [] }
            return linked(wrapped)
        }
        if let model = value as? any ManagedModel { return [model] }
        if let many = value as? any ToManyValue { return many.objects }
        return []
    }

    /// Sets an attribute of an object of a context to a stored value. What the context refuses
    /// is kept for its next save to throw.
    @usableFromInline
    static func setStored(_ value: Value, at position: Int, of object: ManagedObject, _ binding: EntityBinding, _ ordinal: Int) {
        do {
            try object.setAttributeValue(value, at: position)
        } catch {
            refuse(error, object, binding, ordinal)
        }
    }

    /// Sets a property of an object of a context through its slot. What the context refuses is
    /// kept for its next save to throw.
    static func set(_ value: Any, of object: ManagedObject, _ binding: EntityBinding, _ ordinal: Int) {
        do {
            switch binding.slots[ordinal] {
            case .attribute(let position, let coding):
                guard let stored = ValueCodec.encode(value, coding: coding) else {
                    let name = binding.schema.properties[ordinal].name
                    throw StoreError(
                        .typeMismatch,
                        "\(object.entity.name).\(name): \(value) has no stored form (an integer above Int64.max, or a value that does not encode)",
                        entity: object.entity.name, property: name)
                }
                try object.setAttributeValue(stored, at: position)
            case .composite(let positions, let layout):
                guard let stored = layout.storedValues(of: value) else {
                    let name = binding.schema.properties[ordinal].name
                    throw StoreError(
                        .typeMismatch,
                        "\(object.entity.name).\(name): an element of \(value) has no stored form (an integer above Int64.max, "
                            + "or a value that does not encode)", entity: object.entity.name, property: name)
                }
                try object.setAttributeValues(Array(zip(positions, stored)))
            case .toOne(let index, _), .toMany(let index, _):
                guard let context = object.context else { throw object.goneError }
                var targets: [ObjectID] = []
                for model in linked(value) {
                    try attach(model, to: context)
                    if let id = model._managedState.object?.objectID { targets.append(id) }
                }
                try object.setTargets(ofRelationship: index, to: targets)
            }
        } catch {
            refuse(error, object, binding, ordinal)
        }
    }

    /// Keeps a refused change for the context's next save (or reports it, with no context).
    private static func refuse(_ error: any Error, _ object: ManagedObject, _ binding: EntityBinding, _ ordinal: Int) {
        let name = binding.schema.properties[ordinal].name
        guard let context = object.context else {
            return ManagedModelProblems.report("\(object.entity.name).\(name) cannot be set: \(object.goneError.message)")
        }
        context.deferError(
            error as? StoreError
                ?? StoreError(.invalidObject, "\(object.entity.name).\(name): \(error)", entity: object.entity.name, property: name))
    }

    /// Puts a new typed object into `context` (its values kept until now become unsaved changes
    /// of the context; new objects it links to join too); an object already in `context` stays.
    ///
    /// - Throws: ``StoreError`` when the object belongs to another context, or its class is not
    ///   bound to an entity of the store.
    static func attach<M: ManagedModel>(_ model: M, to context: ObjectContext) throws {
        // (Read once: each read of the state through the protocol copies all of it.)
        let state = model._managedState
        if let object = state.object {
            guard object.context !== context else { return }
            throw StoreError(
                .invalidObject,
                "\(M.self) \(object.objectID) belongs to context \(object.context?.name ?? "(gone)"), not \(context.name): "
                    + "an object stays in its context; read it in this one with model(for: persistentModelID)",
                entity: object.entity.name, objects: [object.objectID])
        }
        guard !state.isStandIn else {
            throw StoreError(
                .invalidObject,
                "\(M.self) is a stand-in for a missing object (what a required to-one reads as when its object was deleted or its "
                    + "context is gone): no context takes it; set an object of the context",
                entity: M.entityName)
        }
        let binding = try ModelBinding.binding(M.self, in: context.store)
        // Values of the types the store holds as they are go in with the new object, under one
        // lock; the others (enums, Codable values, relationships) are set after it.
        var later: [(ordinal: Int, entry: PendingValues.Entry)] = []
        // (`state` holds the pending values until the context's lock is let go of: the object's
        // state drops them under it, and their buffer is freed here, not in the lock.)
        let (object, refused) = try context.insertTyped(
            binding.entity,
            values: { set in
                state.pending.forEach { ordinal, entry in
                    if case .stored(let value) = entry, case .attribute(let position, .scalar) = binding.slots[ordinal] {
                        set(position, value)
                    } else {
                        later.append((ordinal, entry))
                    }
                }
            },
            typed: { object in
                model._managedState.bind(to: object, binding)
                return model
            })
        withExtendedLifetime(state) {}
        if let refused { context.deferError(refused) }
        for (ordinal, entry) in later {
            switch entry {
            case .stored(let value): set(value, of: object, binding, ordinal)
            case .swift(let boxed): set(boxed.value, of: object, binding, ordinal)
            case .none: break
            }
        }
    }
}
