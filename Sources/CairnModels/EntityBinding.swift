import Cairn
import CairnSupport

/// A `@Managed` class bound to an entity of a store's model: where each persisted property
/// lives among the entity's attributes and relationships, checked once.
@usableFromInline
final class EntityBinding: @unchecked Sendable {
    // Safety: immutable after init.

    /// Where one persisted property lives.
    @usableFromInline
    enum Slot {
        /// The attribute at `position`, its Swift values coded as `coding`.
        case attribute(position: Int, coding: PropertyKind.ValueCoding)
        /// The attributes at `positions` (one per leaf of `layout`): a `@Composite` struct's elements.
        case composite(positions: [Int], layout: CompositeLayout)
        /// The to-one relationship at `index`, to objects of a class.
        case toOne(index: Int, type: any ManagedModel.Type)
        /// The to-many relationship at `index`.
        case toMany(index: Int, type: any ManagedModel.Type)
    }

    /// The class's schema.
    let schema: ManagedSchema
    /// The entity.
    @usableFromInline let entity: EntityDescription
    /// Each persisted property's place, by ordinal.
    @usableFromInline let slots: [Slot]

    /// Binds a class to an entity of `model`, or says what does not match, naming both.
    init(_ schema: ManagedSchema, entity: EntityDescription, model: Model) throws(StoreError) {
        self.schema = schema
        self.entity = entity
        var slots: [Slot] = []
        for property in schema.properties {
            slots.append(try Self.slot(of: property, in: schema, entity: entity, model: model))
        }
        self.slots = slots
    }

    private static func slot(
        of property: ManagedProperty, in schema: ManagedSchema, entity: EntityDescription, model: Model
    ) throws(StoreError)
        -> Slot
    {
        let where_ = "\(schema.typeName).\(property.name) (\(property.valueType))"
        func mismatch(_ what: String) -> StoreError {
            StoreError(
                .modelMismatch, "\(where_) does not match entity \(entity.name) of the store's model: \(what)", entity: entity.name,
                property: property.name)
        }
        // What a non-optional property reads when its stored value cannot be read must exist.
        func requirePlaceholder() throws(StoreError) {
            guard !property.kind.isOptional, ValueCodec.placeholder(property.valueType) == nil else { return }
            throw StoreError(
                .typeMismatch,
                "\(where_) has no value to read when its stored value cannot be (another program wrote one it does not decode, or "
                    + "the object was deleted): declare it optional, or make the enum CaseIterable",
                entity: entity.name, property: property.name)
        }
        switch property.kind {
        case .unsupported:
            throw StoreError(
                .typeMismatch,
                "\(where_): Cairn stores attributes of its value types (String, integers, Double, Float, Decimal, Bool, Date, Data, UUID, URL), "
                    + "RawRepresentable enums of them, Codable values, and relationships to @Managed classes",
                entity: entity.name, property: property.name)
        case .attribute(let type, let optional, let coding):
            try requirePlaceholder()
            let position = try attributePosition(
                property.name, type, optional: optional, coding: coding,
                declared: ("the property", "the attribute", "the property \(property.valueType)?"), in: entity, mismatch: mismatch)
            return .attribute(position: position, coding: coding)
        case .composite(let compositeType, let optional):
            let layout: CompositeLayout
            do {
                layout = try CompositeLayout.of(compositeType)
            } catch {
                throw StoreError(.typeMismatch, "\(where_): \(error.message)", entity: entity.name, property: property.name)
            }
            try requirePlaceholder()
            var positions: [Int] = []
            for leaf in layout.leaves {
                positions.append(
                    try attributePosition(
                        property.name + "." + leaf.path, leaf.type, optional: optional || leaf.optional, coding: leaf.coding,
                        declared: (
                            "the element \(layout.typeName).\(leaf.path)", "the attribute \(property.name).\(leaf.path)",
                            "the element \(leaf.path) (or the property) optional"
                        ), in: entity, mismatch: mismatch))
            }
            return .composite(positions: positions, layout: layout)
        case .toOne(let destination, _), .toMany(let destination):
            guard let index = entity.relationshipPosition(property.name) else {
                let hint = entity.attributePosition(property.name) != nil ? "it is an attribute there" : "the entity has no relationship \(property.name)"
                throw mismatch(hint)
            }
            let relationship = entity.relationships[index]
            let toMany: Bool
            if case .toMany = property.kind { toMany = true } else { toMany = false }
            if case .toOne(_, optional: false) = property.kind, relationship.isOptional {
                throw mismatch("the relationship is optional: declare the property \(destination)? to read its nil")
            }
            guard relationship.isToMany == toMany else {
                throw mismatch("the relationship is \(relationship.isToMany ? "to-many: declare [\(destination)]" : "to-one: declare \(destination)?")")
            }
            guard let target = ModelBinding.entity(of: destination, in: model),
                target.index == model.entity(named: relationship.destination)?.index
                    || model.entity(named: relationship.destination)?.descendants.contains(target.index) == true
            else {
                throw mismatch("the relationship's destination is \(relationship.destination), which \(destination) is not bound to")
            }
            return toMany ? .toMany(index: index, type: destination) : .toOne(index: index, type: destination)
        }
    }

    /// The position of the attribute `name`, checked against a property or element's type.
    private static func attributePosition(
        _ name: String, _ type: AttributeType, optional: Bool, coding: PropertyKind.ValueCoding,
        declared: (subject: String, attribute: String, optionalSpelling: String), in entity: EntityDescription,
        mismatch: (String) -> StoreError
    ) throws(StoreError) -> Int {
        guard let position = entity.attributePosition(name) else {
            let hint =
                entity.relationshipPosition(name) != nil
                ? "it is a relationship there"
                : entity.isComposite(name)
                    ? "it is a composite attribute there: declare a @Composite struct" : "the entity has no attribute \(name)"
            throw mismatch(hint)
        }
        let attribute = entity.attributes[position]
        guard Self.fits(type, coding: coding, attribute.type) else {
            throw mismatch("\(declared.subject) is stored as \(type), \(declared.attribute) is \(attribute.type)")
        }
        if !optional, attribute.isOptional, attribute.defaultValue == nil, coding != .scalar || !Self.isNumberOrFlag(type) {
            throw mismatch("\(declared.attribute) is optional: declare \(declared.optionalSpelling) to read its nil")
        }
        if Self.narrows(type, attribute.type) {
            throw mismatch("\(declared.attribute) is \(attribute.type), which holds integers \(declared.subject) (\(type)) cannot: declare a wider integer")
        }
        return position
    }

    /// Whether Swift values stored as `type` fit an attribute of type `stored`.
    private static func fits(_ type: AttributeType, coding: PropertyKind.ValueCoding, _ stored: AttributeType) -> Bool {
        if type == stored { return true }
        switch (type, stored) {
        case (.integer16, .integer32), (.integer16, .integer64), (.integer32, .integer16), (.integer32, .integer64), (.integer64, .integer16),
            (.integer64, .integer32):
            return true  // a value out of the attribute's range is refused when set
        case (.string, .uri): return coding != .json
        case (.binary, .transformable): return true
        default: return false
        }
    }

    /// Whether an integer property of `type` cannot hold every value of a `stored` attribute.
    private static func narrows(_ type: AttributeType, _ stored: AttributeType) -> Bool {
        guard let property = type.integerRange, let attribute = stored.integerRange else { return false }
        return attribute.lowerBound < property.lowerBound || attribute.upperBound > property.upperBound
    }

    private static func isNumberOrFlag(_ type: AttributeType) -> Bool {
        switch type {
        case .integer16, .integer32, .integer64, .double, .float, .decimal, .boolean: true
        default: false
        }
    }
}

/// Which entity of a model a `@Managed` class binds to, and the bindings a store keeps.
@usableFromInline
enum ModelBinding {
    /// The entity a class binds to: the one an Xcode model's `representedClassName` gives the
    /// class's name, else the one named as the class's ``ManagedModel/entityName``.
    static func entity(of type: any ManagedModel.Type, in model: Model) -> EntityDescription? {
        let className = String(describing: type)
        if let named = model.classNames.first(where: { $0.value == className || $0.value.hasSuffix(".\(className)") }),
            let entity = model.entity(named: named.key)
        {
            return entity
        }
        return model.entity(named: type.entityName)
    }

    /// The binding of a class to the entity `entityIndex` of the store's model (its own entity,
    /// or a sub-entity an object of it belongs to), made once per store.
    @usableFromInline
    static func binding(_ type: any ManagedModel.Type, entityIndex: Int? = nil, in store: Store) throws(StoreError) -> EntityBinding {
        // The class's own entity in the store it was last bound in (asked for as such, or by its
        // index): its schema's memo, no hashing.
        let schema = type.managedSchema
        if let binding = schema.lastBinding(in: store), entityIndex == nil || entityIndex == binding.entity.index { return binding }
        // (The class's own entity is cached under -1: finding it compares names.)
        let key = TypedBindingKey(type: ObjectIdentifier(type), entity: entityIndex ?? -1)
        if let cached = store.typedBindings.withLock({ $0[key] }) as? EntityBinding {
            if entityIndex == nil { schema.noteBinding(cached, in: store) }
            return cached
        }
        let model = store.model
        guard let own = entity(of: type, in: model) else { throw unbound(type) }
        let index = entityIndex ?? own.index
        guard index == own.index || own.descendants.contains(index), model.descriptions.indices.contains(index) else {
            throw StoreError(
                .typeMismatch, "\(type) is bound to entity \(own.name): an object of another entity is not one of it", entity: own.name)
        }
        let binding = try EntityBinding(type.managedSchema, entity: model.descriptions[index], model: model)
        store.typedBindings.withLock { $0[key] = binding }
        if entityIndex == nil { schema.noteBinding(binding, in: store) }
        ManagedObservation.start(store)
        return binding
    }

    /// Binds every class, and each class its relationships lead to, to `model`: a mismatch
    /// throws before a store opens, not at first use.
    static func check(_ types: [any ManagedModel.Type], against model: Model) throws(StoreError) {
        for type in ModelDerivation.closure(of: types) {
            guard let entity = entity(of: type, in: model) else { throw unbound(type) }
            _ = try EntityBinding(type.managedSchema, entity: entity, model: model)
        }
    }

    private static func unbound(_ type: any ManagedModel.Type) -> StoreError {
        StoreError(
            .unknownName,
            "\(type) is not bound to an entity of the store's model: it has no entity \(type.entityName) "
                + "(nor one whose class name is \(type)); open the store with Store(at:for:) listing the class",
            entity: type.entityName)
    }
}
