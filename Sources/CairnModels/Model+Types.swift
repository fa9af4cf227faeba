import Cairn

extension Model {
    /// The model `@Managed` classes describe (SwiftData's `Schema`): an entity per class (the
    /// classes their relationships lead to included), named as the class's
    /// ``ManagedModel/entityName``.
    ///
    /// - Attributes, in name order (declaration order does not matter): each persisted property of a stored type; a non-optional property is a
    ///   required attribute. `@Attribute(.unique)` and `#Unique` make uniqueness constraints,
    ///   `#Index` indexes (one property: the attribute's index; several: a fetch index),
    ///   `originalName` a renaming identifier that migration follows.
    /// - Relationships: each property of a `@Managed` class (to-one; required when not optional)
    ///   or an array of one (to-many). The inverse is `@Relationship(inverse:)` on either side, or,
    ///   when neither says, the one relationship of the other class that points back, if there is
    ///   exactly one each way.
    ///
    /// - Throws: `StoreError` naming the class and property of a type Cairn cannot store, or a
    ///   `ModelError` for what the model's own checks refuse.
    public init(for types: [any ManagedModel.Type]) throws {
        let all = ModelDerivation.closure(of: types)
        var entities: [Entity] = []
        var composites = ModelDerivation.Composites()
        for type in all { entities.append(try ModelDerivation.entity(of: type, among: all, composites: &composites)) }
        self = try Model(entities, composites: composites.described)
    }
}

/// How classes become entities.
enum ModelDerivation {
    /// The classes and every class their relationships lead to, in a stable order.
    static func closure(of types: [any ManagedModel.Type]) -> [any ManagedModel.Type] {
        var seen = Set<ObjectIdentifier>()
        var result: [any ManagedModel.Type] = []
        var queue = types
        while !queue.isEmpty {
            let type = queue.removeFirst()
            guard seen.insert(ObjectIdentifier(type)).inserted else { continue }
            result.append(type)
            for property in type.managedSchema.properties {
                if let destination = destination(of: property) { queue.append(destination) }
            }
        }
        return result
    }

    static func destination(of property: ManagedProperty) -> (any ManagedModel.Type)? {
        switch property.kind {
        case .toOne(let destination, _), .toMany(let destination): destination
        case .attribute, .composite, .unsupported: nil
        }
    }

    static func entity(of type: any ManagedModel.Type, among all: [any ManagedModel.Type], composites: inout Composites) throws -> Entity {
        let schema = type.managedSchema
        var entity = Entity(type.entityName)
        for property in schema.properties {
            let options = property.attribute?.options ?? []
            switch property.kind {
            case .unsupported:
                throw StoreError(
                    .typeMismatch,
                    "\(type).\(property.name) is \(property.valueType), which Cairn cannot store: use a stored value type (String, integers, "
                        + "Double, Float, Decimal, Bool, Date, Data, UUID, URL), a RawRepresentable enum of one, a Codable value, "
                        + "a @Managed class (optional) or an array of one, or mark it @Transient",
                    entity: type.entityName, property: property.name)
            case .attribute(let attributeType, let optional, _):
                let indexed = options.contains(.indexed) || schema.indexes.contains([property.name])
                entity.attributes.append(
                    Attribute(
                        property.name, attributeType, optional: optional, indexed: indexed, transient: options.contains(.ephemeral),
                        renamingIdentifier: property.attribute?.originalName))
                if options.contains(.unique) { entity.uniquenessConstraints.append([property.name]) }
            case .composite(let compositeType, let optional):
                let name = try composites.add(compositeType, for: "\(type).\(property.name)", entity: type.entityName)
                entity.attributes.append(
                    Attribute(
                        property.name, .composite(name), optional: optional, transient: options.contains(.ephemeral),
                        renamingIdentifier: property.attribute?.originalName))
                // Unique or indexed: the whole value, every element together.
                let leaves = try CompositeLayout.of(compositeType).leaves.map { property.name + "." + $0.path }
                if options.contains(.unique) { entity.uniquenessConstraints.append(leaves) }
                if options.contains(.indexed) || schema.indexes.contains([property.name]) {
                    entity.fetchIndexes.append(FetchIndex(property.name, leaves.map { FetchIndex.Element($0) }))
                }
            case .toOne(let destination, let optional):
                entity.relationships.append(relationship(property, of: type, to: destination, .toOne, optional: optional, among: all))
            case .toMany(let destination):
                entity.relationships.append(relationship(property, of: type, to: destination, .toMany(ordered: false), optional: true, among: all))
            }
        }
        // In name order, as Xcode writes an entity's properties: reordering a class's properties
        // changes nothing stored.
        entity.attributes.sort { $0.name < $1.name }
        entity.relationships.sort { $0.name < $1.name }
        entity.uniquenessConstraints += schema.uniqueness
        // Several properties, or an element of a composite (`#Index<Trail>([\.route.length])`):
        // a fetch index of the entity.
        for index in schema.indexes where index.count > 1 || index.first?.contains(".") == true {
            let name = index.joined(separator: "_").replacingOccurrences(of: ".", with: "_")
            entity.fetchIndexes.append(FetchIndex(name, index.map { FetchIndex.Element($0) }))
        }
        return entity
    }

    /// The model's composite types, one per `@Composite` struct (nested ones included).
    struct Composites {
        private var byName: [String: (type: ObjectIdentifier, composite: Composite)] = [:]

        /// The composites, by name.
        var described: [Composite] { byName.values.map(\.composite).sorted { $0.name < $1.name } }

        /// Adds a struct's composite type and those of its nested composites; returns its name.
        mutating func add(_ type: any CompositeAttribute.Type, for property: String, entity: String) throws(StoreError) -> String {
            let layout: CompositeLayout
            do {
                layout = try CompositeLayout.of(type)
            } catch {
                throw StoreError(.typeMismatch, "\(property): \(error.message)", entity: entity, property: property)
            }
            if let known = byName[layout.typeName] {
                guard known.type == ObjectIdentifier(type) else {
                    throw StoreError(
                        .typeMismatch, "\(property): two @Composite structs are named \(layout.typeName); a model's composite types need distinct names",
                        entity: entity, property: property)
                }
                return layout.typeName
            }
            var elements: [Attribute] = []
            for (index, element) in layout.elements.enumerated() {
                if let inner = layout.nested[index] {
                    let innerName = try add(inner.type, for: property, entity: entity)
                    guard case .composite(_, let optional) = element.kind else { continue }
                    elements.append(Attribute(element.name, .composite(innerName), optional: optional))
                } else {
                    let leaf = layout.leaves[layout.offsets[index]]
                    elements.append(Attribute(element.name, leaf.type, optional: leaf.optional))
                }
            }
            // In name order, as an entity's attributes: reordering a struct's properties changes nothing stored.
            byName[layout.typeName] = (ObjectIdentifier(type), Composite(layout.typeName, elements: elements.sorted { $0.name < $1.name }))
            return layout.typeName
        }
    }

    private static func relationship(
        _ property: ManagedProperty, of type: any ManagedModel.Type, to destination: any ManagedModel.Type, _ cardinality: Relationship.Cardinality,
        optional: Bool, among all: [any ManagedModel.Type]
    ) -> Relationship {
        let options = property.relationship ?? RelationshipOptions()
        return Relationship(
            property.name, to: destination.entityName, inverse: inverse(of: property, of: type, to: destination), cardinality,
            deleteRule: options.deleteRule, optional: optional && options.minimumModelCount == nil, minimumCount: options.minimumModelCount,
            maximumCount: options.maximumModelCount, renamingIdentifier: options.originalName)
    }

    /// The name of a relationship's inverse: as either side declares it, or the one relationship
    /// each way between the two classes.
    static func inverse(of property: ManagedProperty, of type: any ManagedModel.Type, to destination: any ManagedModel.Type) -> String? {
        let other = destination.managedSchema
        if let path = property.relationship?.inverse { return other.property(for: path)?.name }
        let mine = type.managedSchema
        // The other side names this one.
        for candidate in other.properties {
            if let path = candidate.relationship?.inverse, mine.property(for: path)?.name == property.name { return candidate.name }
        }
        // One relationship each way, neither naming another inverse.
        let back = other.properties.filter { self.destination(of: $0).map { ObjectIdentifier($0) == ObjectIdentifier(type) } ?? false }
        let forth = mine.properties.filter { self.destination(of: $0).map { ObjectIdentifier($0) == ObjectIdentifier(destination) } ?? false }
        guard back.count == 1, forth.count == 1, back[0].relationship?.inverse == nil,
            ObjectIdentifier(type) != ObjectIdentifier(destination) || back[0].name != property.name
        else { return nil }
        return back[0].name
    }
}
