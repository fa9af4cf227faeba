import CairnSupport

/// What a batch upsert did to one object.
public enum UpsertOutcome: UInt8, Sendable, Hashable {
    /// The object was inserted.
    case inserted
    /// An existing object's values changed.
    case updated
    /// An existing object was named, and its values were already those given (or updates were
    /// not asked for).
    case unchanged
}

/// What a batch upsert did.
public struct BatchUpsertResult: Sendable {
    /// Per row, its object (rows with the same key share one).
    public var ids: [ObjectID]
    /// Per row, what happened to its object.
    public var outcomes: [UpsertOutcome]
    /// Objects inserted, updated, and named without change (each object counted once).
    public var inserted = 0, updated = 0, unchanged = 0
}

extension Store {
    /// Inserts or updates objects by unique key, as one save, without making managed objects:
    /// each row's `key` columns find the object holding those values (a uniqueness constraint
    /// on exactly those attributes finds it through its index; otherwise one pass over the
    /// entity does), which is updated; rows whose key nobody holds insert a new object. Rows with
    /// the same key are one object, later rows' values applied over earlier ones. A nil value
    /// leaves the attribute alone (its default, for a new object); `.null` clears it. Values equal
    /// to the stored ones are not written: when nothing changes, nothing is saved.
    ///
    /// ```swift
    /// let result = try await store.batchUpsert("Book", key: ["isbn"], columns: ["isbn", "title"],
    ///                                          rows: [["978-0-0-1", "Emma"], ["978-0-0-9", nil]])
    /// ```
    ///
    /// With an empty `key`, every row inserts (a batch insert).
    ///
    /// - Parameters:
    ///   - entityName: The entity of the objects (not abstract).
    ///   - key: The attributes whose values find an object (empty: every row inserts).
    ///   - columns: The attributes each row gives values of, in order.
    ///   - rows: One array of values per object, as many as `columns`; nil leaves an attribute
    ///     alone.
    ///   - updatesExisting: false leaves existing objects untouched (only new keys insert).
    /// - Throws: ``StoreError`` before anything is saved: an unknown entity or column, a key
    ///   column not among `columns`, a row of the wrong length, a value of the wrong type or a
    ///   required value left nil (naming the row and attribute), a row without its key
    ///   (``StoreError/Code/missingValue``), or what the save throws.
    public func batchUpsert(
        _ entityName: String, key: [String], columns: [String], rows: [[Value?]], updatesExisting: Bool = true
    ) async throws -> BatchUpsertResult {
        try await batchUpsert(entityName, key: key, columns: columns, rows: rows, updatesExisting: updatesExisting) { "row \($0)" }
    }

    /// ``batchUpsert(_:key:columns:rows:updatesExisting:)``, its errors naming a row as
    /// `rowName` says.
    package func batchUpsert(
        _ entityName: String, key: [String], columns: [String], rows: [[Value?]], updatesExisting: Bool, rowName: @escaping (Int) -> String
    ) async throws -> BatchUpsertResult {
        let entity = try insertableEntity(entityName)
        var positions: [Int] = []
        for name in columns {
            guard let position = entity.attributePosition(name) else {
                throw StoreError(.unknownName, "batch upsert: \(entity.name) has no attribute \(name)", entity: entity.name, property: name)
            }
            guard !positions.contains(position) else {
                throw StoreError(.invalidArgument, "batch upsert: column \(name) is named twice", entity: entity.name, property: name)
            }
            positions.append(position)
        }
        let keyPositions = try key.map { name in
            guard let column = columns.firstIndex(of: name) else {
                throw StoreError(.invalidArgument, "batch upsert: key \(name) is not among the columns", entity: entity.name, property: name)
            }
            return positions[column]
        }
        // Each row becomes every attribute's stored bytes, checked and converted on the way.
        var columnOf = [Int?](repeating: nil, count: entity.attributes.count)
        for (column, position) in positions.enumerated() { columnOf[position] = column }
        let defaults = entity.attributes.map { attribute -> [UInt8] in
            ValueEncoding.encoded(attribute.isTransient ? .null : attribute.defaultValue ?? .null)
        }
        var encoded = EncodedRows(attributeCount: entity.attributes.count)
        for (index, row) in rows.enumerated() {
            guard row.count == positions.count else {
                throw StoreError(
                    .invalidArgument, "batch upsert: \(rowName(index)) has \(row.count) values for \(positions.count) columns", entity: entity.name)
            }
            var failure: StoreError?
            encoded.append { position, writer in
                guard let column = columnOf[position], let given = row[column], failure == nil else {
                    writer.write(bytes: defaults[position])
                    return false
                }
                let attribute = entity.attributes[position]
                guard let value = given.fits(attribute.type) ? given : given.converted(to: attribute.type) else {
                    failure = StoreError(
                        .typeMismatch, "batch upsert: \(rowName(index)): \(entity.name).\(attribute.name): \(given.misfit(attribute.type))",
                        entity: entity.name, property: attribute.name)
                    writer.write(bytes: defaults[position])
                    return false
                }
                ValueEncoding.write(attribute.isTransient ? .null : value, &writer)
                return true
            }
            if let failure { throw failure }
        }
        return try await batchUpsert(entityName, key: keyPositions, rows: encoded, updatesExisting: updatesExisting, rowName: rowName)
    }
}
