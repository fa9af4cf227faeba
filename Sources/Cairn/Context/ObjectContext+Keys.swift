extension ObjectContext {
    /// The objects of `entityName` whose unique attribute `key` holds each of `values`, in the
    /// order of `values`: nil where no object does. What an import does before it upserts a
    /// batch (Core Data's fetch of `key IN %@`, made a dictionary): each value is one lookup in
    /// the attribute's uniqueness index, all of them in one snapshot of the store, and the
    /// objects found are registered together. In a context with nothing unsaved (nor in its
    /// parents), the lookups go sixteen at a time, their memory reads overlapped: in a store
    /// of a million objects, about twice the rate of ``fetchFirst(_:)`` by key in a loop. (A value the index does not hold in its one
    /// stored form, such as a text that is not in Unicode's composed form, a zero or a decimal,
    /// is found by a fetch instead: the values of one call that need one share it.) Unsaved
    /// changes count, as in any fetch: an inserted object with the key is found, a deleted one
    /// is not. A null value finds no object: objects without a key are not unique.
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
        guard let constraint = entity.uniqueness(ofAttribute: position) else {
            throw StoreError(
                .invalidArgument,
                "fetch by key: \(entityName).\(key) has no uniqueness constraint of its own, so a value may have several objects; "
                    + "fetch with a predicate (a FetchRequest) instead", entity: entityName, property: key)
        }
        let snapshot = baseSnapshot
        var ids: [ObjectID?] = []
        ids.reserveCapacity(values.count)
        // The values the uniqueness index cannot answer for (a text that is not in its one
        // stored form, a zero, a decimal: `Value.isByteCanonical`), by their places.
        var unindexed: [Int] = []
        // With nothing unsaved in the chain, the committed holder is the answer: those values
        // are looked up in the index together (`StoreSnapshot.holders(of:for:)`), with
        // nothing made per value (what `uniqueLookup` does then), after this loop.
        let committedOnly = !hasPendingChangesInChain
        let type = entity.attributes[position].type
        var committedPlaces: [Int] = []
        for (place, value) in values.enumerated() {
            // Null is no key: objects without one are not unique, and none is the key's.
            if value == .null {
                ids.append(nil)
                continue
            }
            if committedOnly, value.isByteCanonical, value.fits(type) {
                ids.append(nil)
                committedPlaces.append(place)
                continue
            }
            let request = FetchRequest(entityName, predicate: .equal(key, value), fetchLimit: 1)
            if let found = uniqueLookup(request, in: snapshot) {
                ids.append(found.first)
            } else {
                ids.append(nil)
                unindexed.append(place)
            }
        }
        if !committedPlaces.isEmpty {
            let holders = snapshot.holders(of: committedPlaces.count == values.count ? values : committedPlaces.map { values[$0] }, for: constraint)
            for (place, holder) in zip(committedPlaces, holders) { ids[place] = holder.flatMap { entity.family.contains($0.entity) ? $0 : nil } }
        }
        guard !unindexed.isEmpty else { return ids }
        // One fetch of the objects holding any of them (one scan, not one per value), then each
        // value's first object in the fetch's order, the one a fetch of it alone gives.
        let candidates = try matchingIDs(FetchRequest(entityName, predicate: .or(unindexed.map { .equal(key, values[$0]) })), in: snapshot)
        var firstHolders: [Value: ObjectID] = [:]
        for id in candidates {
            guard let view = view(of: id, in: snapshot), case .attribute(let held) = view[position], firstHolders[held] == nil else { continue }
            firstHolders[held] = id
        }
        for place in unindexed { ids[place] = firstHolders[values[place]] }
        return ids
    }
}
