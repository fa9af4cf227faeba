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
    /// - Parameter updatesExisting: false leaves existing objects untouched (only new keys insert).
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
    /// `rowName` says (the JSON mapper names the record's JSON path).
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
        let keyColumns = try key.map { name in
            guard let column = columns.firstIndex(of: name) else {
                throw StoreError(.invalidArgument, "batch upsert: key \(name) is not among the columns", entity: entity.name, property: name)
            }
            guard !entity.attributes[positions[column]].isTransient else {
                throw StoreError(.invalidArgument, "batch upsert: key \(name) is transient: it is never stored", entity: entity.name, property: name)
            }
            return column
        }
        var plan = UpsertPlan(entity: entity, positions: positions, keyColumns: keyColumns, updatesExisting: updatesExisting, rowName: rowName)
        _ = try await commitRecord { accepted in
            try plan.resolve(rows, against: accepted, reserve: reserveKeys)
            return try plan.encodedSave()
        }
        return plan.result
    }
}

/// A batch upsert worked out against the accepted state: which rows name existing objects, what
/// changes, what is new.
struct UpsertPlan {
    let entity: EntityDescription
    let positions: [Int]
    let keyColumns: [Int]
    let updatesExisting: Bool
    private let types: [AttributeType]
    /// The constraint whose index finds keys (nil: a pass over the entity's objects does).
    private let constraint: UniquenessConstraint?
    /// Per key column, its place among the constraint's positions.
    private let constraintOrder: [Int]

    /// One object the rows name.
    /// How messages name a row.
    private let rowName: (Int) -> String

    private struct Slot {
        var existing: ObjectID?
        /// New object named by more than one row: every attribute's value, the rows merged.
        /// Empty otherwise: a new object named once is written straight from its row.
        var values: [Value]
        /// Existing object: changed attributes by position.
        var changes: [Int: Value]
        var firstRow: Int
    }

    private var slots: [Slot] = []
    private var slotOfRow: [Int] = []
    private(set) var result = BatchUpsertResult(ids: [], outcomes: [])
    private var insertedIDs: [ObjectID] = []

    init(entity: EntityDescription, positions: [Int], keyColumns: [Int], updatesExisting: Bool, rowName: @escaping (Int) -> String) {
        self.entity = entity
        self.positions = positions
        self.keyColumns = keyColumns
        self.updatesExisting = updatesExisting
        self.rowName = rowName
        types = entity.attributes.map(\.type)
        let keyPositions = keyColumns.map { positions[$0] }
        let constraint = entity.uniqueness(coveringExactly: keyPositions)
        self.constraint = constraint
        constraintOrder = constraint.map { constraint in constraint.positions.compactMap { keyPositions.firstIndex(of: $0) } } ?? []
    }

    /// The row's value of column `column`, of its attribute's type (nil: not given).
    private func value(_ row: [Value?], _ column: Int, rowIndex: Int) throws -> Value? {
        guard let value = row[column] else { return nil }
        let type = types[positions[column]]
        if value.fits(type) { return value }
        guard let converted = value.converted(to: type) else {
            let name = entity.attributes[positions[column]].name
            throw StoreError(
                .typeMismatch, "batch upsert: \(rowName(rowIndex)): \(entity.name).\(name): \(value.misfit(type))", entity: entity.name, property: name)
        }
        return converted
    }

    mutating func resolve(_ rows: [[Value?]], against accepted: StoreSnapshot, reserve: (Int) throws -> Range<UInt64>) throws {
        // Local, so that applying a row to a slot does not copy every slot (the rows are
        // applied by a method of `self`).
        var slots: [Slot] = []
        var slotOfRow: [Int] = []
        slots.reserveCapacity(rows.count)
        slotOfRow.reserveCapacity(rows.count)
        var slotOfKey = ByteKeyTable(capacity: keyColumns.isEmpty ? 0 : rows.count)
        var keyBytes = ByteWriter(capacity: 64)
        var scanned: [[UInt8]: ObjectID]?
        self.rows = rows
        for (index, row) in rows.enumerated() {
            guard row.count == positions.count else {
                throw StoreError(
                    .invalidArgument, "batch upsert: \(rowName(index)) has \(row.count) values for \(positions.count) columns", entity: entity.name)
            }
            var slot: Int
            if keyColumns.isEmpty {
                slot = slots.count
                slots.append(Slot(existing: nil, values: [], changes: [:], firstRow: index))
            } else {
                var key: [Value] = []
                key.reserveCapacity(keyColumns.count)
                keyBytes.removeAll()
                for column in keyColumns {
                    guard let value = try value(row, column, rowIndex: index), value != .null else {
                        let name = entity.attributes[positions[column]].name
                        throw StoreError(
                            .missingValue, "batch upsert: \(rowName(index)) has no value for \(entity.name).\(name), its key", entity: entity.name,
                            property: name)
                    }
                    key.append(value)
                    ChangeSetCodec.write(value, &keyBytes)
                }
                if let known = keyBytes.bytes.withUnsafeBytes({ slotOfKey.value($0) }) {
                    slot = known
                } else {
                    let existing = try holder(key, keyBytes.bytes, in: accepted, scanned: &scanned)
                    slot = slots.count
                    slots.append(Slot(existing: existing, values: [], changes: [:], firstRow: index))
                    keyBytes.bytes.withUnsafeBytes { slotOfKey.insert($0, slot) }
                }
            }
            slotOfRow.append(slot)
            try apply(row, rowIndex: index, to: &slots[slot], in: accepted)
        }
        // New objects get keys, in the order of their first rows.
        let newCount = slots.reduce(0) { $0 + ($1.existing == nil ? 1 : 0) }
        var keys = try reserve(newCount).makeIterator()
        var ids: [ObjectID] = []
        ids.reserveCapacity(slots.count)
        insertedIDs = []
        for slot in slots {
            if let existing = slot.existing {
                ids.append(existing)
            } else if let key = keys.next() {
                let id = ObjectID(entity: entity.index, key: key)
                ids.append(id)
                insertedIDs.append(id)
            }
        }
        var outcomes: [UpsertOutcome] = slots.map { slot in
            slot.existing == nil ? .inserted : (slot.changes.isEmpty ? .unchanged : .updated)
        }
        result = BatchUpsertResult(ids: slotOfRow.map { ids[$0] }, outcomes: slotOfRow.map { outcomes[$0] })
        self.slots = slots
        self.slotOfRow = slotOfRow
        result.inserted = outcomes.count { $0 == .inserted }
        result.updated = outcomes.count { $0 == .updated }
        result.unchanged = outcomes.count { $0 == .unchanged }
        self.ids = ids
        outcomes = []
    }

    private var ids: [ObjectID] = []
    private var rows: [[Value?]] = []

    /// A new object's attribute values from one row: the row's values over the defaults.
    private func newValues(_ row: [Value?], rowIndex: Int) throws -> [Value] {
        var values = entity.attributeDefaults
        for column in positions.indices {
            if let value = try value(row, column, rowIndex: rowIndex) { values[positions[column]] = value }
        }
        return values
    }

    /// The saved object holding the key.
    private func holder(_ key: [Value], _ bytes: [UInt8], in snapshot: StoreSnapshot, scanned: inout [[UInt8]: ObjectID]?) throws -> ObjectID? {
        if let constraint {
            let holder =
                key.count == 1
                ? snapshot.holder(of: key[0], for: constraint)
                : snapshot.holder(of: UniqueKey(owner: constraint.owner, number: constraint.number, values: constraintOrder.map { key[$0] }))
            // An inherited constraint spans its owner's family: the holder may be of a sibling
            // entity, whose row this plan must never write.
            if let holder, !entity.family.contains(holder.entity) {
                let shown = zip(keyColumns, key).map { "\(entity.attributes[positions[$0]].name) = \($1)" }.joined(separator: ", ")
                throw StoreError(
                    .uniquenessViolation, "batch upsert: a \(snapshot.model.descriptions[holder.entity].name) already has \(shown)",
                    entity: entity.name, objects: [holder])
            }
            return holder
        }
        if scanned == nil {
            var table: [[UInt8]: ObjectID] = [:]
            let keyPositions = keyColumns.map { positions[$0] }
            for id in snapshot.ids(entity: entity.index) {
                guard let record = snapshot.record(id) else { continue }
                var writer = ByteWriter()
                for position in keyPositions { record.row.withValueBytes(position) { writer.write(bytes: $0) } }
                if table[writer.bytes] == nil { table[writer.bytes] = id }
            }
            scanned = table
        }
        return scanned?[bytes]
    }

    /// Applies a row's given values to its object.
    private func apply(_ row: [Value?], rowIndex: Int, to slot: inout Slot, in snapshot: StoreSnapshot) throws {
        if slot.existing == nil {
            if rowIndex == slot.firstRow {
                // Only checked: the row is written as it is, unless another row merges into it.
                for column in positions.indices { _ = try value(row, column, rowIndex: rowIndex) }
                return
            }
            if slot.values.isEmpty { slot.values = try newValues(rows[slot.firstRow], rowIndex: slot.firstRow) }
            for column in positions.indices {
                if let value = try value(row, column, rowIndex: rowIndex) { slot.values[positions[column]] = value }
            }
            return
        }
        guard updatesExisting, let id = slot.existing, let record = snapshot.record(id) else { return }
        for column in positions.indices {
            guard let value = try value(row, column, rowIndex: rowIndex) else { continue }
            let position = positions[column]
            if entity.attributes[position].isTransient { continue }
            let same = record.row.withValueBytes(position) { ChangeSetCodec.matches(value, stored: $0) }
            if same {
                slot.changes[position] = nil
            } else {
                slot.changes[position] = value
            }
        }
    }

    /// The change record of the plan, checked as a save checks new objects; nil when nothing
    /// changes. New objects are written straight from their slots.
    func encodedSave() throws -> EncodedSave? {
        var updates: [ChangeSet.Update] = []
        var updated: [ObjectID] = []
        var newSlots: [Int] = []
        newSlots.reserveCapacity(insertedIDs.count)
        for (index, slot) in slots.enumerated() {
            if slot.existing == nil {
                newSlots.append(index)
            } else if !slot.changes.isEmpty {
                let id = ids[index]
                for (position, value) in slot.changes where value == .null && !entity.attributes[position].isOptional {
                    let name = entity.attributes[position].name
                    throw StoreError(
                        .missingValue, "batch upsert: \(rowName(slot.firstRow)): \(entity.name).\(name) is required", entity: entity.name,
                        property: name, objects: [id])
                }
                updates.append(
                    ChangeSet.Update(
                        id: id, changes: slot.changes.sorted { $0.key < $1.key }.map { PropertyChange(position: $0.key, value: .attribute($0.value)) }))
                updated.append(id)
            }
        }
        if !newSlots.isEmpty, let required = entity.relationships.first(where: { !$0.isOptional }) {
            throw StoreError(
                .missingValue, "batch upsert: \(entity.name).\(required.name) is required, and a batch upsert leaves relationships empty",
                entity: entity.name, property: required.name)
        }
        guard !newSlots.isEmpty || !updates.isEmpty else { return nil }
        let relationshipDefaults = entity.newObjectValues[entity.attributes.count...]
        var transient = [Bool](repeating: false, count: types.count)
        for position in entity.transientPositions { transient[position] = true }
        var required = [Bool](repeating: false, count: types.count)
        for position in entity.requiredPositions { required[position] = true }
        let capacity = 16 + newSlots.count * (12 + 12 * entity.propertyCount) + updates.count * 32
        // Per attribute, the column that gives it (nil: its default).
        var columnOf = [Int?](repeating: nil, count: types.count)
        for (column, position) in positions.enumerated() { columnOf[position] = column }
        let defaults = entity.attributeDefaults
        let bytes = try StoreRecord.encodedInserts(insertedIDs, capacity: capacity, updates: updates) { index, writer in
            let slot = slots[newSlots[index]]
            let row = rows[slot.firstRow]
            for position in types.indices {
                if transient[position] {
                    ChangeSetCodec.write(Value.null, &writer)
                    continue
                }
                let value: Value
                if !slot.values.isEmpty {
                    value = slot.values[position]
                } else if let column = columnOf[position], let given = try self.value(row, column, rowIndex: slot.firstRow) {
                    value = given
                } else {
                    value = defaults[position]
                }
                if required[position], case .null = value {
                    let name = entity.attributes[position].name
                    throw StoreError(
                        .missingValue, "batch upsert: \(rowName(slot.firstRow)): \(entity.name).\(name) is required", entity: entity.name,
                        property: name)
                }
                ChangeSetCodec.write(value, &writer)
            }
            for value in relationshipDefaults { ChangeSetCodec.write(value, &writer) }
        }
        return EncodedSave(bytes: bytes, inserted: insertedIDs, updated: updated, deleted: [])
    }
}
