extension MigrationPlan {
    /// What running this plan on `snapshot` would lose or change, one line per entity or
    /// property with the number of objects concerned: an entity removed while it holds objects;
    /// a stored attribute removed (or made transient) while objects hold values in it; a
    /// relationship removed while objects hold links in it and its inverse is not kept either;
    /// an ordered relationship made unordered while objects hold more than one link in it; an
    /// integer attribute narrowed to a smaller type (refused whatever the values: the store
    /// was written for the wider one). Empty when the plan keeps everything the store holds.
    ///
    /// A step the app did not declare (a store or app model that is not among its versions,
    /// typically an older build of the app opening a newer store) runs only when this is empty,
    /// unless the app opts in with ``StoreOptions/allowsMigrationThatDropsData``.
    func losses(in snapshot: StoreSnapshot) -> [String] {
        if let another = anotherModel(snapshot) { return [another] }
        var losses = ProblemList()
        for (oldIndex, newIndex) in entityMap.enumerated() {
            let old = source.descriptions[oldIndex]
            let count = snapshot.count(entity: oldIndex, includingSubentities: false)
            guard let newIndex else {
                if count > 0 { losses.add("entity \(old.name) is not in the app's model: its objects would be dropped", count: count) }
                continue
            }
            for line in narrowings(old: old, new: newIndex) { losses.add(line) }
            let checks = objectChecks(old: old, new: newIndex)
            guard count > 0, !checks.isEmpty else { continue }
            // One pass over the entity's objects for every check.
            var holding = [Int](repeating: 0, count: checks.count)
            for id in snapshot.ids(entity: oldIndex, includingSubentities: false) {
                guard let values = snapshot.record(id)?.values else { continue }
                for (number, check) in checks.enumerated() where values.indices.contains(check.position) && check.loses(values[check.position]) {
                    holding[number] += 1
                }
            }
            for (check, objects) in zip(checks, holding) where objects > 0 { losses.add(check.line, count: objects) }
        }
        return losses.lines
    }

    /// A question asked of each object's old value at one position: whether the step loses or
    /// changes it.
    private struct ObjectCheck {
        var position: Int
        var line: String
        var loses: (PropertyValue) -> Bool
    }

    /// The checks of the old entity's objects for the new entity `newIndex`.
    private func objectChecks(old: EntityDescription, new newIndex: Int) -> [ObjectCheck] {
        let new = destination.descriptions[newIndex]
        var kept: [Int: Int] = [:]  // old position → new position
        for (position, source) in entities[newIndex].properties.enumerated() {
            if case .property(let oldPosition) = source { kept[oldPosition] = position }
        }
        var checks: [ObjectCheck] = []
        for (position, attribute) in old.attributes.enumerated() where !attribute.isTransient && kept[position] == nil {
            checks.append(
                ObjectCheck(
                    position: position,
                    line: "attribute \(old.name).\(attribute.name) is not a stored attribute of the app's model: its values would be dropped"
                ) {
                    if case .attribute(let value) = $0 { return value != .null }
                    return false
                })
        }
        for (number, relationship) in old.relationships.enumerated() {
            let position = old.attributes.count + number
            guard let newPosition = kept[position] else {
                if !inverseIsKept(of: old, number) {
                    checks.append(
                        ObjectCheck(
                            position: position,
                            line: "relationship \(old.name).\(relationship.name) is not in the app's model (nor its inverse): its links would be dropped"
                        ) { !$0.targets.isEmpty })
                }
                continue
            }
            let now = new.relationships[newPosition - new.attributes.count]
            if relationship.isOrdered && !now.isOrdered {
                checks.append(
                    ObjectCheck(
                        position: position, line: "relationship \(new.name).\(now.name) would no longer be ordered: the order of its objects would be lost"
                    ) {
                        $0.targets.count > 1
                    })
            }
        }
        return checks
    }

    /// Whether the inverse of the old entity's relationship `number` is carried into the new
    /// model: the links then survive on the other side.
    private func inverseIsKept(of old: EntityDescription, _ number: Int) -> Bool {
        guard let inverse = old.inverses[number] else { return false }
        let holder = old.destinations[number]
        guard entityMap.indices.contains(holder), let newHolder = entityMap[holder] else { return false }
        let position = source.descriptions[holder].attributes.count + inverse
        return entities[newHolder].properties.contains(.property(position))
    }

    /// A line per integer attribute of the old entity that the new entity `newIndex` keeps with a
    /// narrower integer type.
    private func narrowings(old: EntityDescription, new newIndex: Int) -> [String] {
        let new = destination.descriptions[newIndex]
        return entities[newIndex].properties.enumerated().compactMap { newPosition, source in
            guard case .property(let position) = source, position < old.attributes.count, newPosition < new.attributes.count else { return nil }
            let before = old.attributes[position].type, after = new.attributes[newPosition].type
            guard let wide = before.integerRange, let narrow = after.integerRange,
                narrow.lowerBound > wide.lowerBound || narrow.upperBound < wide.upperBound
            else { return nil }
            return "attribute \(new.name).\(new.attributes[newPosition].name) would narrow from \(before) to \(after)"
        }
    }
}
