import Cairn

/// One record of the input, read against its entity's mapping: the attribute values it gives
/// (nil: its key is absent), the relationships it gives, and where it is.
struct ImportRecord {
    /// The entity's index in the model.
    var entity: Int
    /// Per resolved attribute: its value, or nil when the record does not give it.
    var values: [Value?]
    /// Per resolved attribute: the rank of the key path that gave the value (lower wins); empty
    /// when no attribute has fallbacks.
    var ranks: [Int]
    /// Per resolved relationship: what the record gives, or nil.
    var relations: [RelationInput?]
    var relationRanks: [Int]
    /// Where the record is (for messages).
    var path: [JSONPath.Step]
    /// Its byte offset in the input.
    var offset: Int

    init(_ entity: ResolvedEntity, path: [JSONPath.Step], offset: Int) {
        self.entity = entity.description.index
        values = Array(repeating: nil, count: entity.attributes.count)
        // Ranks matter only between fallbacks: without any, no array.
        ranks = entity.hasFallbacks ? Array(repeating: .max, count: entity.attributes.count) : []
        relations = Array(repeating: nil, count: entity.relationships.count)
        relationRanks = Array(repeating: .max, count: entity.relationships.count)
        self.path = path
        self.offset = offset
    }
}

/// What a record gives a relationship.
enum RelationInput {
    /// `null`: no related objects.
    case null
    /// Nested records and references by key, in order.
    case items([RelationItem])
}

/// One related object as the input gives it.
enum RelationItem {
    /// A nested object.
    case record(ImportRecord)
    /// A key naming an object (`"author_id": 101`), with where it is.
    case reference(Value, path: [JSONPath.Step], offset: Int)
}
