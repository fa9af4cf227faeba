extension ObjectContext {
    /// The objects of `entityName` whose unique attribute `key` holds each of `values`, in the
    /// order of `values`: nil where no object does. What an import does before it upserts a
    /// batch (Core Data's fetch of `key IN %@`, made a dictionary): each value is one lookup in
    /// the attribute's uniqueness index, all of them in one snapshot of the store, and the
    /// objects found are registered together. Unsaved changes count, as in any fetch: an
    /// inserted object with the key is found, a deleted one is not.
    ///
    /// ```swift
    /// let found = try context.fetch("Person", key: "email", in: emails.map { .string($0) })
    /// for (email, person) in zip(emails, found) where person == nil { … insert … }
    /// ```
    ///
    /// Objects of sub-entities are included, as a `FetchRequest`'s are by default.
    ///
    /// - Throws: ``StoreError`` `unknownName` for an unknown entity or attribute,
    ///   `invalidArgument` when `key` has no uniqueness constraint of its own (fetch with a
    ///   predicate then), or `typeMismatch` for a value of another type than the attribute's.
    public func fetch(_ entityName: String, key: String, in values: [Value]) throws -> [ManagedObject?] {
        let ids = try objectIDs(entityName, key: key, in: values)
        let objects = registeredObjects(ids.lazy.compactMap { $0 })
        var next = objects.makeIterator()
        return ids.map { $0 == nil ? nil : next.next() }
    }

    /// The IDs ``fetch(_:key:in:)`` finds, in the order of `values` (nil where none).
    package func objectIDs(_ entityName: String, key: String, in values: [Value]) throws -> [ObjectID?] {
        guard let entity = model.entity(named: entityName) else {
            throw StoreError(.unknownName, "fetch by key: the model has no entity \(entityName)", entity: entityName)
        }
        guard let position = entity.attributePosition(key) else {
            throw StoreError(.unknownName, "fetch by key: \(entityName) has no attribute \(key)", entity: entityName, property: key)
        }
        guard entity.uniqueness(ofAttribute: position) != nil else {
            throw StoreError(
                .invalidArgument,
                "fetch by key: \(entityName).\(key) has no uniqueness constraint of its own, so a value may have several objects; "
                    + "fetch with a predicate (a FetchRequest) instead", entity: entityName, property: key)
        }
        let snapshot = baseSnapshot
        var ids: [ObjectID?] = []
        ids.reserveCapacity(values.count)
        for value in values {
            // (A value the index cannot answer for, null or of another type, takes the general
            // path, which finds what a fetch would, or throws what it would.)
            let request = FetchRequest(entityName, predicate: .equal(key, value), fetchLimit: 1)
            ids.append(try matchingIDs(request, in: snapshot).first)
        }
        return ids
    }
}
