import CairnLog

extension MigrationPlan {
    /// The objects of `snapshot` (written with ``source``) as a snapshot of ``destination`` at
    /// `lsn`: every object carried over, new properties filled, removed ones dropped.
    ///
    /// - Throws: ``StoreError/Code/cannotMigrate`` listing every change that cannot be inferred
    ///   and every way the data breaks the new model (a nil where a value is now required, a
    ///   value that no longer fits, a new uniqueness constraint two objects break…).
    func migrate(_ snapshot: StoreSnapshot, at lsn: LSN) throws(StoreError) -> StoreSnapshot {
        var problems = ProblemList()
        for line in refusals { problems.add(line) }
        var objects: [(ObjectID, [PropertyValue])] = []
        for (oldIndex, newIndex) in entityMap.enumerated() {
            guard let newIndex else { continue }
            let entity = destination.descriptions[newIndex]
            let ids = snapshot.ids(entity: oldIndex, includingSubentities: false)
            if entity.isAbstract && !ids.isEmpty {
                problems.add("\(entity.name) is now abstract but holds objects", count: ids.count)
            }
            for id in ids {
                guard let record = snapshot.record(id) else { continue }
                let old = record.values
                let values = entityMapping(newIndex).properties.enumerated().map { position, source in
                    value(for: source, old: old, entity: entity, position: position, problems: &problems)
                }
                objects.append((ObjectID(entity: newIndex, key: id.key), values))
            }
        }
        fillInverses(&objects)
        checkRelationships(objects, &problems)
        var migrated = StoreSnapshot(model: destination)
        var changes = RowChangeSet()
        changes.inserts.reserveCapacity(objects.count)
        for (id, values) in objects {
            var writer = ByteWriter(capacity: 64)
            for value in values { ChangeSetCodec.write(value, &writer) }
            changes.inserts.append(.init(id: id, row: writer.bytes.withUnsafeBytes { Row.make(count: values.count, bytes: $0) }))
        }
        do {
            try migrated.apply(changes, at: lsn)
        } catch {
            problems.add("the migrated objects do not fit together: \(error)")
        }
        for clash in migrated.uniquenessClashes() { problems.add(clash) }
        migrated.reserveKeys(below: snapshot.nextKey)
        guard problems.isEmpty else {
            throw StoreError(.cannotMigrate, "the store cannot be migrated to the app's model automatically:\n" + problems.lines.joined(separator: "\n"))
        }
        return migrated
    }

    private func entityMapping(_ index: Int) -> EntityMapping { entities[index] }

    /// One new value of an object.
    private func value(for source: Source, old: [PropertyValue], entity: EntityDescription, position: Int,
                       problems: inout ProblemList) -> PropertyValue {
        let attributeCount = entity.attributes.count
        guard position < attributeCount else {
            let relationship = entity.relationships[position - attributeCount]
            guard case .property(let oldPosition) = source, oldPosition < old.count else {
                return relationship.isToMany ? .toMany([]) : .toOne(nil)
            }
            let targets = old[oldPosition].targets.compactMap { target in
                entityMap.indices.contains(target.entity) ? entityMap[target.entity].map { ObjectID(entity: $0, key: target.key) } : nil
            }
            guard relationship.isToMany else {
                if targets.count > 1 {
                    problems.add("relationship \(entity.name).\(relationship.name) is now to-one but objects hold more than one object", count: 1)
                }
                return .toOne(targets.first)
            }
            return .toMany(relationship.isOrdered ? targets : targets.sorted())
        }
        let attribute = entity.attributes[position]
        var value: Value
        switch source {
        case .property(let oldPosition):
            guard oldPosition < old.count, case .attribute(let oldValue) = old[oldPosition] else { return .attribute(.null) }
            value = oldValue
        case .constant(let constant): value = constant
        case .inverseOf, .empty: value = .null
        }
        if value == .null, !attribute.isOptional, !attribute.isTransient {
            if let fallback = attribute.defaultValue {
                value = fallback
            } else {
                problems.add("attribute \(entity.name).\(attribute.name) is required and has no default, but objects have no value", count: 1)
            }
        }
        if !value.fits(attribute.type) {
            problems.add("attribute \(entity.name).\(attribute.name): values do not fit \(attribute.type) (such as \(value))", count: 1)
        }
        return .attribute(value)
    }

    /// Fills relationships that are new but whose inverse existed, from the inverse's values.
    private func fillInverses(_ objects: inout [(ObjectID, [PropertyValue])]) {
        let pending = entities.enumerated().flatMap { index, mapping in
            mapping.properties.enumerated().compactMap { position, source -> (Int, Int, Int, Int)? in
                guard case .inverseOf(let holder, let inversePosition) = source else { return nil }
                return (index, position, holder, inversePosition)
            }
        }
        guard !pending.isEmpty else { return }
        var slots: [ObjectID: Int] = [:]
        for (slot, object) in objects.enumerated() { slots[object.0] = slot }
        for (entity, position, holder, inversePosition) in pending {
            var collected: [ObjectID: [ObjectID]] = [:]
            for (id, values) in objects where id.entity == holder || destination.descriptions[holder].descendants.contains(id.entity) {
                for target in values[inversePosition].targets { collected[target, default: []].append(id) }
            }
            let toMany = destination.descriptions[entity].relationships[position - destination.descriptions[entity].attributes.count].isToMany
            for (target, holders) in collected {
                guard let slot = slots[target], objects[slot].1.indices.contains(position) else { continue }
                objects[slot].1[position] = toMany ? .toMany(holders.sorted()) : .toOne(holders.sorted().first)
            }
        }
    }

    /// Required relationships and counts.
    private func checkRelationships(_ objects: [(ObjectID, [PropertyValue])], _ problems: inout ProblemList) {
        for (id, values) in objects {
            let entity = destination.descriptions[id.entity]
            for (number, relationship) in entity.relationships.enumerated() {
                let count = values[entity.attributes.count + number].targets.count
                let minimum = relationship.isToMany ? relationship.minimumCount ?? 0 : 0
                if count == 0 && (!relationship.isOptional || minimum > 0) {
                    problems.add("relationship \(entity.name).\(relationship.name) is required, but objects have none", count: 1)
                } else if count > 0 && (count < minimum || count > (relationship.maximumCount ?? Int.max)) && relationship.isToMany {
                    let bounds = "\(minimum)…\(relationship.maximumCount.map(String.init) ?? "any")"
                    problems.add("relationship \(entity.name).\(relationship.name) allows \(bounds) objects, but objects hold fewer or more", count: 1)
                }
            }
        }
    }
}

/// Problems found while migrating, each line once with how many objects it concerns.
struct ProblemList {
    private var order: [String] = []
    private var counts: [String: Int] = [:]

    mutating func add(_ line: String, count: Int = 0) {
        if counts[line] == nil { order.append(line) }
        counts[line, default: 0] += count
    }

    var isEmpty: Bool { order.isEmpty }

    var lines: [String] {
        order.map { line in
            let count = counts[line] ?? 0
            return count > 0 ? "\(line) (\(count) object\(count == 1 ? "" : "s"))" : line
        }
    }
}
