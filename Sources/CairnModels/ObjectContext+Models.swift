import Cairn

extension ObjectContext {
    /// Inserts a new typed object (SwiftData's `insert`): its values become unsaved changes of
    /// this context, and new objects it links to are inserted with it. Inserting an object of
    /// this context again does nothing.
    ///
    /// What cannot be inserted (an object of another context; a class the store's model has no
    /// entity for) is thrown by the next `save()`.
    public func insert<M: ManagedModel>(_ model: M) {
        do {
            try TypedObjects.attach(model, to: self)
        } catch let error as StoreError {
            deferError(error)
        } catch {
            deferError(StoreError(.invalidObject, "\(M.self): \(error)", entity: M.entityName))
        }
    }

    /// Deletes a typed object from this context, applying its delete rules (SwiftData's
    /// `delete`). A new object that was never inserted has nothing to delete. What the context
    /// refuses (a `deny` rule, an object of another context) is thrown by the next `save()`.
    public func delete<M: ManagedModel>(_ model: M) {
        guard let object = model._managedState.object else { return }
        do {
            guard object.context === self else {
                throw StoreError(
                    .invalidObject, "\(M.self) \(object.objectID) belongs to context \(object.context?.name ?? "(gone)"), not \(name)",
                    entity: object.entity.name, objects: [object.objectID])
            }
            try delete(object)
        } catch let error as StoreError {
            deferError(error)
        } catch {
            deferError(StoreError(.invalidObject, "\(M.self) \(object.objectID): \(error)", entity: object.entity.name))
        }
    }

    /// The objects a descriptor asks for, as typed objects of this context.
    ///
    /// - Throws: `StoreError` for a predicate or sort that cannot be translated (naming the
    ///   property and the operation), or a class the store's model has no entity for.
    @inlinable
    public func fetch<M: ManagedModel>(_ descriptor: FetchDescriptor<M>) throws -> [M] {
        let binding = try ModelBinding.binding(M.self, in: store)
        return TypedObjects.make(try fetchIDs(descriptor.request(in: store, binding: binding)), in: self, own: binding)
    }

    /// The objects of `M` whose unique property `keyPath` holds each of `keys`, in the order of
    /// `keys`: nil where no object does (`ObjectContext.fetch(_:key:in:)` for a class: one
    /// lookup per key in the property's uniqueness index, in one snapshot, the objects made
    /// together). What an import runs before it upserts a batch.
    ///
    /// ```swift
    /// let authors = try context.fetch(Author.self, keys: names, by: \.name)
    /// ```
    ///
    /// - Throws: `StoreError` when `keyPath` is not a persisted attribute of `M` stored as it is
    ///   (an enum or `Codable` value is stored encoded), when it has no uniqueness constraint of
    ///   its own (`@Attribute(.unique)`), or when the store's model has no entity for `M`.
    public func fetch<M: ManagedModel, V: AttributeValue>(_ type: M.Type = M.self, keys: [V], by keyPath: KeyPath<M, V>) throws -> [M?] {
        let binding = try ModelBinding.binding(M.self, in: store)
        let schema = M.managedSchema
        guard let ordinal = schema.ordinal(for: keyPath), case .attribute(let position, .scalar) = binding.slots[ordinal] else {
            throw StoreError(
                .invalidArgument,
                "fetch by key: \(keyPath) is not a persisted attribute of \(M.self) stored as it is (an enum or a Codable value "
                    + "is stored encoded)", entity: binding.entity.name, property: schema.ordinal(for: keyPath).map { schema.properties[$0].name })
        }
        // A key without a stored form (an unsigned integer above Int64.max) is no object's; a
        // nil key (of an optional property) is none either.
        let stored = keys.map(\.storedValue)
        let ids = try objectIDs(binding.entity.name, key: binding.entity.attributes[position].name, in: stored.compactMap { $0 })
        var found = ids.makeIterator()
        let aligned: [ObjectID?] = stored.map { $0 == nil ? nil : found.next() ?? nil }
        let present = aligned.compactMap { $0 }
        // (Made together; when an ID does not bind to `M`, one by one, so that each keeps its place.)
        let made = TypedObjects.make(present, of: M.self, in: self, own: binding)
        if made.count == present.count {
            var next = made.makeIterator()
            return aligned.map { $0 == nil ? nil : next.next() }
        }
        return aligned.map { $0.flatMap { TypedObjects.make($0, of: M.self, in: self, own: binding) } }
    }

    /// How many objects a descriptor matches (its offset and limit applied).
    public func fetchCount<M: ManagedModel>(_ descriptor: FetchDescriptor<M>) throws -> Int {
        try count(descriptor.request(in: store))
    }

    /// The IDs of the objects a descriptor matches, in its order.
    public func fetchIdentifiers<M: ManagedModel>(_ descriptor: FetchDescriptor<M>) throws -> [ObjectID] {
        try fetchIDs(descriptor.request(in: store))
    }

    /// The typed object of an ID in this context (how an object reaches another context or
    /// task: by its ``ManagedModel/persistentModelID``); nil when it does not exist here or is
    /// not an object of `M`'s entity.
    public func model<M: ManagedModel>(for id: ObjectID, as type: M.Type = M.self) -> M? {
        guard let object = object(with: id), (try? ModelBinding.binding(M.self, entityIndex: object.entity.index, in: store)) != nil else {
            return nil
        }
        return TypedObjects.make([id], of: M.self, in: self).first
    }

    /// The typed object of a managed object of this context (the by-name object's typed view).
    public func model<M: ManagedModel>(of object: ManagedObject, as type: M.Type = M.self) -> M? {
        guard object.context === self else { return nil }
        return model(for: object.objectID, as: type)
    }
}

extension ManagedObject {
    /// This object as a typed object of its context; nil when its entity is not `M`'s.
    public func model<M: ManagedModel>(as type: M.Type = M.self) -> M? {
        context?.model(of: self, as: type)
    }
}
