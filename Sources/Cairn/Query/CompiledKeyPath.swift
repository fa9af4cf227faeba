/// A key path resolved against a model: the relationships it follows and what it ends on.
struct CompiledKeyPath: Sendable {
    /// A relationship followed on the way (its position in the entity's properties).
    struct Step: Sendable {
        var position: Int
        var toMany: Bool
    }

    /// What the key path ends on.
    enum Terminal: Sendable {
        case attribute(position: Int, AttributeType)
        case relationship(position: Int, toMany: Bool, destination: Int)
    }

    /// The key path as written (for messages and plans).
    var name: String
    var steps: [Step]
    var terminal: Terminal
    /// The entity it starts from.
    var entity: Int

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
        var current = entity
        var steps: [Step] = []
        for (index, key) in keys.enumerated() {
            let isLast = index == keys.count - 1
            if let position = current.attributePosition(key) {
                guard isLast else {
                    throw StoreError(.unknownName, "key path \(name): \(current.name).\(key) is an attribute, so nothing can follow it",
                                     entity: current.name, property: key)
                }
                return CompiledKeyPath(name: name, steps: steps, terminal: .attribute(position: position, current.attributes[position].type),
                                       entity: entity.index)
            }
            guard let number = current.relationshipPosition(key) else {
                throw StoreError(.unknownName, "key path \(name): \(current.name) has no attribute or relationship \(key)",
                                 entity: current.name, property: key)
            }
            let relationship = current.relationships[number]
            let position = current.attributes.count + number
            let destination = current.destinations[number]
            if isLast {
                return CompiledKeyPath(name: name, steps: steps,
                                       terminal: .relationship(position: position, toMany: relationship.isToMany, destination: destination),
                                       entity: entity.index)
            }
            steps.append(Step(position: position, toMany: relationship.isToMany))
            current = model.descriptions[destination]
        }
        throw StoreError(.unknownName, "predicate: key path \(name) does not resolve", entity: entity.name)
    }

    /// The entity the key path ends in (for a relationship, its destination).
    func destination(in model: Model) -> Int? {
        if case .relationship(_, _, let destination) = terminal { return destination }
        return nil
    }

    /// The values it reaches from an object.
    func evaluate(_ view: ObjectView, _ reader: ObjectReader) -> Operand {
        if steps.isEmpty { return Self.read(terminal, view, many: false) }
        var current = [view]
        var many = false
        for step in steps {
            var next: [ObjectView] = []
            for object in current {
                for target in object[step.position].targets {
                    if let reached = reader.view(target) { next.append(reached) }
                }
            }
            many = many || step.toMany
            current = next
        }
        guard many else {
            guard let last = current.first else {
                if case .relationship(_, true, _) = terminal { return .objects([]) }
                return terminalIsAttribute ? .value(.null) : .object(nil)
            }
            return Self.read(terminal, last, many: false)
        }
        switch terminal {
        case .attribute(let position, _):
            return .values(current.map { object in
                if case .attribute(let value) = object[position] { return QueryValue.normalized(value) }
                return .null
            })
        case .relationship(let position, _, _):
            return .objects(current.flatMap { $0[position].targets })
        }
    }

    private var terminalIsAttribute: Bool {
        if case .attribute = terminal { return true }
        return false
    }

    private static func read(_ terminal: Terminal, _ view: ObjectView, many: Bool) -> Operand {
        switch terminal {
        case .attribute(let position, _):
            if case .attribute(let value) = view[position] { return .value(QueryValue.normalized(value)) }
            return .value(.null)
        case .relationship(let position, let toMany, _):
            switch view[position] {
            case .toOne(let id): return toMany ? .objects(id.map { [$0] } ?? []) : .object(id)
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
