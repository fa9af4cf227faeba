import Cairn

extension MappingResolver {
    /// The unique key: declared, else userInfo, then the same of each ancestor (nearest first),
    /// else the model's first uniqueness constraint (its own or inherited), else an `<entity>ID`
    /// attribute when a library that guesses it is read. `scope`: the entity whose family the
    /// key is unique across.
    func resolveIdentity(
        _ entity: EntityDescription, _ all: [String: EntityMapping]
    ) throws(MappingError) -> (
        positions: [Int], source: String, scope: Int
    ) {
        let name = entity.name
        func positions(_ names: [String], _ source: String) throws(MappingError) -> [Int] {
            try names.map { attribute throws(MappingError) in
                guard let position = entity.attributePosition(attribute) else {
                    throw MappingError(
                        .unknownName, "the \(source) of \(name) names \(attribute) as its unique key, and \(name) has no attribute \(attribute)",
                        entity: name, property: attribute)
                }
                if entity.attributes[position].isTransient {
                    throw MappingError(.invalidMapping, "the unique key of \(name) cannot be \(attribute): it is transient", entity: name, property: attribute)
                }
                return position
            }
        }
        for holder in ancestry(entity) {
            let inherited = holder.index == entity.index ? "" : " of \(holder.name)"
            if let names = all[holder.name]?.identity { return (try positions(names, "mapping\(inherited)"), "declared\(inherited)", holder.index) }
            // Attributes marked as keys count in the entity that declares them.
            let attributes = holder.attributes.map { (name: $0.name, userInfo: $0.userInfo) }
            if let names = conventions.identity(holder.entity.userInfo, attributes: attributes) {
                return (try positions(names, "userInfo\(inherited)"), "userInfo\(inherited)", holder.index)
            }
        }
        if let constraint = entity.uniqueness.first { return (constraint.positions, "uniqueness constraint", constraint.owner) }
        if conventions.guessesEntityIDKey {
            let guess = name.prefix(1).lowercased() + name.dropFirst() + "ID"
            if let position = entity.attributes.firstIndex(where: { $0.name == guess || $0.name == name + "ID" }), !entity.attributes[position].isTransient {
                return ([position], "the <entity>ID convention", entity.index)
            }
        }
        return ([], "none", entity.index)
    }
}
