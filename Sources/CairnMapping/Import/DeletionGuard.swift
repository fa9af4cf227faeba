import Cairn

/// Decides which objects an import may delete: an object a relationship gave up goes only when
/// the mapping says so (``RelationshipPolicy/mergeAndPrune``, or ``RelationshipPolicy/replace``
/// of a relationship whose delete rule is cascade) of a relationship that owns its objects (a
/// to-one inverse), and only when nothing else holds it: deleting it would take it from no other
/// object, and take nothing from another object through the objects it owns.
///
/// The objects an object owns are walked with a list of objects still to look at, never by
/// recursion: a chain of owned objects may be as long as the store is large.
///
/// Objects held through relationships without an inverse (which the held object cannot see) are
/// found in a table, target → (holder, relationship), made when first needed for a relationship
/// by one fetch of the entity that declares it, read through the context (unsaved changes
/// included). The table may name too many holders, never too few:
/// - it is made from what the context holds when it is made;
/// - the import's context is its own (a background context read at one snapshot until it saves)
///   and changes only through its ``ImportSession`` (the after-import hook, which changes it
///   directly, runs before any deletion, and the table is forgotten after it:
///   ``forgetHolders()``), which reports every relationship it sets
///   (``relationshipSet(_:_:to:from:)``): the objects a relationship without an inverse gains are
///   added to the table;
/// - a link taken away (a relationship set to fewer objects, a holder deleted) leaves its entry,
///   and an entry counts only when the holder, as the context sees it now, still holds the
///   object through that relationship.
/// So each answer is the one a fetch of every holder would give, without the fetch.
final class DeletionGuard {
    let model: Model
    let context: ObjectContext
    /// Per entity index: the relationships without an inverse that may hold its objects. Made
    /// when first asked.
    private var inverseless: [Int: [HoldingRelationship]] = [:]
    /// Per object: the objects that hold it, or held it, through a relationship without an
    /// inverse of ``tabled`` (a superset of those that hold it now).
    private var holders: [ObjectID: [Hold]] = [:]
    /// The relationships without an inverse whose links ``holders`` lists.
    private var tabled: Set<HoldingRelationship> = []

    /// Forgets the table of holders (made again from the context when next needed): after the
    /// context was changed otherwise than through the session.
    func forgetHolders() {
        holders = [:]
        tabled = []
    }

    /// A relationship without an inverse, by the entity that declares it (a fetch of it includes
    /// its sub-entities, which inherit it at the same index).
    private struct HoldingRelationship: Hashable {
        var entity: Int
        var relationship: Int
    }

    /// An object holding another through relationship `relationship` of its entity.
    private struct Hold {
        var holder: ObjectID
        var relationship: Int
    }

    /// An object whose relationships are being looked at: the walk's stand-in for a frame of
    /// recursion.
    private struct Visit {
        let id: ObjectID
        /// The object it was reached from, and the inverse (in this object) through which that
        /// one owns it.
        let owner: (id: ObjectID, inverse: Int)?
        let values: [PropertyValue]
        /// The next relationship to look at.
        var relationship = 0
        /// The owned objects of the relationship being looked at, the next one to visit, and
        /// their inverse.
        var owned: [ObjectID] = []
        var nextOwned = 0
        var ownedInverse = 0
    }

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
    ///
    /// A walk, depth first, of the objects it owns: each is looked at once (`visited`), and a link
    /// to an object already looked at holds nothing.
    func isHeldElsewhere(_ id: ObjectID, besides owner: (id: ObjectID, inverse: Int)?) throws -> Bool {
        var visited: Set<ObjectID> = []
        guard let first = visit(id, besides: owner, &visited) else { return false }
        var path = [first]
        while let top = path.indices.last {
            if path[top].nextOwned < path[top].owned.count {
                // An object it owns goes with it: it must be held by nothing else either.
                let target = path[top].owned[path[top].nextOwned]
                path[top].nextOwned += 1
                if let next = visit(target, besides: (path[top].id, path[top].ownedInverse), &visited) { path.append(next) }
                continue
            }
            let entity = model.descriptions[path[top].id.entity]
            if path[top].relationship < entity.relationships.count {
                let index = path[top].relationship
                path[top].relationship += 1
                let position = entity.propertyPosition(ofRelationship: index)
                guard position < path[top].values.count else { continue }
                let owner = path[top].owner
                let targets = path[top].values[position].targets.filter { target in
                    !(owner?.inverse == index && owner?.id == target) && !visited.contains(target)
                }
                guard !targets.isEmpty else { continue }
                guard let inverse = ownedInverse(entity, entity.relationships[index]) else { return true }
                path[top].owned = targets
                path[top].nextOwned = 0
                path[top].ownedInverse = inverse
                continue
            }
            if try isHeldWithoutInverse(path[top].id, visited: visited) { return true }
            path.removeLast()
        }
        return false
    }

    /// Starts looking at an object; nil when it was looked at already or does not exist.
    private func visit(_ id: ObjectID, besides owner: (id: ObjectID, inverse: Int)?, _ visited: inout Set<ObjectID>) -> Visit? {
        guard visited.insert(id).inserted, let values = context.propertyValues(of: id) else { return nil }
        return Visit(id: id, owner: owner, values: values)
    }

    /// The index of the to-one inverse of a cascading relationship (objects `entity` owns and
    /// takes with it when deleted); nil otherwise.
    private func ownedInverse(_ entity: EntityDescription, _ relationship: Relationship) -> Int? {
        guard relationship.deleteRule == .cascade, let inverseName = relationship.inverse, let destination = model.entity(named: relationship.destination),
            let inverse = destination.relationshipPosition(inverseName), !destination.relationships[inverse].isToMany
        else { return nil }
        return inverse
    }

    /// Whether an object outside `visited` holds `id` through a relationship without an inverse,
    /// as the context sees it now.
    private func isHeldWithoutInverse(_ id: ObjectID, visited: Set<ObjectID>) throws -> Bool {
        let relationships = relationshipsWithoutInverse(to: id.entity)
        guard !relationships.isEmpty else { return false }
        try table(relationships)
        for hold in holders[id] ?? [] where !visited.contains(hold.holder) {
            guard let values = context.propertyValues(of: hold.holder) else { continue }
            let position = model.descriptions[hold.holder.entity].propertyPosition(ofRelationship: hold.relationship)
            if position < values.count, values[position].targets.contains(id) { return true }
        }
        return false
    }

    /// Adds the links of `relationships` not yet tabled to ``holders``: one fetch of each
    /// declaring entity, its objects' values read through the context.
    private func table(_ relationships: [HoldingRelationship]) throws {
        for relationship in relationships where !tabled.contains(relationship) {
            var found: [(target: ObjectID, hold: Hold)] = []
            for holder in try context.fetchIDs(FetchRequest(model.descriptions[relationship.entity].name)) {
                guard let values = context.propertyValues(of: holder) else { continue }
                let position = model.descriptions[holder.entity].propertyPosition(ofRelationship: relationship.relationship)
                guard position < values.count else { continue }
                for target in values[position].targets { found.append((target, Hold(holder: holder, relationship: relationship.relationship))) }
            }
            // Tabled only once whole: a fetch that fails leaves the relationship to table again.
            for (target, hold) in found { holders[target, default: []].append(hold) }
            tabled.insert(relationship)
        }
    }

    /// Tells the guard that the import set relationship `index` of `holder` to `targets` (it held
    /// `previous`): what keeps ``holders`` from missing a link. Every relationship the import
    /// sets must be reported.
    func relationshipSet(_ holder: ObjectID, _ index: Int, to targets: [ObjectID], from previous: [ObjectID]) {
        let entity = model.descriptions[holder.entity]
        guard index < entity.relationships.count, entity.relationships[index].inverse == nil,
            tabled.contains(HoldingRelationship(entity: declaring(index, of: holder.entity), relationship: index))
        else { return }
        let before = Set(previous)
        for target in targets where !before.contains(target) { holders[target, default: []].append(Hold(holder: holder, relationship: index)) }
    }

    /// The entity that declares relationship `index` of `entity` (itself, or the ancestor it
    /// inherits the relationship from).
    private func declaring(_ index: Int, of entity: Int) -> Int {
        var declaring = entity
        while let parent = model.descriptions[declaring].parentIndex, index < model.descriptions[parent].relationships.count { declaring = parent }
        return declaring
    }

    /// The relationships without an inverse whose destination's family includes the entity at
    /// `entityIndex`, each by the entity that declares it.
    private func relationshipsWithoutInverse(to entityIndex: Int) -> [HoldingRelationship] {
        if let known = inverseless[entityIndex] { return known }
        var found: [HoldingRelationship] = []
        for entity in model.descriptions {
            for (index, relationship) in entity.relationships.enumerated() where relationship.inverse == nil {
                // Inherited relationships are found through the entity that declares them.
                if let parent = entity.parentIndex, index < model.descriptions[parent].relationships.count { continue }
                if model.entity(named: relationship.destination)?.family.contains(entityIndex) == true {
                    found.append(HoldingRelationship(entity: entity.index, relationship: index))
                }
            }
        }
        inverseless[entityIndex] = found
        return found
    }
}
