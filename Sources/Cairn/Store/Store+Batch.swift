extension Store {
    /// Inserts objects given as attribute values, as one save, without making managed objects
    /// (Core Data's batch insert): faster than inserting through a context when there are
    /// many. Attributes not given take their default; relationships start empty. Returns the
    /// new objects' IDs, in order.
    ///
    /// ```swift
    /// let ids = try await store.batchInsert("Book", [["isbn": "978-0-0-1", "title": "Emma", "year": 1815],
    ///                                                ["isbn": "978-0-0-2", "title": "Persuasion", "year": 1817]])
    /// ```
    ///
    /// - Throws: ``StoreError`` before anything is saved for an unknown or abstract entity, an
    ///   unknown attribute or a value of the wrong type (naming the object's index and the
    ///   attribute), or what the save throws: a missing required value, a uniqueness violation
    ///   (between the new objects, or with a saved one)…
    @discardableResult
    public func batchInsert(_ entityName: String, _ objects: [[String: Value]]) async throws -> [ObjectID] {
        let entity = try model.require(entityName)
        guard !entity.isAbstract else {
            throw StoreError(.abstractEntity, "batch insert: \(entity.name) is abstract; insert one of its sub-entities", entity: entity.name)
        }
        let defaults = entity.newObjectValues
        var rows: [[PropertyValue]] = []
        rows.reserveCapacity(objects.count)
        for (index, object) in objects.enumerated() {
            var values = defaults
            for (key, value) in object {
                guard let position = entity.attributePosition(key) else {
                    throw StoreError(.unknownName, "batch insert: object \(index): \(entity.name) has no attribute \(key)", entity: entity.name, property: key)
                }
                guard value.fits(entity.attributes[position].type) else {
                    throw StoreError(.typeMismatch, "batch insert: object \(index): \(entity.name).\(key) takes \(entity.attributes[position].type), not \(value.typeName) \(value)",
                                     entity: entity.name, property: key)
                }
                values[position] = .attribute(value)
            }
            rows.append(values)
        }
        let keys = try reserveKeys(rows.count)
        let ids = keys.map { ObjectID(entity: entity.index, key: $0) }
        let context = newBackgroundContext(name: "batch insert")
        context.insertValues(zip(ids, rows))
        try await context.save()
        return ids
    }

    /// Sets attributes on every object that matches, as one save (one frame of the log, one
    /// did-save notification), as Core Data's batch update does. Returns how many objects
    /// changed.
    ///
    /// ```swift
    /// let archived = try await store.batchUpdate(FetchRequest("Book", predicate: try FetchPredicate(format: "year < 1900")),
    ///                                            set: ["archived": true])
    /// ```
    ///
    /// - Throws: ``StoreError`` for an unknown attribute or a value of the wrong type (before
    ///   anything changes), or what the save throws (a uniqueness violation…).
    public func batchUpdate(_ request: FetchRequest, set values: [String: Value]) async throws -> Int {
        let entity = try model.require(request.entityName)
        var changes: [(Int, Value)] = []
        for (key, value) in values.sorted(by: { $0.key < $1.key }) {
            guard let position = entity.attributePosition(key) else {
                throw StoreError(.unknownName, "batch update: \(entity.name) has no attribute \(key)", entity: entity.name, property: key)
            }
            guard value.fits(entity.attributes[position].type) else {
                throw StoreError(.typeMismatch, "batch update: \(entity.name).\(key) takes \(entity.attributes[position].type), not \(value.typeName) \(value)",
                                 entity: entity.name, property: key)
            }
            changes.append((position, value))
        }
        let context = newBackgroundContext(name: "batch update")
        let ids = try context.fetchIDs(request)
        for id in ids {
            for (position, value) in changes { try context.setRaw(id, position, .attribute(value)) }
        }
        try await context.save()
        return ids.count
    }

    /// Deletes every object that matches, as one save (delete rules apply). Returns how many
    /// objects matched (cascades may delete more).
    public func batchDelete(_ request: FetchRequest) async throws -> Int {
        let context = newBackgroundContext(name: "batch delete")
        let count = try context.deleteAll(request)
        try await context.save()
        return count
    }
}
