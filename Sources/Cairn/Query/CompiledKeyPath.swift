/// A key path resolved against a model: the relationships it follows and what it ends on.
///
/// Relationships are kept by their number among the entity's relationships, not by position:
/// a row holds all its entity's attributes first, so a relationship sits further along in a
/// sub-entity that adds attributes. The position is worked out for each object's own entity.
struct CompiledKeyPath: Sendable {
    /// A relationship followed on the way.
    struct Step: Sendable {
        /// The relationship's number among the relationships (the same in every sub-entity).
        var number: Int
        var toMany: Bool
    }

    /// What the key path ends on.
    enum Terminal: Sendable {
        /// An attribute at this position (the same in every sub-entity: inherited attributes come first).
        case attribute(position: Int, AttributeType)
        case relationship(number: Int, toMany: Bool, destination: Int)
    }

    /// The key path as written (for messages and plans).
    var name: String
    var steps: [Step]
    var terminal: Terminal
    /// The entity it starts from.
    var entity: Int
    /// Each entity's attribute count, by entity index: where its relationships start.
    var attributeCounts: [Int]

    /// Whether it can reach many values (it crosses or ends on a to-many relationship).
    var isToMany: Bool {
        if steps.contains(where: \.toMany) { return true }
        if case .relationship(_, true, _) = terminal { return true }
        return false
    }

    /// The attribute's type when it ends on an attribute.
    var attributeType: AttributeType? {
        if case .attribute(_, let type) = terminal { return type }
        return nil
    }

    /// The position of the attribute when the key path is just an attribute of the entity.
    var directAttribute: Int? {
        if steps.isEmpty, case .attribute(let position, _) = terminal { return position }
        return nil
    }

    /// Resolves `keys` from `entity`: every key but the last must be a relationship.
    ///
    /// - Throws: ``StoreError/Code/unknownName`` naming the key that is not there.
    static func resolve(_ keys: [String], from entity: EntityDescription, in model: Model) throws -> CompiledKeyPath {
        let name = keys.joined(separator: ".")
        guard !keys.isEmpty else { throw StoreError(.unknownName, "predicate: an empty key path", entity: entity.name) }
        let counts = model.descriptions.map(\.attributes.count)
        var current = entity
        var steps: [Step] = []
        for (index, key) in keys.enumerated() {
            // An element of a composite attribute is stored as an attribute named by its key
            // path from the entity (`location.latitude`).
            if index < keys.count - 1, current.isComposite(key) {
                let element = keys[index...].joined(separator: ".")
                guard let position = current.attributePosition(element) else {
                    let message =
                        current.isComposite(element)
                        ? "\(current.name).\(element) is a composite: name one of its elements (\(element).…)"
                        : "composite attribute \(current.name).\(key) has no element \(keys[(index + 1)...].joined(separator: "."))"
                    throw StoreError(.unknownName, "key path \(name): \(message)", entity: current.name, property: element)
                }
                return CompiledKeyPath(
                    name: name, steps: steps, terminal: .attribute(position: position, current.attributes[position].type),
                    entity: entity.index, attributeCounts: counts)
            }
            let isLast = index == keys.count - 1
            if let position = current.attributePosition(key) {
                guard isLast else {
                    throw StoreError(
                        .unknownName, "key path \(name): \(current.name).\(key) is an attribute, so nothing can follow it",
                        entity: current.name, property: key)
                }
                return CompiledKeyPath(
                    name: name, steps: steps, terminal: .attribute(position: position, current.attributes[position].type),
                    entity: entity.index, attributeCounts: counts)
            }
            guard let number = current.relationshipPosition(key) else {
                let hint = current.isComposite(key) ? " (\(key) is a composite attribute: name one of its elements, \(key).element)" : ""
                throw StoreError(
                    .unknownName, "key path \(name): \(current.name) has no attribute or relationship \(key)\(hint)",
                    entity: current.name, property: key)
            }
            let relationship = current.relationships[number]
            let destination = current.destinations[number]
            if isLast {
                return CompiledKeyPath(
                    name: name, steps: steps,
                    terminal: .relationship(number: number, toMany: relationship.isToMany, destination: destination),
                    entity: entity.index, attributeCounts: counts)
            }
            steps.append(Step(number: number, toMany: relationship.isToMany))
            current = model.descriptions[destination]
        }
        throw StoreError(.unknownName, "predicate: key path \(name) does not resolve", entity: entity.name)
    }

    /// The entity the key path ends in (for a relationship, its destination).
    var destination: Int? {
        if case .relationship(_, _, let destination) = terminal { return destination }
        return nil
    }

    /// The position of relationship `number` in a row of `entity`; nil for a forged entity.
    @inline(__always)
    private func position(_ number: Int, in entity: Int) -> Int? {
        attributeCounts.indices.contains(entity) ? attributeCounts[entity] + number : nil
    }

    /// The values it reaches from the object `id` seen through `view`.
    func evaluate(_ id: ObjectID, _ view: ObjectView, _ reader: ObjectReader) -> Operand {
        if steps.isEmpty { return read(id, view) }
        var current = [(id, view)]
        var many = false
        for step in steps {
            var next: [(ObjectID, ObjectView)] = []
            for (object, objectView) in current {
                guard let position = position(step.number, in: object.entity) else { continue }
                for target in objectView[position].targets {
                    if let reached = reader.view(target) { next.append((target, reached)) }
                }
            }
            many = many || step.toMany
            current = next
        }
        guard many else {
            guard let (last, lastView) = current.first else {
                if case .relationship(_, true, _) = terminal { return .objects([]) }
                return terminalIsAttribute ? .value(.null) : .object(nil)
            }
            return read(last, lastView)
        }
        switch terminal {
        case .attribute(let position, _):
            return .values(
                current.map { _, object in
                    if case .attribute(let value) = object[position] { return QueryValue.normalized(value) }
                    return .null
                })
        case .relationship(let number, _, _):
            return .objects(
                current.flatMap { object, objectView in
                    position(number, in: object.entity).map { objectView[$0].targets } ?? []
                })
        }
    }

    private var terminalIsAttribute: Bool {
        if case .attribute = terminal { return true }
        return false
    }

    private func read(_ id: ObjectID, _ view: ObjectView) -> Operand {
        switch terminal {
        case .attribute(let position, _):
            if case .attribute(let value) = view[position] { return .value(QueryValue.normalized(value)) }
            return .value(.null)
        case .relationship(let number, let toMany, _):
            guard let position = position(number, in: id.entity) else { return toMany ? .objects([]) : .object(nil) }
            switch view[position] {
            case .toOne(let target): return toMany ? .objects(target.map { [$0] } ?? []) : .object(target)
            case .toMany(let ids): return .objects(ids)
            case .attribute: return toMany ? .objects([]) : .object(nil)
            }
        }
    }
}

/// What an expression of a predicate gives for one object.
enum Operand: Sendable {
    case value(Value)
    case values([Value])
    case object(ObjectID?)
    case objects([ObjectID])
}

/// Reads the objects a predicate reaches through relationships, as the fetching context sees
/// them.
struct ObjectReader: Sendable {
    let view: @Sendable (ObjectID) -> ObjectView?

    /// Reads committed objects of a snapshot (for contexts without unsaved changes).
    static func committed(_ snapshot: StoreSnapshot) -> ObjectReader {
        ObjectReader { id in snapshot.record(id).map { ObjectView(base: .row($0.row), changes: nil) } }
    }
}
