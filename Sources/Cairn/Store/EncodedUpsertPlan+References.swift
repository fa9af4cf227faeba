import CairnSupport

/// What the rows set one reference of one object to.
struct Link {
    /// The object pointed to; an entity below zero: none (the relationship emptied).
    var target: ObjectID
    /// The row that set it; below zero: no row did.
    var row: Int

    static let untouched = Link(target: ObjectID(entity: -1, key: 0), row: -1)

    /// Whether a row set it.
    var isSet: Bool { row >= 0 }
    /// The object pointed to (nil: none).
    var object: ObjectID? { target.entity < 0 ? nil : target }

    init(target: ObjectID, row: Int) {
        self.target = target
        self.row = row
    }

    init(_ object: ObjectID?, row: Int) {
        self.init(target: object ?? ObjectID(entity: -1, key: 0), row: row)
    }
}

/// Per reference, the objects of the keys looked up lately: a small table by the key's hash,
/// one entry a slot. Rows of one object's children come together (a file of tracks, album by
/// album), and a few objects take most references (25 genres for a million tracks): most
/// lookups are answered here, without the uniqueness index.
struct ReferenceLookups {
    private static let slotCount = 1024
    private var keys: [[UInt8]]
    private var found: [ObjectID?]

    init(_ references: [ReferenceColumn]) {
        keys = Array(repeating: [], count: references.count * Self.slotCount)
        found = Array(repeating: nil, count: references.count * Self.slotCount)
    }

    /// The object of the reference's destination (or a sub-entity) holding `key`; nil when none does.
    mutating func holder(_ column: Int, _ reference: ReferenceColumn, key: UnsafeRawBufferPointer, in snapshot: StoreSnapshot) -> ObjectID? {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        let slot = column * Self.slotCount + Int(truncatingIfNeeded: (hash ^ hash >> 29) & UInt64(Self.slotCount - 1))
        if !keys[slot].isEmpty, keys[slot].elementsEqual(key) { return found[slot] }
        var holder = snapshot.holder(encodedValue: key, for: reference.constraint)
        if let id = holder, !reference.destination.family.contains(id.entity) { holder = nil }
        keys[slot] = Array(key)
        found[slot] = holder
        return holder
    }
}

/// The relationships of a new object's stored row: each reference's object, or the default
/// (nothing) for the rest.
struct RelationshipSection {
    /// Per relationship, its reference's number, or the default's encoding.
    private let parts: [Either]

    private enum Either {
        case reference(Int)
        case fixed([UInt8])
    }

    init(_ entity: EntityDescription, _ references: [ReferenceColumn]) {
        parts = entity.relationships.indices.map { index in
            if let column = references.firstIndex(where: { $0.relationship == index }) { return .reference(column) }
            var writer = ByteWriter(capacity: 4)
            ValueEncoding.write(entity.newObjectValues[entity.attributes.count + index], &writer)
            return .fixed(writer.bytes)
        }
    }

    func write(_ links: ArraySlice<Link>, _ writer: inout ByteWriter) {
        for part in parts {
            switch part {
            case .fixed(let bytes): writer.write(bytes: bytes)
            case .reference(let column): ValueEncoding.write(.toOne(links[links.startIndex + column].object), &writer)
            }
        }
    }
}

extension EncodedUpsertPlan {
    /// The links of one slot.
    func slotLinks(_ slot: Int, _ links: [Link]) -> ArraySlice<Link> {
        guard !references.isEmpty else { return [] }
        let first = slot * references.count
        return links[first..<first + references.count]
    }

    /// Applies a row's references to its object's links: a key sets the object holding it, a
    /// null empties the relationship, and a key nothing holds waits in `waiting` (a later row
    /// of the object that sets the relationship takes its place). An existing object is left
    /// alone when the upsert does not update existing objects.
    func link(
        _ row: Int, _ rows: EncodedRows, _ buffer: UnsafeRawBufferPointer, slot: Int, existing: ObjectID?, _ links: inout [Link],
        waiting: inout [Int: Int]?, lookups: inout ReferenceLookups, in snapshot: StoreSnapshot
    ) {
        guard existing == nil || updatesExisting else { return }
        for (column, reference) in references.enumerated() {
            let position = rows.attributeCount + column
            guard rows.isGiven(row, position) else { continue }
            let index = slot * references.count + column
            let key = buffer.piece(rows.range(row, position))
            if ValueEncoding.isNull(key) {
                links[index] = Link(nil, row: row)
            } else if let target = lookups.holder(column, reference, key: key, in: snapshot) {
                links[index] = Link(target, row: row)
            } else {
                waiting?[index] = row
                continue
            }
            if waiting?.isEmpty == false { waiting?[index] = nil }
        }
    }

    /// Hands each key nothing holds to ``unresolved`` in row order (without one, the first
    /// fails the upsert).
    func reportUnresolved(_ waiting: [Int: Int], _ rows: EncodedRows) throws {
        for (index, row) in waiting.sorted(by: { ($0.value, $0.key) < ($1.value, $1.key) }) {
            let column = index % references.count
            guard let unresolved else {
                let reference = references[column]
                let value = rows.withBytes { ValueEncoding.decode($0.piece(rows.range(row, rows.attributeCount + column))) } ?? .null
                throw StoreError(
                    .invalidArgument,
                    "batch upsert: \(rowName(row)): no \(reference.destination.name) holds the key \(value) for \(entity.name).\(reference.name)",
                    entity: entity.name, property: reference.name)
            }
            try unresolved(row, column)
        }
    }

    /// The first required relationship a new object's links leave empty, and the row to blame:
    /// the one that emptied it, or the one that made the object.
    func emptyRequiredRelationship(_ links: ArraySlice<Link>, firstRow: Int) -> (row: Int, name: String, isReference: Bool)? {
        for required in requiredRelationships {
            guard let column = required.reference else { return (firstRow, required.name, false) }
            let link = links[links.startIndex + column]
            if link.object == nil { return (link.isSet ? link.row : firstRow, required.name, true) }
        }
        return nil
    }

    /// The entity's required relationships, each with the number of the reference that sets it
    /// (nil: none does, and a batch upsert leaves it empty).
    static func requiredRelationships(_ entity: EntityDescription, _ references: [ReferenceColumn]) -> [(name: String, reference: Int?)] {
        entity.relationships.indices.compactMap { index in
            guard !entity.relationships[index].isOptional else { return nil }
            return (entity.relationships[index].name, references.firstIndex { $0.relationship == index })
        }
    }

    /// The references that change an existing object (its slot's ``Slot/relinks``), and the
    /// inverse to-manys every reference changes: for each target gained or lost, an update
    /// with its whole new list (sorted, as an unordered to-many is kept).
    func relink(_ slots: inout [Slot], in snapshot: StoreSnapshot) -> [ChangeSet.Update] {
        var updates: [ChangeSet.Update] = []
        let count = references.count
        for column in 0..<count {
            let reference = references[column]
            // Each link that changes an inverse, by target: `targets[group]`, its new and lost objects.
            var groupOf: [ObjectID: Int] = [:]
            var targets: [ObjectID] = []
            var moves: [(group: Int, object: ObjectID, gained: Bool)] = []
            moves.reserveCapacity(slots.count)
            func note(_ target: ObjectID, _ object: ObjectID, gained: Bool) {
                let group: Int
                if let known = groupOf[target] {
                    group = known
                } else {
                    group = targets.count
                    groupOf[target] = group
                    targets.append(target)
                }
                moves.append((group, object, gained))
            }
            for index in slots.indices {
                let link = links[index * count + column]
                guard link.isSet else { continue }
                let target = link.object
                if let existing = slots[index].existing {
                    guard let record = snapshot.record(existing) else { continue }
                    let stored = record.row.withValueBytes(reference.position) { ValueEncoding.decodeProperty($0) }
                    let before: ObjectID? = if case .toOne(let id) = stored { id } else { nil }
                    guard before != target else { continue }
                    slots[index].relinks.append(PropertyChange(position: reference.position, value: .toOne(target)))
                    if reference.inverse != nil, let before { note(before, existing, gained: false) }
                }
                if reference.inverse != nil, let target { note(target, ids[index], gained: true) }
            }
            guard let inverse = reference.inverse, !targets.isEmpty else { continue }
            // The moves grouped by target, in the order made (a counting sort).
            var starts = [Int](repeating: 0, count: targets.count + 1)
            for move in moves { starts[move.group + 1] += 1 }
            for group in targets.indices { starts[group + 1] += starts[group] }
            var next = starts
            var grouped = [(object: ObjectID, gained: Bool)](repeating: (ObjectID(entity: 0, key: 0), false), count: moves.count)
            for move in moves {
                grouped[next[move.group]] = (move.object, move.gained)
                next[move.group] += 1
            }
            for (group, target) in targets.enumerated() {
                guard let record = snapshot.record(target) else { continue }  // (a lost target the store no longer holds has no list)
                let position = snapshot.model.descriptions[target.entity].attributes.count + inverse
                var list = record.row.withValueBytes(position) { ValueEncoding.decodeProperty($0) }.targets
                let changes = grouped[starts[group]..<starts[group + 1]]
                var gone: Set<ObjectID> = []
                list.reserveCapacity(list.count + changes.count)
                for change in changes {
                    if change.gained { list.append(change.object) } else { gone.insert(change.object) }
                }
                if !gone.isEmpty { list.removeAll { gone.contains($0) } }
                list.sort()
                if zip(list, list.dropFirst()).contains(where: { $0 == $1 }) {
                    var unique: [ObjectID] = []
                    unique.reserveCapacity(list.count)
                    for id in list where unique.last != id { unique.append(id) }
                    list = unique
                }
                updates.append(ChangeSet.Update(id: target, changes: [PropertyChange(position: position, value: .toMany(list))]))
            }
        }
        for index in slots.indices where slots[index].relinks.count > 1 { slots[index].relinks.sort { $0.position < $1.position } }
        // One update an object, in ID order (two references may share a target).
        updates.sort { $0.id < $1.id }
        var merged: [ChangeSet.Update] = []
        merged.reserveCapacity(updates.count)
        for update in updates {
            if let last = merged.last, last.id == update.id {
                merged[merged.count - 1].changes = (last.changes + update.changes).sorted { $0.position < $1.position }
            } else {
                merged.append(update)
            }
        }
        return merged
    }
}
