import Cairn

/// What each record of an import changed: kept so that what the save would refuse names the
/// record that caused it, and so that a lenient import undoes exactly the changes of a record it
/// skips.
///
/// A unit is a record (top-level or nested), or one relationship a record sets (an assignment,
/// whose nested records are its children). Per attribute of an object the log keeps each unit's
/// change (the value it found the first time, the last value it wrote), per link between two
/// objects whether each unit made or broke it, and the objects each unit inserted. Writes a unit
/// makes to an object it inserted itself are not kept: undoing the unit removes the object.
final class ImportUndoLog {
    /// A record, or a relationship (of an entity, by index) a record sets.
    enum Kind {
        case record
        case assignment(entity: Int, relationship: Int)
    }

    struct Unit {
        let kind: Kind
        let path: [JSONPath.Step]
        let offset: Int
        /// The unit it is part of: a record's relationship's record, a nested record's relationship.
        let parent: Int?
        var children: [Int] = []
        var inserted: [ObjectID] = []
        var attributes: [Slot] = []
        var links: [Link] = []
        /// Ordered relationships it set, whose order undoing it puts back.
        var orders: [Slot] = []
        var skipped = false
    }

    /// A property of one object, by position.
    struct Slot: Hashable {
        let object: ObjectID
        let position: Int
    }

    /// A link between two objects through a relationship (by index); with an inverse, named from
    /// the side that sorts first, so that both sides name it alike.
    struct Link: Hashable, Comparable {
        let object: ObjectID
        let relationship: Int
        let target: ObjectID

        static func < (a: Link, b: Link) -> Bool { (a.object, a.relationship, a.target) < (b.object, b.relationship, b.target) }
    }

    /// One unit's change of a value: what it found first, what it left.
    private struct Change<Value> {
        let unit: Int
        let before: Value
        var after: Value
    }

    let context: ObjectContext
    let model: Model
    private(set) var units: [Unit] = []
    /// The unit changes are recorded in; nil: none (changes go unrecorded).
    private(set) var current: Int?
    private var attributeChanges: [Slot: [Change<Value>]] = [:]
    private var linkChanges: [Link: [Change<Bool>]] = [:]
    private var orderChanges: [Slot: [Change<[ObjectID]>]] = [:]
    /// Per relationship of an object: the units that made or broke a link of it, in order.
    private var relationshipChangers: [Slot: [Int]] = [:]
    private var inserter: [ObjectID: Int] = [:]
    /// Told of every relationship undoing sets: the object, the relationship's index, what it
    /// holds now, what it held.
    var relationshipSet: ((ObjectID, Int, [ObjectID], [ObjectID]) -> Void)?

    init(context: ObjectContext, model: Model) {
        self.context = context
        self.model = model
    }

    // MARK: Recording

    /// Starts a unit, part of `parent`.
    func begin(_ kind: Kind, path: [JSONPath.Step], offset: Int, parent: Int?) -> Int {
        let index = units.count
        units.append(Unit(kind: kind, path: path, offset: offset, parent: parent))
        if let parent { units[parent].children.append(index) }
        return index
    }

    /// Runs `body` recording its changes in `unit`.
    func within<T>(_ unit: Int, _ body: () throws -> T) rethrows -> T {
        let outer = current
        current = unit
        defer { current = outer }
        return try body()
    }

    func isSkipped(_ unit: Int) -> Bool { units[unit].skipped }

    /// Whether a record was skipped.
    private(set) var hasSkipped = false

    /// The record a unit belongs to: itself, or the record whose relationship it sets.
    func record(of unit: Int) -> Int {
        if case .assignment = units[unit].kind, let parent = units[unit].parent { return parent }
        return unit
    }

    /// Notes an object the current unit inserted.
    func inserted(_ id: ObjectID) {
        guard let current else { return }
        inserter[id] = current
        units[current].inserted.append(id)
    }

    /// Sets an attribute (holding `old`) to `value`.
    func setAttribute(_ id: ObjectID, _ position: Int, _ value: Value, old: Value) throws {
        try context.setAttribute(id, position, value)
        note(Slot(object: id, position: position), before: old, after: value)
    }

    /// Notes that the current unit gave an attribute the value it holds: a later record setting
    /// it again owns it. Kept only where an earlier record of the import set it or made the object.
    func claim(_ id: ObjectID, _ position: Int, _ value: Value) {
        let slot = Slot(object: id, position: position)
        guard attributeChanges[slot] != nil || inserter[id].map({ $0 != current }) == true else { return }
        note(slot, before: value, after: value)
    }

    private func note(_ slot: Slot, before: Value, after: Value) {
        guard let unit = current, inserter[slot.object] != unit else { return }
        if let last = attributeChanges[slot].map({ $0.count - 1 }), last >= 0, attributeChanges[slot]?[last].unit == unit {
            attributeChanges[slot]?[last].after = after
            return
        }
        attributeChanges[slot, default: []].append(Change(unit: unit, before: before, after: after))
        units[unit].attributes.append(slot)
    }

    /// Sets relationship `index` of an object to `targets` (inverses kept in step), noting every
    /// link made or broken, on both sides.
    func setRelationship(_ id: ObjectID, _ index: Int, to targets: [ObjectID]) throws {
        let entity = model.descriptions[id.entity]
        let old = context.propertyValues(of: id)?[entity.propertyPosition(ofRelationship: index)].targets ?? []
        var new: [ObjectID] = []
        var newSet = Set<ObjectID>(minimumCapacity: targets.count)
        for target in targets where newSet.insert(target).inserted { new.append(target) }
        let oldSet = Set(old)
        // A target whose to-one inverse holds another object is taken from it.
        var taken: [(target: ObjectID, inverse: Int, holder: ObjectID)] = []
        for target in new where !oldSet.contains(target) {
            guard let inverse = inverseIndex(id.entity, index, target.entity), !model.descriptions[target.entity].relationships[inverse].isToMany,
                let holder = context.propertyValues(of: target)?[model.descriptions[target.entity].propertyPosition(ofRelationship: inverse)].targets.first,
                holder != id
            else { continue }
            taken.append((target, inverse, holder))
        }
        try context.setRelationship(id, index, to: new)
        if entity.relationships[index].isOrdered, let unit = current {
            let slot = Slot(object: id, position: entity.propertyPosition(ofRelationship: index))
            let now = self.targets(id, index) ?? new
            if let last = orderChanges[slot].map({ $0.count - 1 }), last >= 0, orderChanges[slot]?[last].unit == unit {
                orderChanges[slot]?[last].after = now
            } else {
                orderChanges[slot, default: []].append(Change(unit: unit, before: old, after: now))
                units[unit].orders.append(slot)
            }
        }
        for target in old where !newSet.contains(target) { noteLink(id, index, target, made: false) }
        for target in new where !oldSet.contains(target) { noteLink(id, index, target, made: true) }
        for link in taken { noteLink(link.target, link.inverse, link.holder, made: false) }
    }

    private func noteLink(_ object: ObjectID, _ relationship: Int, _ target: ObjectID, made: Bool) {
        guard let unit = current else { return }
        let link = canonical(object, relationship, target)
        if let last = linkChanges[link].map({ $0.count - 1 }), last >= 0, linkChanges[link]?[last].unit == unit {
            linkChanges[link]?[last].after = made
        } else {
            linkChanges[link, default: []].append(Change(unit: unit, before: !made, after: made))
            units[unit].links.append(link)
        }
        noteChanger(unit, Slot(object: object, position: model.descriptions[object.entity].propertyPosition(ofRelationship: relationship)))
        if let inverse = inverseIndex(object.entity, relationship, target.entity) {
            noteChanger(unit, Slot(object: target, position: model.descriptions[target.entity].propertyPosition(ofRelationship: inverse)))
        }
    }

    private func noteChanger(_ unit: Int, _ slot: Slot) {
        if relationshipChangers[slot]?.last != unit { relationshipChangers[slot, default: []].append(unit) }
    }

    private func canonical(_ object: ObjectID, _ relationship: Int, _ target: ObjectID) -> Link {
        let link = Link(object: object, relationship: relationship, target: target)
        guard let inverse = inverseIndex(object.entity, relationship, target.entity) else { return link }
        let other = Link(object: target, relationship: inverse, target: object)
        return other < link ? other : link
    }

    /// The index, in an object of `targetEntity`, of the inverse of relationship `index` of `entity`.
    private func inverseIndex(_ entity: Int, _ index: Int, _ targetEntity: Int) -> Int? {
        guard let name = model.descriptions[entity].relationships[index].inverse else { return nil }
        return model.descriptions[targetEntity].relationshipPosition(name)
    }

    // MARK: Naming

    /// The unit a save problem at `position` of `id` comes from: the last one not skipped that
    /// set the value the attribute holds, or made or broke a link of the relationship; else the
    /// one that inserted the object; nil when none (not skipped) did.
    func culprit(of id: ObjectID, position: Int) -> Int? {
        let slot = Slot(object: id, position: position)
        if position < model.descriptions[id.entity].attributes.count {
            let now = context.propertyValues(of: id).map { position < $0.count ? $0[position] : nil } ?? nil
            if let change = attributeChanges[slot]?.last(where: { !units[$0.unit].skipped && PropertyValue.attribute($0.after) == now }) {
                return change.unit
            }
        } else if let unit = relationshipChangers[slot]?.last(where: { !units[$0].skipped }) {
            return unit
        }
        if let unit = inserter[id], !units[unit].skipped { return unit }
        return nil
    }

    // MARK: Undoing

    /// Undoes records: each with every unit in it, and, for a nested record, the relationship
    /// that took it (left as it was, as when a read sets an item aside; its other records stay).
    /// Each attribute and link they changed gets the value the last unit not skipped left, or
    /// the one it had before the import when none; a link is made again only where that takes
    /// no object from another (a to-one side holding another object keeps it). The objects they
    /// inserted are unlinked from everything, then deleted: no delete rule reaches an object
    /// that existed before, and none of those is deleted. Returns the objects whose values changed.
    func skip(_ records: [Int]) throws -> Set<ObjectID> {
        var undone: [Int] = []
        hasSkipped = hasSkipped || !records.isEmpty
        func mark(_ unit: Int) {
            guard !units[unit].skipped else { return }
            units[unit].skipped = true
            undone.append(unit)
            for child in units[unit].children { mark(child) }
        }
        for record in records {
            mark(record)
            if let parent = units[record].parent, case .assignment = units[parent].kind, !units[parent].skipped {
                units[parent].skipped = true
                undone.append(parent)
            }
        }
        var doomed: Set<ObjectID> = []
        var slots: Set<Slot> = []
        var links: Set<Link> = []
        var orders: Set<Slot> = []
        for unit in undone {
            orders.formUnion(units[unit].orders)
            doomed.formUnion(units[unit].inserted.filter { context.propertyValues(of: $0) != nil })
            slots.formUnion(units[unit].attributes)
            links.formUnion(units[unit].links)
        }
        // Every object whose values the undone units changed is checked again, whether undoing
        // changes it now or not (a value a later record left may still fail).
        var touched = Set(slots.map(\.object)).union(links.flatMap { [$0.object, $0.target] })
        for slot in slots where !doomed.contains(slot.object) {
            guard let changes = attributeChanges[slot], let first = changes.first, let values = context.propertyValues(of: slot.object) else { continue }
            let wanted = changes.last(where: { !units[$0.unit].skipped })?.after ?? first.before
            guard values[slot.position] != .attribute(wanted) else { continue }
            try context.setAttribute(slot.object, slot.position, wanted)
        }
        var toMake: [Link] = []
        for link in links.sorted() {
            guard let changes = linkChanges[link], let first = changes.first else { continue }
            let wanted =
                !doomed.contains(link.object) && !doomed.contains(link.target) && (changes.last(where: { !units[$0.unit].skipped })?.after ?? first.before)
            let present = targets(link.object, link.relationship)?.contains(link.target) ?? false
            if present && !wanted {
                try set(link.object, link.relationship, to: (targets(link.object, link.relationship) ?? []).filter { $0 != link.target })
                touched.formUnion([link.object, link.target])
            } else if wanted && !present {
                toMake.append(link)
            }
        }
        for link in toMake where canMake(link) {
            let relationship = model.descriptions[link.object.entity].relationships[link.relationship]
            let now = targets(link.object, link.relationship) ?? []
            try set(link.object, link.relationship, to: relationship.isToMany ? now + [link.target] : [link.target])
            touched.formUnion([link.object, link.target])
        }
        // An ordered relationship holding the objects it held before gets their order back.
        for slot in orders where !doomed.contains(slot.object) {
            guard let changes = orderChanges[slot], let first = changes.first else { continue }
            let index = slot.position - model.descriptions[slot.object.entity].attributes.count
            let wanted = (changes.last(where: { !units[$0.unit].skipped })?.after ?? first.before).filter { !doomed.contains($0) }
            guard let now = targets(slot.object, index), now != wanted, Set(now) == Set(wanted) else { continue }
            try set(slot.object, index, to: wanted)
        }
        for id in doomed.sorted() {
            let entity = model.descriptions[id.entity]
            for index in entity.relationships.indices {
                guard let held = targets(id, index), !held.isEmpty else { continue }
                touched.formUnion(held)
                try set(id, index, to: [])
            }
            try context.deleteObject(id)
            touched.remove(id)
        }
        return touched
    }

    /// Sets a relationship while undoing, and reports it.
    private func set(_ id: ObjectID, _ index: Int, to new: [ObjectID]) throws {
        let previous = targets(id, index) ?? []
        try context.setRelationship(id, index, to: new)
        relationshipSet?(id, index, targets(id, index) ?? new, previous)
    }

    /// The objects relationship `index` of an object holds; nil when the object is gone.
    private func targets(_ id: ObjectID, _ index: Int) -> [ObjectID]? {
        guard let values = context.propertyValues(of: id) else { return nil }
        let position = model.descriptions[id.entity].propertyPosition(ofRelationship: index)
        return position < values.count ? values[position].targets : nil
    }

    /// Whether a link can be made again without taking an object from another: both objects
    /// exist, and neither side is a to-one relationship holding something else.
    private func canMake(_ link: Link) -> Bool {
        guard let held = targets(link.object, link.relationship), context.propertyValues(of: link.target) != nil else { return false }
        if !model.descriptions[link.object.entity].relationships[link.relationship].isToMany && !held.isEmpty { return false }
        guard let inverse = inverseIndex(link.object.entity, link.relationship, link.target.entity) else { return true }
        if model.descriptions[link.target.entity].relationships[inverse].isToMany { return true }
        return targets(link.target, inverse)?.allSatisfy { $0 == link.object } ?? false
    }
}
