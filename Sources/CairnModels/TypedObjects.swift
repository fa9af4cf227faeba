import Cairn

/// Typed objects of a context: made for fetched objects (one instance per object and context),
/// inserted, linked, and set through their bindings.
enum TypedObjects {
    /// The typed objects of these IDs in `context`, of class `type` (each bound to its object's
    /// entity, a sub-entity's objects included): the instances the context already has, or new ones.
    static func make(_ ids: [ObjectID], _ type: any ManagedModel.Type, in context: ObjectContext) -> [any ManagedModel] {
        guard !ids.isEmpty else { return [] }
        let objects = context.objectsForTyping(ids)
        var bindings: [Int: EntityBinding] = [:]
        for object in objects where bindings[object.entity.index] == nil {
            bindings[object.entity.index] = try? ModelBinding.binding(type, entityIndex: object.entity.index, in: context.store)
        }
        let bound = objects.compactMap { object in bindings[object.entity.index].map { (object, $0) } }
        let made = context.typedObjects(for: bound.map(\.0)) { index, object -> AnyObject in
            // (Runs under the context's lock: making the instance only sets its state.)
            type.init(managedState: ManagedState(object: object, binding: bound[index].1))
        }
        return made.compactMap { $0 as? any ManagedModel }
    }

    /// The context of the object (or the first of the objects) a relationship's new value
    /// links to, when it is in one.
    static func context(ofLinked value: Any) -> ObjectContext? {
        if let model = linked(value).first(where: { $0._managedState.object != nil }) { return model._managedState.object?.context }
        return nil
    }

    /// The typed objects a relationship's value holds: none, one, or an array's.
    static func linked(_ value: Any) -> [any ManagedModel] {
        if let optional = value as? any OptionalValue {
            guard let wrapped = optional.wrapped else { return [] }
            return linked(wrapped)
        }
        if let model = value as? any ManagedModel { return [model] }
        if let many = value as? any ToManyValue { return many.objects }
        return []
    }

    /// Sets a property of an object of a context through its slot. What the context refuses is
    /// kept for its next save to throw.
    static func set(_ value: Any, at slot: EntityBinding.Slot, of object: ManagedObject, property: ManagedProperty) {
        guard let context = object.context else {
            return ManagedModelProblems.report("\(object.entity.name).\(property.name) cannot be set: \(object.goneError.message)")
        }
        do {
            switch slot {
            case .attribute(let position, let coding):
                guard let stored = ValueCodec.encode(value, coding: coding) else {
                    throw StoreError(
                        .typeMismatch, "\(object.entity.name).\(property.name): \(value) has no stored form (an integer above Int64.max, or a value that does not encode)",
                        entity: object.entity.name, property: property.name)
                }
                try object.setAttributeValue(stored, at: position)
            case .toOne(let index, _), .toMany(let index, _):
                var targets: [ObjectID] = []
                for model in linked(value) {
                    try attach(model, to: context)
                    if let id = model._managedState.object?.objectID { targets.append(id) }
                }
                try object.setTargets(ofRelationship: index, to: targets)
            }
        } catch let error as StoreError {
            context.deferError(error)
        } catch {
            context.deferError(StoreError(.invalidObject, "\(object.entity.name).\(property.name): \(error)", entity: object.entity.name, property: property.name))
        }
    }

    /// Puts a new typed object into `context` (its values kept until now become unsaved changes
    /// of the context; new objects it links to join too); an object already in `context` stays.
    ///
    /// - Throws: ``StoreError`` when the object belongs to another context, or its class is not
    ///   bound to an entity of the store.
    static func attach(_ model: any ManagedModel, to context: ObjectContext) throws {
        if let object = model._managedState.object {
            guard object.context !== context else { return }
            throw StoreError(
                .invalidObject,
                "\(type(of: model)) \(object.objectID) belongs to context \(object.context?.name ?? "(gone)"), not \(context.name): "
                    + "an object stays in its context; read it in this one with model(for: persistentModelID)",
                entity: object.entity.name, objects: [object.objectID])
        }
        let binding = try ModelBinding.binding(type(of: model), in: context.store)
        let object = try context.insert(binding.entity.name)
        let pending = model._managedState.pending
        model._managedState = ManagedState(object: object, binding: binding)
        context.registerTyped(model, for: object)
        for (ordinal, value) in pending?.all ?? [] {
            set(value, at: binding.slots[ordinal], of: object, property: binding.schema.properties[ordinal])
        }
    }
}
