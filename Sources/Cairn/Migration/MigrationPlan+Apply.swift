import CairnLog
import CairnSupport

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
        if let another = anotherModel(snapshot) { problems.add(another) }
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
        fillInverses(&objects, &problems)
        checkInverses(objects, &problems)
        checkRelationships(objects, &problems)
        var migrated = StoreSnapshot(model: destination)
        // The objects go through the same encoding and checks as a save's change record, so
        // that a value or a relationship target that does not fit the new model (an object of
        // an entity no longer in a relationship's destination family…) is refused here.
        var writer = ByteWriter(capacity: 1 << 16)
        ChangeSetCodec.encode(ChangeSet(inserts: objects.map { ChangeSet.Insert(id: $0.0, values: $0.1) }), into: &writer)
        do {
            let changes = try writer.bytes.withUnsafeBytes { raw in
                var reader = ByteReader(raw, offset: 0)
                return try ChangeSetCodec.decodeRows(&reader, model: destination)
            }
            try migrated.apply(changes, at: lsn)
        } catch  where !problems.isEmpty {
            // A consequence of the problems already listed (a value that does not fit…).
        } catch let problem as EncodingProblem {
            problems.add("the migrated objects do not fit the new model: \(problem.message)")
        } catch {
            problems.add("the migrated objects do not fit the new model: \(error)")
        }
        for clash in migrated.uniquenessClashes() { problems.add(clash) }
        migrated.reserveKeys(below: snapshot.nextKey)
        guard problems.isEmpty else {
            throw StoreError(.cannotMigrate, "the store cannot be migrated to the app's model automatically:\n" + problems.lines.joined(separator: "\n"))
        }
        return migrated
    }

    private func entityMapping(_ index: Int) -> EntityMapping { entities[index] }

    /// A line when the app's model shares no entity with the store's entities that hold objects:
    /// it is a wrong model, not a new version, and migrating would drop every object.
    func anotherModel(_ snapshot: StoreSnapshot) -> String? {
        let held = source.descriptions.indices.filter { snapshot.count(entity: $0, includingSubentities: false) > 0 }
        guard !held.isEmpty && !held.contains(where: { entityMap[$0] != nil }) else { return nil }
        return "the app's model has none of the store's entities that hold objects ("
            + held.map { source.entities[$0].name }.joined(separator: ", ") + "): it is another model, not a new version of this one"
    }

    /// One new value of an object.
    private func value(
        for source: Source, old: [PropertyValue], entity: EntityDescription, position: Int,
        problems: inout ProblemList
    ) -> PropertyValue {
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
            problems.add("attribute \(entity.name).\(attribute.name): values do not fit \(attribute.type)", count: 1, example: "\(value)")
        }
        return .attribute(value)
    }

    /// Fills relationships that are new but whose inverse existed, from the inverse's values.
    /// Positions are per concrete entity: a relationship's position in a row counts all the
    /// entity's attributes, inherited and own, so a sub-entity's is further along.
    private func fillInverses(_ objects: inout [(ObjectID, [PropertyValue])], _ problems: inout ProblemList) {
        let pending = entities.enumerated().flatMap { index, mapping in
            mapping.properties.enumerated().compactMap { position, source -> (Int, Int, Int, Int)? in
                guard case .inverseOf(let holder, let inversePosition) = source else { return nil }
                return (index, position, holder, inversePosition - destination.descriptions[holder].attributes.count)
            }
        }
        guard !pending.isEmpty else { return }
        var slots: [ObjectID: Int] = [:]
        for (slot, object) in objects.enumerated() { slots[object.0] = slot }
        for (entity, position, holder, inverseNumber) in pending {
            let holders = destination.descriptions[holder].family
            var collected: [ObjectID: [ObjectID]] = [:]
            for (id, values) in objects where holders.contains(id.entity) {
                let inversePosition = destination.descriptions[id.entity].attributes.count + inverseNumber
                guard values.indices.contains(inversePosition) else { continue }
                for target in values[inversePosition].targets where target.entity == entity { collected[target, default: []].append(id) }
            }
            let description = destination.descriptions[entity]
            let relationship = description.relationships[position - description.attributes.count]
            for (target, sources) in collected {
                guard let slot = slots[target], objects[slot].1.indices.contains(position) else { continue }
                if !relationship.isToMany && sources.count > 1 {
                    problems.add(
                        "relationship \(description.name).\(relationship.name) is new and to-one, but objects are held by several through its inverse",
                        count: 1)
                }
                objects[slot].1[position] = relationship.isToMany ? .toMany(sources.sorted()) : .toOne(sources.sorted().first)
            }
        }
    }

    /// Every relationship with an inverse agrees with it: each target holds the object back
    /// (inverses paired differently than before, or kept apart before, may not).
    private func checkInverses(_ objects: [(ObjectID, [PropertyValue])], _ problems: inout ProblemList) {
        var values: [ObjectID: [PropertyValue]] = [:]
        for (id, row) in objects { values[id] = row }
        for (id, row) in objects {
            let entity = destination.descriptions[id.entity]
            for (number, inverse) in entity.inverses.enumerated() {
                guard let inverse else { continue }
                for target in row[entity.attributes.count + number].targets {
                    guard let targetRow = values[target] else { continue }
                    let targetEntity = destination.descriptions[target.entity]
                    let back = targetEntity.attributes.count + inverse
                    guard targetRow.indices.contains(back), !targetRow[back].targets.contains(id) else { continue }
                    let relationship = entity.relationships[number]
                    problems.add(
                        "relationship \(entity.name).\(relationship.name) and its inverse \(targetEntity.name).\(relationship.inverse ?? "?") disagree",
                        count: 1)
                }
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

/// Problems found while migrating, each line once with how many objects it concerns and the
/// first value that showed it: a problem met by a thousand objects is one line.
struct ProblemList {
    private var order: [String] = []
    private var counts: [String: Int] = [:]
    private var examples: [String: String] = [:]

    /// Counts `count` more objects under `line`; `example` is kept when it is the first.
    mutating func add(_ line: String, count: Int = 0, example: String? = nil) {
        if counts[line] == nil { order.append(line) }
        counts[line, default: 0] += count
        if let example, examples[line] == nil { examples[line] = example }
    }

    var isEmpty: Bool { order.isEmpty }

    var lines: [String] {
        order.map { line in
            let count = counts[line] ?? 0
            let such = examples[line].map { ", such as \($0)" } ?? ""
            return count > 0 ? "\(line) (\(count) object\(count == 1 ? "" : "s")\(such))" : line
        }
    }
}
