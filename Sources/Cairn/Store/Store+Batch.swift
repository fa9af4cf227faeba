extension Store {
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
