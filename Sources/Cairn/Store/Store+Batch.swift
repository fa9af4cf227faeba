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
        let entity = try insertableEntity(entityName)
        // Each object becomes a row of every attribute, defaults filling what it does not give.
        var rows: [[Value]] = []
        rows.reserveCapacity(objects.count)
        for (index, object) in objects.enumerated() {
            var row = entity.attributeDefaults
            for (key, value) in object {
                guard let position = entity.attributePosition(key) else {
                    throw StoreError(.unknownName, "batch insert: object \(index): \(entity.name) has no attribute \(key)", entity: entity.name, property: key)
                }
                row[position] = value
            }
            rows.append(row)
        }
        return try await insertRows(entity, columns: Array(entity.attributes.indices), rows: rows)
    }

    /// Inserts objects given as rows of values for named attributes, as one save, without
    /// making managed objects: the fastest way to add many objects (a prepared `INSERT` run for
    /// each row, in SQL terms). Attributes not among `columns` take their default;
    /// relationships start empty. Returns the new objects' IDs, in the order of `rows`.
    ///
    /// ```swift
    /// let ids = try await store.batchInsert("Book", columns: ["isbn", "title", "year"], rows: [
    ///     ["978-0-0-1", "Emma", 1815],
    ///     ["978-0-0-2", "Persuasion", 1817],
    /// ])
    /// ```
    ///
    /// - Throws: ``StoreError`` before anything is saved: ``StoreError/Code/unknownName`` for an
    ///   unknown entity or attribute, ``StoreError/Code/abstractEntity``,
    ///   ``StoreError/Code/invalidArgument`` for a column named twice or a row whose length is
    ///   not the number of columns, ``StoreError/Code/typeMismatch`` for a value of the wrong
    ///   type and ``StoreError/Code/missingValue`` for a required attribute left nil (both name
    ///   the row and the attribute), ``StoreError/Code/uniquenessViolation`` (between the new
    ///   objects, or with a saved one).
    @discardableResult
    public func batchInsert(_ entityName: String, columns: [String], rows: [[Value]]) async throws -> [ObjectID] {
        let entity = try insertableEntity(entityName)
        var positions: [Int] = []
        positions.reserveCapacity(columns.count)
        for name in columns {
            guard let position = entity.attributePosition(name) else {
                let hint = entity.relationshipPosition(name) != nil ? " (it is a relationship; a batch insert leaves relationships empty)" : ""
                throw StoreError(.unknownName, "batch insert: \(entity.name) has no attribute \(name)\(hint)", entity: entity.name, property: name)
            }
            guard !positions.contains(position) else {
                throw StoreError(.invalidArgument, "batch insert: column \(name) is named twice", entity: entity.name, property: name)
            }
            positions.append(position)
        }
        return try await insertRows(entity, columns: positions, rows: rows)
    }

    /// The entity of a batch insert: known and not abstract.
    func insertableEntity(_ name: String) throws -> EntityDescription {
        let entity = try model.require(name)
        guard !entity.isAbstract else {
            throw StoreError(.abstractEntity, "batch insert: \(entity.name) is abstract; insert one of its sub-entities", entity: entity.name)
        }
        return entity
    }

    /// Saves new objects whose attributes at `columns` (positions) are given by `rows`: the
    /// change record is written straight from the rows (no context, no change set), checked as
    /// a context's save would check new objects, and committed as one save.
    private func insertRows(_ entity: EntityDescription, columns: [Int], rows: [[Value]]) async throws -> [ObjectID] {
        guard !rows.isEmpty else { return [] }
        if let required = entity.relationships.first(where: { !$0.isOptional }) {
            throw StoreError(
                .missingValue, "batch insert: \(entity.name).\(required.name) is required, and a batch insert leaves relationships empty",
                entity: entity.name, property: required.name)
        }
        // Per attribute position: the row's column that gives it, or nil (its default).
        var columnOf = [Int?](repeating: nil, count: entity.attributes.count)
        for (column, position) in columns.enumerated() { columnOf[position] = column }
        let defaults = entity.newObjectValues
        // What each attribute takes, read once rather than copied out of its Attribute per row;
        // which attributes are required or transient, as the entity says for every save.
        let types = entity.attributes.map(\.type)
        var required = [Bool](repeating: false, count: types.count)
        for position in entity.requiredPositions { required[position] = true }
        var transient = [Bool](repeating: false, count: types.count)
        for position in entity.transientPositions { transient[position] = true }
        let keys = try reserveKeys(rows.count)
        let ids = keys.map { ObjectID(entity: entity.index, key: $0) }
        let transaction = TransactionInfo.now()
        let bytes = try StoreRecord.encodedInserts(ids, capacity: 16 + rows.count * (12 + 12 * defaults.count), transaction: transaction) {
            index, writer in
            let row = rows[index]
            guard row.count == columns.count else {
                throw StoreError(.invalidArgument, "batch insert: object \(index) has \(row.count) values for \(columns.count) columns", entity: entity.name)
            }
            for position in types.indices {
                var value = entity.attributeDefaults[position]
                if let column = columnOf[position] {
                    value = row[column]
                    // Most values fit as they are: convert (a copy) only those that do not.
                    if !value.fits(types[position]) {
                        guard let converted = value.converted(to: types[position]) else {
                            let name = entity.attributes[position].name
                            throw StoreError(
                                .typeMismatch, "batch insert: object \(index): \(entity.name).\(name): \(value.misfit(types[position]))",
                                entity: entity.name, property: name)
                        }
                        value = converted
                    }
                }
                if transient[position] {
                    value = .null  // never saved
                } else if case .null = value, required[position] {
                    throw StoreError.missingValue(
                        entity.name, entity.attributes[position].name, objects: [ids[index]], context: "batch insert: object \(index)")
                }
                ValueEncoding.write(value, &writer)
            }
            for value in defaults[entity.attributes.count...] { ValueEncoding.write(value, &writer) }
        }
        _ = try await commitRecord { _ in EncodedSave(bytes: bytes, inserted: ids, updated: [], deleted: [], transaction: transaction) }
        return ids
    }

    /// Sets attributes on every object that matches, as one save (one record of the log, one
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
            guard let converted = value.converted(to: entity.attributes[position].type) else {
                throw StoreError(
                    .typeMismatch, "batch update: \(entity.name).\(key): \(value.misfit(entity.attributes[position].type))",
                    entity: entity.name, property: key)
            }
            changes.append((position, converted))
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
