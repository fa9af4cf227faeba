extension EntityDescription {
    /// The position of relationship number `index` among the entity's properties: the place of
    /// its value in ``ObjectContext/propertyValues(of:)`` and in stored rows (attributes come
    /// first, then relationships).
    package func propertyPosition(ofRelationship index: Int) -> Int { attributes.count + index }

    /// The position among the entity's properties of the attribute or relationship named `name`.
    package func propertyPosition(_ name: String) -> Int? {
        attributePosition(name) ?? relationshipPosition(name).map(propertyPosition(ofRelationship:))
    }
}
