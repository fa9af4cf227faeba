extension Model {
    /// The uniqueness keys of an object's values: one per constraint whose values are all non-nil.
    func uniqueKeys(entity: Int, values: [PropertyValue]) -> [UniqueKey] {
        descriptions[entity].uniqueness.compactMap { constraint in
            var key: [Value] = []
            key.reserveCapacity(constraint.positions.count)
            for position in constraint.positions {
                guard case .attribute(let value) = values[position], value != .null else { return nil }
                key.append(value)
            }
            return UniqueKey(owner: constraint.owner, number: constraint.number, values: key)
        }
    }
}
