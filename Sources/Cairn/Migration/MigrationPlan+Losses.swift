extension MigrationPlan {
    /// What running this plan on `snapshot` would lose, one line per entity or property with
    /// the number of objects concerned: an entity removed while it holds objects, a stored
    /// attribute removed (or made transient) while objects hold values in it, a relationship
    /// removed while objects hold links in it and its inverse is not kept either, and an integer
    /// attribute narrowed to a smaller type (refused whatever the values: the store was written
    /// for the wider one). Empty when the plan keeps everything the store holds.
    ///
    /// A store opened with a model that is not among the app's versions (typically an older
    /// build of the app opening a newer store) is migrated only when this is empty, unless the
    /// app opts in with ``StoreOptions/allowsMigrationThatDropsData``.
    func losses(in snapshot: StoreSnapshot) -> [String] {
        var losses = ProblemList()
        if let another = anotherModel(snapshot) { return [another] }
        for (oldIndex, newIndex) in entityMap.enumerated() {
            let old = source.descriptions[oldIndex]
            let count = snapshot.count(entity: oldIndex, includingSubentities: false)
            guard let newIndex else {
                if count > 0 { losses.add("entity \(old.name) is not in the app's model: its objects would be dropped", count: count) }
                continue
            }
            let kept = keptPositions(newIndex)
            for (position, attribute) in old.attributes.enumerated() where !attribute.isTransient {
                if let narrowed = narrowing(old: old, position: position, new: newIndex) {
                    losses.add(narrowed)
                }
                guard !kept.contains(position), count > 0 else { continue }
                let holding = objects(of: oldIndex, in: snapshot) { values in
                    if values.indices.contains(position), case .attribute(let value) = values[position], value != .null { return true }
                    return false
                }
                if holding > 0 { losses.add("attribute \(old.name).\(attribute.name) is not in the app's model: its values would be dropped", count: holding) }
            }
            for (number, relationship) in old.relationships.enumerated() {
                let position = old.attributes.count + number
                guard !kept.contains(position), count > 0, !inverseIsKept(of: old, number) else { continue }
                let holding = objects(of: oldIndex, in: snapshot) { values in
                    values.indices.contains(position) && !values[position].targets.isEmpty
                }
                if holding > 0 {
                    losses.add(
                        "relationship \(old.name).\(relationship.name) is not in the app's model (nor its inverse): its links would be dropped",
                        count: holding)
                }
            }
        }
        return losses.lines
    }

    /// The old entity's positions that the new entity `newIndex` takes values from.
    private func keptPositions(_ newIndex: Int) -> Set<Int> {
        var kept = Set<Int>()
        for source in entities[newIndex].properties { if case .property(let position) = source { kept.insert(position) } }
        return kept
    }

    /// Whether the inverse of the old entity's relationship `number` is carried into the new
    /// model: the links then survive on the other side.
    private func inverseIsKept(of old: EntityDescription, _ number: Int) -> Bool {
        guard let inverse = old.inverses[number] else { return false }
        let holder = old.destinations[number]
        guard entityMap.indices.contains(holder), let newHolder = entityMap[holder] else { return false }
        return keptPositions(newHolder).contains(source.descriptions[holder].attributes.count + inverse)
    }

    /// A line when the new model keeps the old attribute at `position` with a narrower integer
    /// type.
    private func narrowing(old: EntityDescription, position: Int, new newIndex: Int) -> String? {
        let new = destination.descriptions[newIndex]
        guard let newPosition = entities[newIndex].properties.firstIndex(of: .property(position)),
            newPosition < new.attributes.count
        else { return nil }
        let before = old.attributes[position].type, after = new.attributes[newPosition].type
        guard let wide = before.integerRange, let narrow = after.integerRange,
            narrow.lowerBound > wide.lowerBound || narrow.upperBound < wide.upperBound
        else { return nil }
        return "attribute \(new.name).\(new.attributes[newPosition].name) would narrow from \(before) to \(after)"
    }

    /// How many objects of exactly the old entity `entity` satisfy `holds`.
    private func objects(of entity: Int, in snapshot: StoreSnapshot, where holds: ([PropertyValue]) -> Bool) -> Int {
        var count = 0
        for id in snapshot.ids(entity: entity, includingSubentities: false) {
            guard let values = snapshot.record(id)?.values else { continue }
            if holds(values) { count += 1 }
        }
        return count
    }
}
