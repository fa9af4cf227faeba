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
    /// Whether the record was given as its key alone (`[1, 2, 3]` as records): it names an
    /// object, which exists, or which ``ImportOptions/insertsMissingReferences`` makes.
    var isKeyOnly = false

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
    /// Nested records and references by key, in order; `complete` is false when a lenient read
    /// set one aside (the relationship is then left as it is).
    case items([RelationItem], complete: Bool)
}

/// One related object as the input gives it.
enum RelationItem {
    /// A nested object.
    case record(ImportRecord)
    /// A key naming an object (`"author_id": 101`), with where it is.
    case reference(Value, path: [JSONPath.Step], offset: Int)
}

extension ImportRecord {
    /// The record's values of its entity's unique key; nil when one is absent or null (or the
    /// entity has no key).
    func key(_ entity: ResolvedEntity) -> [Value]? {
        guard !entity.identity.isEmpty else { return nil }
        var key: [Value] = []
        key.reserveCapacity(entity.identity.count)
        for position in entity.identity {
            guard let index = entity.attributes.firstIndex(where: { $0.position == position }), let value = values[index], value != .null else {
                return nil
            }
            key.append(value)
        }
        return key
    }

    /// The error (strict) or warning (lenient) for a record without its unique key.
    func missingKey(_ entity: ResolvedEntity) -> (error: MappingError, warning: ImportWarning) {
        let missing =
            entity.identity.first { position in
                guard let index = entity.attributes.firstIndex(where: { $0.position == position }), let value = values[index] else { return true }
                return value == .null
            } ?? entity.identity.first ?? 0
        return Self.missingKey(entity, position: missing, path: path, offset: offset)
    }

    /// The error (strict) or warning (lenient) for a record at `path` without the value of
    /// attribute `position`, part of its entity's unique key.
    static func missingKey(_ entity: ResolvedEntity, position: Int, path: [JSONPath.Step], offset: Int) -> (error: MappingError, warning: ImportWarning) {
        let name = entity.description.attributes[position].name
        let message = "the record has no value for \(entity.name).\(name), its unique key"
        let place = JSONPath.text(path)
        return (
            MappingError(.missingKey, message, entity: entity.name, property: name, path: place, offset: offset),
            ImportWarning(path: place, message: message + "; record skipped")
        )
    }
}

extension RelationItem {
    /// The error (strict) for a reference by key of `entity`'s `relationship` whose key does
    /// not fit `key`, the destination attribute it is a value of.
    static func misfitKey(
        _ misfit: ValueReader.Misfit, _ entity: ResolvedEntity, _ relationship: ResolvedRelationship, _ destination: ResolvedEntity,
        key: ResolvedAttribute, path: String, offset: Int
    ) -> MappingError {
        MappingError(
            misfit.code, "a reference to \(destination.name) by \(key.name): \(misfit.message)", entity: entity.name, property: relationship.name,
            path: path, offset: offset)
    }

    /// The error (strict) or warning (lenient) for a reference by key of `entity`'s
    /// `relationship` that no object of `destination` holds, in the store or in the input.
    static func unresolved(
        _ key: Value, _ entity: ResolvedEntity, _ relationship: ResolvedRelationship, _ destination: ResolvedEntity, path: [JSONPath.Step],
        offset: Int
    ) -> (error: MappingError, warning: ImportWarning) {
        let message = "no \(destination.name) has the key \(key)"
        let place = JSONPath.text(path)
        return (
            MappingError(
                .unresolvedReference, message + ", in the store or in the input", entity: entity.name, property: relationship.name, path: place,
                offset: offset),
            ImportWarning(path: place, message: message + "; the relationship is left as it is")
        )
    }
}
