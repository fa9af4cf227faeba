extension ModelResolver {
    /// Each entity's attributes (composites expanded) and relationships, inherited ones first,
    /// checked; and for each relationship, the entity that declares it.
    func flatten(_ parents: [Int?]) throws(ModelError) -> (attributes: [[Attribute]], relationships: [[Relationship]], owners: [[Int]]) {
        var attributes: [[Attribute]] = []
        var relationships: [[Relationship]] = []
        var owners: [[Int]] = []
        var storedTotal = 0
        for index in entities.indices {
            var names: Set<String> = []
            var ownAttributes: [Attribute] = []
            var ownRelationships: [Relationship] = []
            var ownOwners: [Int] = []
            for ancestor in Self.chain(index, parents) {
                let entity = entities[ancestor]
                for declared in entity.attributes {
                    try checkName(declared.name, entity: entities[index].name, &names)
                    ownAttributes += try checkedAttributes(declared, declaredBy: entity, holder: entities[index], storedTotal: &storedTotal)
                }
                for relationship in entity.relationships {
                    try checkName(relationship.name, entity: entities[index].name, &names)
                    ownRelationships.append(relationship)
                    ownOwners.append(ancestor)
                }
            }
            attributes.append(ownAttributes)
            relationships.append(ownRelationships)
            owners.append(ownOwners)
        }
        return (attributes, relationships, owners)
    }

    /// The attributes `declared` stands for in `holder` (a composite's elements, else itself),
    /// each checked; `storedTotal` counts the attributes of every entity so far, inherited ones
    /// and composite elements included, and may not pass ``Model/maximumAttributeCount``.
    private func checkedAttributes(
        _ declared: Attribute, declaredBy entity: Entity, holder: Entity, storedTotal: inout Int
    ) throws(ModelError) -> [Attribute] {
        let expanded = try declared.expanded(composites, entity: entity.name)
        storedTotal += expanded.count
        guard storedTotal <= Model.maximumAttributeCount else {
            throw ModelError(
                .invalidFormat,
                "the model's entities hold more than \(Model.maximumAttributeCount) attributes, inherited ones and composite elements counted in each entity",
                entity: holder.name)
        }
        for attribute in expanded {
            try checkDefault(attribute, entity: entity.name)
            if attribute.type == .undefined && !attribute.isTransient {
                throw ModelError(
                    .unsupportedType,
                    "an undefined attribute holds any value, which Cairn cannot store: only a transient one is allowed",
                    entity: entity.name, property: attribute.name)
            }
        }
        return expanded
    }

    private func checkName(_ name: String, entity: String, _ names: inout Set<String>) throws(ModelError) {
        guard Model.isValidName(name) else {
            throw ModelError(.invalidName, "property name \(Model.shown(name)) is not valid", entity: entity, property: Model.clipped(name))
        }
        guard names.insert(name).inserted else {
            throw ModelError(.duplicateName, "two properties are named \(name) (inherited ones included)", entity: entity, property: name)
        }
    }

    private func checkDefault(_ attribute: Attribute, entity: String) throws(ModelError) {
        if attribute.type == .undefined, attribute.defaultValue != nil {
            throw ModelError(.invalidDefault, "an undefined attribute takes no default", entity: entity, property: attribute.name)
        }
        var finite = true
        if case .double(let number)? = attribute.defaultValue { finite = number.isFinite }
        if case .float(let number)? = attribute.defaultValue { finite = number.isFinite }
        guard finite else {
            throw ModelError(
                .invalidDefault, "default \(attribute.defaultValue?.description ?? "") is not a finite number", entity: entity, property: attribute.name)
        }
        guard let value = attribute.defaultValue, !value.fits(attribute.type) else { return }
        throw ModelError(
            .invalidDefault, "default \(value) (\(value.typeName)) does not fit type \(attribute.type)",
            entity: entity, property: attribute.name)
    }
}
