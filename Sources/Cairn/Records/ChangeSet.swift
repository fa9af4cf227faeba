/// The effect of one save: objects inserted with all their values, objects updated with only
/// the properties that changed, objects deleted. One change set is one log frame.
///
/// Change sets are complete: when a relationship changes, the objects at both ends appear
/// (inverses are kept in step by the context before saving), so replay applies them as they are.
struct ChangeSet: Sendable, Equatable {
    struct Insert: Sendable, Equatable {
        var id: ObjectID
        /// One value per property, attributes then relationships.
        var values: [PropertyValue]
    }

    struct Update: Sendable, Equatable {
        var id: ObjectID
        /// Changed properties by position, in increasing position order.
        var changes: [PropertyChange]
    }

    var inserts: [Insert] = []
    var updates: [Update] = []
    var deletes: [ObjectID] = []

    var isEmpty: Bool { inserts.isEmpty && updates.isEmpty && deletes.isEmpty }
}

/// One changed property: its position in the entity (attributes then relationships) and value.
struct PropertyChange: Sendable, Equatable {
    var position: Int
    var value: PropertyValue
}
