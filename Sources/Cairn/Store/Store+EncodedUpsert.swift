import CairnSupport

extension Store {
    /// ``batchUpsert(_:key:columns:rows:updatesExisting:)`` of rows already encoded (the JSON
    /// mapper's flat records): the same lookups, merging and checks, without a ``Value`` for
    /// anything but the values that change an existing object. `key` holds attribute positions.
    ///
    /// `invalidRow` is given each row that would leave its object as a save refuses it (a
    /// required value missing, a required relationship empty) with the problem: the row that
    /// set the offending value, or, for a value a new object never got, the row that made the
    /// object; rows in order. It throws to fail the whole upsert, or returns to leave the row
    /// out: the object is then worked out again from its other rows (checked again, which may
    /// leave out another), and a new object whose first row is left out is not made, nor are
    /// its other rows applied. An object no row is left for is not in the result. Without it,
    /// such a row fails the upsert with a ``StoreError``.
    ///
    /// `references` are the to-one relationships the rows set by key, in the order of their
    /// values after the attributes (``EncodedReference``). A key no object of the destination
    /// holds is given to `unresolved` (the row, the reference's number) once the rows are read,
    /// in row order: it throws to fail the upsert, or returns to leave the relationship as the
    /// object's earlier rows, or the store, had it. Without it, such a key fails the upsert.
    package func batchUpsert(
        _ entityName: String, key: [Int], rows: EncodedRows, references: [EncodedReference] = [], updatesExisting: Bool,
        rowName: @escaping (Int) -> String, invalidRow: ((Int, StoreError) throws -> Void)? = nil, unresolved: ((Int, Int) throws -> Void)? = nil
    ) async throws -> BatchUpsertResult {
        let entity = try insertableEntity(entityName)
        guard rows.referenceCount == references.count else {
            throw StoreError(
                .invalidArgument, "batch upsert: rows of \(rows.referenceCount) references for \(references.count) references", entity: entity.name)
        }
        let columns = try ReferenceColumn.resolve(references, of: entity, in: model)
        guard rows.attributeCount == entity.attributes.count else {
            throw StoreError(
                .invalidArgument, "batch upsert: rows of \(rows.attributeCount) values for \(entity.name)'s \(entity.attributes.count) attributes",
                entity: entity.name)
        }
        for position in key {
            guard position >= 0, position < entity.attributes.count else {
                throw StoreError(.invalidArgument, "batch upsert: \(entity.name) has no attribute at position \(position)", entity: entity.name)
            }
            let attribute = entity.attributes[position]
            guard !attribute.isTransient else {
                throw StoreError(
                    .invalidArgument, "batch upsert: key \(attribute.name) is transient: it is never stored", entity: entity.name, property: attribute.name)
            }
        }
        var plan = EncodedUpsertPlan(
            entity: entity, keyPositions: key, updatesExisting: updatesExisting, rowName: rowName, invalidRow: invalidRow, references: columns,
            unresolved: unresolved)
        _ = try await commitRecord { accepted in
            try plan.resolve(rows, against: accepted, reserve: reserveKeys)
            return try plan.encodedSave(rows)
        }
        return plan.result
    }
}

/// A batch upsert of encoded rows, worked out against the accepted state.
struct EncodedUpsertPlan {
    let entity: EntityDescription
    let keyPositions: [Int]
    let updatesExisting: Bool
    let rowName: (Int) -> String
    private let invalidRow: ((Int, StoreError) throws -> Void)?
    private let constraint: UniquenessConstraint?
    /// Per constraint position, its place among the key positions.
    private let constraintOrder: [Int]
    /// Whether the constraint lists its attributes in the key's order (the usual case).
    private let constraintInKeyOrder: Bool

    /// The to-one relationships the rows set by key, in the order of their values.
    let references: [ReferenceColumn]
    let unresolved: ((Int, Int) throws -> Void)?
    /// The entity's required relationships (``requiredRelationships(_:_:)``).
    let requiredRelationships: [(name: String, reference: Int?)]

    /// One object the rows name.
    struct Slot {
        var existing: ObjectID?
        var firstRow: Int
        /// New object named by several rows: per attribute, the row whose value it takes. Empty
        /// otherwise (every value from the first row).
        var sources: [Int] = []
        /// Existing object: per changed attribute, the row whose value it takes.
        var changes: [Int: Int] = [:]
        /// Existing object: the references that point it elsewhere.
        var relinks: [PropertyChange] = []
    }

    private var slots: [Slot] = []
    private(set) var ids: [ObjectID] = []
    private var insertedIDs: [ObjectID] = []
    /// What the rows set each reference to: `references.count` links a slot, slot after slot.
    private(set) var links: [Link] = []
    /// The inverse to-manys the references change, each target's whole new list.
    private var inverseUpdates: [ChangeSet.Update] = []
    private(set) var result = BatchUpsertResult(ids: [], outcomes: [])

    init(
        entity: EntityDescription, keyPositions: [Int], updatesExisting: Bool, rowName: @escaping (Int) -> String,
        invalidRow: ((Int, StoreError) throws -> Void)? = nil, references: [ReferenceColumn] = [], unresolved: ((Int, Int) throws -> Void)? = nil
    ) {
        self.references = references
        self.unresolved = unresolved
        requiredRelationships = Self.requiredRelationships(entity, references)
        self.entity = entity
        self.keyPositions = keyPositions
        self.updatesExisting = updatesExisting
        self.rowName = rowName
        self.invalidRow = invalidRow
        let constraint = entity.uniqueness(coveringExactly: keyPositions)
        self.constraint = constraint
        constraintOrder = constraint.map { constraint in constraint.positions.compactMap { keyPositions.firstIndex(of: $0) } } ?? []
        constraintInKeyOrder = constraintOrder == Array(constraintOrder.indices)
    }

    mutating func resolve(_ rows: EncodedRows, against accepted: StoreSnapshot, reserve: (Int) throws -> Range<UInt64>) throws {
        var slots: [Slot] = []
        var slotOfRow: [Int] = []
        slots.reserveCapacity(rows.count)
        slotOfRow.reserveCapacity(rows.count)
        var slotOfKey = ByteKeyTable(capacity: keyPositions.isEmpty ? 0 : rows.count)
        var scanned: [[UInt8]: ObjectID]?
        var keyBytes = ByteWriter(capacity: 64)
        var parts: [UnsafeRawBufferPointer] = []  // the key's values, reused from row to row
        parts.reserveCapacity(keyPositions.count)
        var links: [Link] = []
        links.reserveCapacity(references.isEmpty ? 0 : rows.count * references.count)
        var waiting: [Int: Int]? = references.isEmpty ? nil : [:]
        var lookups = ReferenceLookups(references)
        try rows.withBytes { buffer in
            for row in 0..<rows.count {
                var slot: Int
                if keyPositions.isEmpty {
                    slot = slots.count
                    slots.append(Slot(existing: nil, firstRow: row))
                } else {
                    keyBytes.removeAll()
                    parts.removeAll(keepingCapacity: true)
                    for position in keyPositions {
                        let value = buffer.piece(rows.range(row, position))
                        guard rows.isGiven(row, position), !ValueEncoding.isNull(value) else {
                            let name = entity.attributes[position].name
                            throw StoreError(
                                .missingValue, "batch upsert: \(rowName(row)) has no value for \(entity.name).\(name), its key", entity: entity.name,
                                property: name)
                        }
                        keyBytes.write(bytes: value)
                        parts.append(value)
                    }
                    if let known = keyBytes.bytes.withUnsafeBytes({ slotOfKey.value($0) }) {
                        slot = known
                    } else {
                        let existing = try holder(parts, keyBytes.bytes, row: row, in: accepted, scanned: &scanned)
                        slot = slots.count
                        slots.append(Slot(existing: existing, firstRow: row))
                        keyBytes.bytes.withUnsafeBytes { slotOfKey.insert($0, slot) }
                    }
                }
                slotOfRow.append(slot)
                apply(row, rows, buffer, to: &slots[slot], in: accepted)
                if !references.isEmpty {
                    if links.count < slots.count * references.count { links.append(contentsOf: repeatElement(Link.untouched, count: references.count)) }
                    link(row, rows, buffer, slot: slot, existing: slots[slot].existing, &links, waiting: &waiting, lookups: &lookups, in: accepted)
                }
            }
        }
        if let waiting, !waiting.isEmpty { try reportUnresolved(waiting, rows) }
        if invalidRow != nil { try leaveOutInvalid(&slots, &slotOfRow, &links, rows, lookups: &lookups, in: accepted) }
        let newCount = slots.reduce(0) { $0 + ($1.existing == nil ? 1 : 0) }
        var keys = try reserve(newCount).makeIterator()
        ids = []
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
        self.links = links
        if !references.isEmpty { inverseUpdates = relink(&slots, in: accepted) }
        let outcomes: [UpsertOutcome] = slots.map { $0.existing == nil ? .inserted : ($0.changes.isEmpty && $0.relinks.isEmpty ? .unchanged : .updated) }
        let listed = slotOfRow.filter { $0 >= 0 }  // rows left out have none
        result = BatchUpsertResult(ids: listed.map { ids[$0] }, outcomes: listed.map { outcomes[$0] })
        result.inserted = outcomes.count { $0 == .inserted }
        result.updated = outcomes.count { $0 == .updated }
        result.unchanged = outcomes.count { $0 == .unchanged }
        self.slots = slots
    }

    /// Hands each row that leaves its object as a save refuses it to ``invalidRow`` (first the
    /// first such row of each object, in row order; then, object by object, those found once
    /// the rows before were left out), and leaves out the rows it returns for: their slot
    /// becomes -1, and so does every row of an object left out whole (a new object whose first
    /// row goes, an object no row is left for).
    private func leaveOutInvalid(
        _ slots: inout [Slot], _ slotOfRow: inout [Int], _ links: inout [Link], _ rows: EncodedRows, lookups: inout ReferenceLookups,
        in snapshot: StoreSnapshot
    ) throws {
        guard let invalidRow else { return }
        var problems: [(row: Int, slot: Int, problem: StoreError)] = []
        rows.withBytes { buffer in
            for (index, slot) in slots.enumerated() {
                if let found = problem(slot, slotLinks(index, links), rows, buffer, in: snapshot) { problems.append((found.row, index, found.problem)) }
            }
        }
        guard !problems.isEmpty else { return }
        problems.sort { $0.row < $1.row }
        for found in problems { try invalidRow(found.row, found.problem) }
        // The rows of each object with a problem, in order.
        var rowsOf: [Int: [Int]] = [:]
        for found in problems { rowsOf[found.slot] = [] }
        for (row, slot) in slotOfRow.enumerated() where rowsOf[slot] != nil { rowsOf[slot, default: []].append(row) }
        var leftOutRows = Set<Int>()
        var leftOutSlots = Set<Int>()
        for found in problems {
            var culprit = found.row
            while true {
                if slots[found.slot].existing == nil && culprit == slots[found.slot].firstRow {
                    leftOutSlots.insert(found.slot)
                    break
                }
                leftOutRows.insert(culprit)
                let remaining = (rowsOf[found.slot] ?? []).filter { !leftOutRows.contains($0) }
                guard !remaining.isEmpty else {
                    leftOutSlots.insert(found.slot)
                    break
                }
                let again = rows.withBytes { buffer -> (row: Int, problem: StoreError)? in
                    var slot = Slot(
                        existing: slots[found.slot].existing, firstRow: slots[found.slot].existing == nil ? slots[found.slot].firstRow : remaining[0])
                    var none: [Int: Int]?
                    let first = found.slot * references.count
                    for column in references.indices { links[first + column] = .untouched }
                    for row in remaining {
                        apply(row, rows, buffer, to: &slot, in: snapshot)
                        link(row, rows, buffer, slot: found.slot, existing: slot.existing, &links, waiting: &none, lookups: &lookups, in: snapshot)
                    }
                    slots[found.slot] = slot
                    return problem(slot, slotLinks(found.slot, links), rows, buffer, in: snapshot)
                }
                guard let again else { break }
                try invalidRow(again.row, again.problem)
                culprit = again.row
            }
        }
        var renumbered: [Int] = []
        var kept: [Slot] = []
        var keptLinks: [Link] = []
        for (index, slot) in slots.enumerated() {
            renumbered.append(leftOutSlots.contains(index) ? -1 : kept.count)
            if !leftOutSlots.contains(index) {
                kept.append(slot)
                keptLinks.append(contentsOf: slotLinks(index, links))
            }
        }
        slots = kept
        links = keptLinks
        slotOfRow = slotOfRow.enumerated().map { row, slot in leftOutRows.contains(row) ? -1 : renumbered[slot] }
    }

    /// What a save would refuse in the object a slot makes or changes, and the row that causes
    /// it: a required attribute null, a required relationship a new object gets no object for
    /// (a batch upsert leaves those that are not references empty), or one a reference empties.
    private func problem(
        _ slot: Slot, _ links: ArraySlice<Link>, _ rows: EncodedRows, _ buffer: UnsafeRawBufferPointer, in snapshot: StoreSnapshot
    ) -> (row: Int, problem: StoreError)? {
        if slot.existing == nil {
            for position in entity.requiredPositions {
                let row = slot.sources.isEmpty ? slot.firstRow : slot.sources[position]
                if ValueEncoding.isNull(buffer.piece(rows.range(row, position))) { return (row, missing(entity.attributes[position].name)) }
            }
            if let empty = emptyRequiredRelationship(links, firstRow: slot.firstRow) { return (empty.row, missing(empty.name)) }
            return nil
        }
        for (position, row) in slot.changes.sorted(by: { $0.key < $1.key }) where entity.isRequired[position] {
            if ValueEncoding.isNull(buffer.piece(rows.range(row, position))) { return (row, missing(entity.attributes[position].name)) }
        }
        // A required relationship emptied (one already empty changes nothing).
        for (column, link) in zip(references, links) where !column.isOptional && link.isSet && link.object == nil {
            if let id = slot.existing, let record = snapshot.record(id),
                case .toOne(nil) = record.row.withValueBytes(column.position, { ValueEncoding.decodeProperty($0) })
            {
                continue
            }
            return (link.row, missing(column.name))
        }
        return nil
    }

    func missing(_ property: String) -> StoreError {
        StoreError.missingValue(entity.name, property)
    }

    /// The saved object holding the key (of this entity's family: a sibling's is refused).
    private func holder(
        _ parts: [UnsafeRawBufferPointer], _ bytes: [UInt8], row: Int, in snapshot: StoreSnapshot, scanned: inout [[UInt8]: ObjectID]?
    ) throws -> ObjectID? {
        if let constraint {
            let ordered = constraintInKeyOrder ? parts : constraintOrder.map { parts[$0] }
            guard let holder = snapshot.holder(encoded: ordered, for: constraint) else { return nil }
            guard entity.family.contains(holder.entity) else {
                let names = keyPositions.map { entity.attributes[$0].name }.joined(separator: ", ")
                throw StoreError(
                    .uniquenessViolation, "batch upsert: \(rowName(row)): a \(snapshot.model.descriptions[holder.entity].name) already has this \(names)",
                    entity: entity.name, objects: [holder])
            }
            return holder
        }
        if scanned == nil {
            var table: [[UInt8]: ObjectID] = [:]
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
    func apply(_ row: Int, _ rows: EncodedRows, _ buffer: UnsafeRawBufferPointer, to slot: inout Slot, in snapshot: StoreSnapshot) {
        if slot.existing == nil {
            guard row != slot.firstRow else { return }
            if slot.sources.isEmpty { slot.sources = Array(repeating: slot.firstRow, count: entity.attributes.count) }
            for position in 0..<entity.attributes.count where rows.isGiven(row, position) { slot.sources[position] = row }
            return
        }
        guard updatesExisting, let id = slot.existing, let record = snapshot.record(id) else { return }
        for position in 0..<entity.attributes.count where rows.isGiven(row, position) && !entity.attributes[position].isTransient {
            let given = buffer.piece(rows.range(row, position))
            if record.row.withValueBytes(position, { RowBytes.same($0, given) }) {
                slot.changes[position] = nil
            } else {
                slot.changes[position] = row
            }
        }
    }

    /// The change record: new objects copied from their rows, changed values decoded; nil when
    /// nothing changes.
    func encodedSave(_ rows: EncodedRows) throws -> EncodedSave? {
        var updates: [ChangeSet.Update] = []
        var newSlots: [Int] = []
        try rows.withBytes { buffer in
            for (index, slot) in slots.enumerated() {
                guard slot.existing != nil else {
                    newSlots.append(index)
                    continue
                }
                guard !slot.changes.isEmpty || !slot.relinks.isEmpty else { continue }
                var changes: [PropertyChange] = []
                for (position, row) in slot.changes.sorted(by: { $0.key < $1.key }) {
                    let value = ValueEncoding.decode(buffer.piece(rows.range(row, position))) ?? .null
                    if value == .null && !entity.attributes[position].isOptional {
                        throw StoreError.missingValue(
                            entity.name, entity.attributes[position].name, objects: [ids[index]], context: "batch upsert: \(rowName(row))")
                    }
                    changes.append(PropertyChange(position: position, value: .attribute(value)))
                }
                for change in slot.relinks where change.value == .toOne(nil) {
                    let relationship = entity.relationships[change.position - entity.attributes.count]
                    guard relationship.isOptional else {
                        throw StoreError.missingValue(entity.name, relationship.name, objects: [ids[index]], context: "batch upsert: \(rowName(slot.firstRow))")
                    }
                }
                changes += slot.relinks  // relationships: after every attribute
                updates.append(ChangeSet.Update(id: ids[index], changes: changes))
            }
        }
        for index in newSlots {
            if let empty = emptyRequiredRelationship(slotLinks(index, links), firstRow: slots[index].firstRow) {
                guard empty.isReference else {
                    throw StoreError(
                        .missingValue, "batch upsert: \(entity.name).\(empty.name) is required, and a batch upsert leaves relationships empty",
                        entity: entity.name, property: empty.name)
                }
                throw StoreError.missingValue(entity.name, empty.name, context: "batch upsert: \(rowName(empty.row))")
            }
        }
        updates += inverseUpdates
        guard !newSlots.isEmpty || !updates.isEmpty else { return nil }
        var relationshipDefaults = ByteWriter(capacity: 16)
        for value in entity.newObjectValues[entity.attributes.count...] { ValueEncoding.write(value, &relationshipDefaults) }
        let relationshipSection = RelationshipSection(entity, references)
        let count = entity.attributes.count
        var transient = [Bool](repeating: false, count: count)
        for position in entity.transientPositions { transient[position] = true }
        let required = entity.requiredPositions
        let simple = !transient.contains(true)
        let capacity = 16 + rows.withBytes { $0.count } + newSlots.count * (12 + relationshipDefaults.count) + updates.count * 32
        let transaction = TransactionInfo.now()
        let bytes = try rows.withBytes { buffer in
            try StoreRecord.encodedInserts(insertedIDs, capacity: capacity, updates: updates, transaction: transaction) { index, writer in
                let slot = slots[newSlots[index]]
                for position in required {
                    let row = slot.sources.isEmpty ? slot.firstRow : slot.sources[position]
                    if ValueEncoding.isNull(buffer.piece(rows.range(row, position))) {
                        throw StoreError.missingValue(entity.name, entity.attributes[position].name, context: "batch upsert: \(rowName(row))")
                    }
                }
                if slot.sources.isEmpty && simple {
                    writer.write(bytes: buffer.piece(rows.rowRange(slot.firstRow)))
                } else {
                    for position in 0..<count {
                        if transient[position] {
                            ValueEncoding.writeNull(&writer)
                        } else {
                            let row = slot.sources.isEmpty ? slot.firstRow : slot.sources[position]
                            writer.write(bytes: buffer.piece(rows.range(row, position)))
                        }
                    }
                }
                if references.isEmpty {
                    writer.write(bytes: relationshipDefaults.bytes)
                } else {
                    relationshipSection.write(slotLinks(newSlots[index], links), &writer)
                }
            }
        }
        return EncodedSave(
            bytes: bytes, inserted: insertedIDs, updated: updates.map { ($0.id, $0.changes.map(\.position)) }, deleted: [], transaction: transaction)
    }
}
