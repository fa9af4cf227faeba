import CairnSupport

/// A to-one relationship that a batch upsert's rows set by the unique key of the object it is
/// to point to (the JSON mapper's references by key, `"album": 12`): the row's value after the
/// attributes holds the key, encoded as the destination's key attribute stores it, or null to
/// empty the relationship. The upsert finds the object holding the key through the
/// destination's uniqueness index and keeps the inverse to-many in step.
package struct EncodedReference: Sendable, Hashable {
    /// The relationship's index among the entity's relationships.
    package let relationship: Int
    /// The position of the destination's attribute the key is a value of (a uniqueness
    /// constraint of that attribute alone finds the object).
    package let keyPosition: Int

    /// A reference of relationship `relationship` by the destination attribute at `keyPosition`.
    package init(relationship: Int, keyPosition: Int) {
        self.relationship = relationship
        self.keyPosition = keyPosition
    }

    /// Why a batch upsert cannot set `relationship` of `entity` by key (nil: it can): it sets a
    /// to-one relationship to an entity outside the upserted entity's family, found by a
    /// uniqueness constraint of one attribute, whose inverse (if any) is an optional unordered
    /// to-many without count bounds, kept in step by adding and removing (a save checks nothing
    /// of it). Anything else (a one-to-one, an ordered, bounded or required inverse, a
    /// self-reference whose target may be among the rows) goes through a context, which knows
    /// those rules.
    package static func refusal(_ relationship: Int, keyPosition: Int, of entity: EntityDescription, in model: Model) -> String? {
        guard relationship >= 0, relationship < entity.relationships.count else { return "\(entity.name) has no relationship \(relationship)" }
        let declared = entity.relationships[relationship]
        guard !declared.isToMany else { return "\(entity.name).\(declared.name) is to-many" }
        let destination = model.descriptions[entity.destinations[relationship]]
        guard destination.family.isDisjoint(with: entity.family) else {
            return "\(entity.name).\(declared.name) points into \(entity.name)'s own family"
        }
        guard keyPosition >= 0, keyPosition < destination.attributes.count, destination.uniqueness(coveringExactly: [keyPosition]) != nil else {
            return "no uniqueness constraint of one attribute finds a \(destination.name) by the key"
        }
        if let inverse = entity.inverses[relationship] {
            let back = destination.relationships[inverse]
            guard back.cardinality == .toMany(ordered: false), back.isOptional, back.minimumCount == nil, back.maximumCount == nil else {
                return "the inverse \(destination.name).\(back.name) is not an optional, unbounded, unordered to-many"
            }
        }
        return nil
    }
}

/// An ``EncodedReference`` checked against the model, with what the upsert needs of it (a
/// class: read for every row, and a struct of it would be copied, its references retained).
final class ReferenceColumn {
    /// The relationship's index among the entity's relationships, and its property position.
    let relationship: Int
    let position: Int
    let name: String
    let isOptional: Bool
    let destination: EntityDescription
    let constraint: UniquenessConstraint
    /// The inverse to-many's index among the destination's relationships (the same in each of
    /// its sub-entities, which list inherited relationships first); nil: none.
    let inverse: Int?

    init(
        relationship: Int, position: Int, name: String, isOptional: Bool, destination: EntityDescription, constraint: UniquenessConstraint,
        inverse: Int?
    ) {
        self.relationship = relationship
        self.position = position
        self.name = name
        self.isOptional = isOptional
        self.destination = destination
        self.constraint = constraint
        self.inverse = inverse
    }

    /// The columns of `references` for upserting `entity`.
    ///
    /// - Throws: ``StoreError/Code/invalidArgument`` for a reference ``EncodedReference/refusal(_:keyPosition:of:in:)`` refuses.
    static func resolve(_ references: [EncodedReference], of entity: EntityDescription, in model: Model) throws -> [ReferenceColumn] {
        var seen: Set<Int> = []
        return try references.map { reference in
            if let why = EncodedReference.refusal(reference.relationship, keyPosition: reference.keyPosition, of: entity, in: model) {
                throw StoreError(.invalidArgument, "batch upsert: a reference by key: \(why)", entity: entity.name)
            }
            guard seen.insert(reference.relationship).inserted else {
                throw StoreError(.invalidArgument, "batch upsert: a relationship given twice as a reference", entity: entity.name)
            }
            let declared = entity.relationships[reference.relationship]
            let destination = model.descriptions[entity.destinations[reference.relationship]]
            guard let constraint = destination.uniqueness(coveringExactly: [reference.keyPosition]) else {
                throw StoreError(.invalidArgument, "batch upsert: no uniqueness constraint finds a \(destination.name) by the key", entity: entity.name)
            }
            return ReferenceColumn(
                relationship: reference.relationship, position: entity.propertyPosition(ofRelationship: reference.relationship), name: declared.name,
                isOptional: declared.isOptional, destination: destination, constraint: constraint, inverse: entity.inverses[reference.relationship])
        }
    }
}
