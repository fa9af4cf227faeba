extension StoreError {
    /// A required property left without a value, as every write path words it:
    /// `Entity.property is required`, after `context` (`batch upsert: $[3]`) when given.
    package static func missingValue(_ entity: String, _ property: String, objects: [ObjectID] = [], context: String? = nil) -> StoreError {
        let message = "\(entity).\(property) is required"
        return StoreError(.missingValue, context.map { "\($0): \(message)" } ?? message, entity: entity, property: property, objects: objects)
    }
}
