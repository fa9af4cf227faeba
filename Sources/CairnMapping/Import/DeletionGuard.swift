import Cairn

/// Decides which objects an import may delete: an object a relationship gave up goes only when
/// the mapping says so (``RelationshipPolicy/mergeAndPrune``, or ``RelationshipPolicy/replace``
/// of a relationship whose delete rule is cascade) of a relationship that owns its objects (a
/// to-one inverse), and only when nothing else holds it: deleting it would take it from no other
/// object, and take nothing from another object through the objects it owns.
final class DeletionGuard {
    let model: Model
    let context: ObjectContext
    /// Per entity index: the relationships without an inverse that may hold its objects, as
    /// (entity index, relationship index). Made when first asked.
    private var inverseless: [Int: [(entity: Int, relationship: Int)]] = [:]

    init(model: Model, context: ObjectContext) {
        self.model = model
        self.context = context
    }

    /// The index, in the destination, of the to-one inverse through which `relationship` (of
    /// `ownerEntity`) owns its objects, when its policy prunes what it gives up; nil when the
    /// import may not delete what it gives up.
    func prunedInverse(of relationship: ResolvedRelationship, in ownerEntity: Int) -> Int? {
        let declared = model.descriptions[ownerEntity].relationships[relationship.index]
        let prunes = relationship.policy == .mergeAndPrune || (relationship.policy == .replace && declared.deleteRule == .cascade)
        guard prunes, let inverseName = declared.inverse else { return nil }
        let destination = model.descriptions[relationship.destination]
        guard let inverse = destination.relationshipPosition(inverseName), !destination.relationships[inverse].isToMany else { return nil }
        return inverse
    }

    /// Whether an object is held by another object than `owner` (which holds it through the
    /// relationship whose inverse, in the object, is `inverse`), directly or through an object
    /// it owns (cascade, to-one inverse) and would take with it.
    func isHeldElsewhere(_ id: ObjectID, besides owner: (id: ObjectID, inverse: Int)?) throws -> Bool {
        var visited: Set<ObjectID> = []
        return try isHeld(id, besides: owner, visited: &visited)
    }

    private func isHeld(_ id: ObjectID, besides owner: (id: ObjectID, inverse: Int)?, visited: inout Set<ObjectID>) throws -> Bool {
        guard visited.insert(id).inserted, let values = context.propertyValues(of: id) else { return false }
        let entity = model.descriptions[id.entity]
        for (index, relationship) in entity.relationships.enumerated() {
            let position = entity.attributes.count + index
            guard position < values.count else { continue }
            let targets = values[position].targets.filter { target in !(owner?.inverse == index && owner?.id == target) && !visited.contains(target) }
            guard !targets.isEmpty else { continue }
            guard let inverse = ownedInverse(entity, relationship) else { return true }
            // Objects it owns go with it: they must be held by nothing else either.
            for target in targets where try isHeld(target, besides: (id, inverse), visited: &visited) { return true }
        }
        return try isHeldWithoutInverse(id, visited: visited)
    }

    /// The index of the to-one inverse of a cascading relationship (objects `entity` owns and
    /// takes with it when deleted); nil otherwise.
    private func ownedInverse(_ entity: EntityDescription, _ relationship: Relationship) -> Int? {
        guard relationship.deleteRule == .cascade, let inverseName = relationship.inverse, let destination = model.entity(named: relationship.destination),
            let inverse = destination.relationshipPosition(inverseName), !destination.relationships[inverse].isToMany
        else { return nil }
        return inverse
    }

    /// Whether an object outside `visited` holds `id` through a relationship without an inverse
    /// (one pass over the entities that have one to `id`'s entity).
    private func isHeldWithoutInverse(_ id: ObjectID, visited: Set<ObjectID>) throws -> Bool {
        for (entityIndex, relationshipIndex) in holdersWithoutInverse(of: id.entity) {
            for holder in try context.fetchIDs(FetchRequest(model.descriptions[entityIndex].name)) where !visited.contains(holder) {
                guard let values = context.propertyValues(of: holder) else { continue }
                let position = model.descriptions[holder.entity].attributes.count + relationshipIndex
                if position < values.count, values[position].targets.contains(id) { return true }
            }
        }
        return false
    }

    private func holdersWithoutInverse(of entityIndex: Int) -> [(entity: Int, relationship: Int)] {
        if let known = inverseless[entityIndex] { return known }
        var found: [(entity: Int, relationship: Int)] = []
        for entity in model.descriptions {
            for (index, relationship) in entity.relationships.enumerated() where relationship.inverse == nil {
                // Inherited relationships are found through the entity that declares them (a
                // fetch of it includes its sub-entities).
                if let parent = entity.parentIndex, index < model.descriptions[parent].relationships.count { continue }
                if model.entity(named: relationship.destination)?.family.contains(entityIndex) == true { found.append((entity.index, index)) }
            }
        }
        inverseless[entityIndex] = found
        return found
    }
}
