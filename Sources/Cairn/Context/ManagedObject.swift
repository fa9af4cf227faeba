import CairnLog
import CairnSupport
import Foundation

/// An object of a context: read and change its attributes and relationships by name.
///
/// One instance per object ID in a context while it is held. A context does not keep the
/// objects nobody holds, as Core Data's does not: one that reads a million objects lets go of
/// those its callers dropped the next time its identity map sweeps (when it has doubled, at a
/// save or `refresh()` after many registrations, or on ``ObjectContext/releaseUnusedObjects()``). Values
/// are read live from the context, so an object of the view context shows every save as soon as
/// it is made; a fetched object is what Core Data calls a fault: it reads its values when asked.
///
/// ```swift
/// let book = try context.insert("Book")
/// try book.setValue("Dune", forKey: "title")
/// try book.setValue(412, forKey: "pages")
/// try book.setObject(author, forKey: "author")      // author's "books" now holds the book
/// let title: String? = try book.value(forKey: "title")   // "Dune"
/// ```
public final class ManagedObject: Sendable, Hashable, CustomStringConvertible {
    /// The object's permanent identity.
    public let objectID: ObjectID
    /// Its entity.
    public let entity: EntityDescription
    /// The context it belongs to (nil once that context is gone).
    public weak let context: ObjectContext?

    /// The context's identity, kept apart from the weak reference (for `==`).
    private let contextIdentity: ObjectIdentifier
    /// The context's state, held strongly: setting an attribute of a new object (the bulk of
    /// an import) changes it without loading the weak reference. The context empties it as it
    /// goes (and so breaks the cycle through its identity map).
    private let contextState: Protected<ContextState>
    /// For an object its context inserted: its slot in the context's new objects (see
    /// ``InsertedObjects``), where setting a value needs no lookup; -1 for others.
    private let insertSlot: Int
    /// The context's ``ViewVersion`` (held strongly, read without the weak reference).
    package let viewVersion: ViewVersion

    init(id: ObjectID, entity: EntityDescription, context: ObjectContext, slot: Int = -1) {
        self.objectID = id
        self.entity = entity
        self.context = context
        contextIdentity = ObjectIdentifier(context)
        contextState = context.state
        viewVersion = context.viewVersion
        insertSlot = slot
    }

    /// Objects are equal when they stand for the same object ID in the same context (there is
    /// one instance of each while it is held; an object kept only through a weak reference may
    /// meet a newer instance of its ID after its context let it go, and the two are equal).
    public static func == (lhs: ManagedObject, rhs: ManagedObject) -> Bool {
        lhs === rhs || (lhs.objectID == rhs.objectID && lhs.contextIdentity == rhs.contextIdentity)
    }
    /// Hashes the object ID (two contexts' objects of one ID hash alike and are not equal).
    public func hash(into hasher: inout Hasher) { hasher.combine(objectID) }

    /// The entity and object ID, as `Book(3:12)`.
    public var description: String { "\(entity.name)(\(objectID))" }

    private func liveContext() throws -> ObjectContext {
        guard let context else { throw goneError }
        return context
    }

    private func currentValues() throws -> (ObjectContext, ObjectView) {
        let context = try liveContext()
        guard let values = context.view(of: objectID) else {
            throw StoreError(
                .invalidObject, "\(entity.name) \(objectID) was deleted or does not exist in \(context.name)",
                entity: entity.name, objects: [objectID])
        }
        return (context, values)
    }

    private func attributePosition(_ key: String) throws -> Int {
        guard let position = entity.attributePosition(key) else {
            let hint =
                entity.relationshipPosition(key) != nil
                ? " (it is a relationship)" : entity.isComposite(key) ? " (it is a composite attribute: use compositeValue(forKey:) or \(key).element)" : ""
            throw StoreError(.unknownName, "\(entity.name) has no attribute \(key)\(hint)", entity: entity.name, property: key)
        }
        return position
    }

    private func relationshipIndex(_ key: String, toMany: Bool) throws -> Int {
        guard let index = entity.relationshipPosition(key) else {
            throw StoreError(.unknownName, "\(entity.name) has no relationship \(key)", entity: entity.name, property: key)
        }
        guard entity.relationships[index].isToMany == toMany else {
            throw StoreError(.typeMismatch, "\(entity.name).\(key) is \(toMany ? "to-one" : "to-many")", entity: entity.name, property: key)
        }
        return index
    }

    // MARK: Attributes

    /// The value of an attribute, as the Swift type asked for.
    ///
    /// ```swift
    /// let age: Int? = try person.value(forKey: "age")      // nil when it has none
    /// let name = try person.value(forKey: "name", as: String.self)
    /// let any: Value = try person.value(forKey: "age")     // for dynamic code
    /// ```
    ///
    /// - Throws: ``StoreError/Code/unknownName`` for a name the entity lacks,
    ///   ``StoreError/Code/missingValue`` when the value is nil and `T` is not optional,
    ///   ``StoreError/Code/typeMismatch`` when the value is not a `T` (or does not fit one: 300
    ///   read as `Int8`), ``StoreError/Code/invalidObject`` when the object was deleted or its
    ///   context is gone.
    public func value<T: AttributeValue>(forKey key: String, as type: T.Type = T.self) throws -> T {
        let position = try attributePosition(key)
        var stored = Value.null
        if case .attribute(let value) = try currentValues().1[position] { stored = value }
        if let result = T(storedValue: stored) { return result }
        if stored == .null {
            throw StoreError(
                .missingValue, "\(entity.name).\(key) is nil; read it as \(T.self)? to allow that", entity: entity.name, property: key)
        }
        throw StoreError(
            .typeMismatch, "\(entity.name).\(key) holds \(stored.typeName) \(stored), which does not read as \(T.self)",
            entity: entity.name, property: key)
    }

    /// Sets an attribute to a Swift value (nil, for an optional, clears it).
    ///
    /// - Throws: ``StoreError/Code/typeMismatch`` naming entity and property when the value
    ///   does not fit the attribute's type (an integer out of its range included).
    public func setValue<T: AttributeValue>(_ value: T, forKey key: String) throws {
        guard let stored = value.storedValue else {
            throw StoreError(
                .typeMismatch, "\(entity.name).\(key): \(value) does not fit a stored integer (64 bits, signed)",
                entity: entity.name, property: key)
        }
        try setValue(stored, forKey: key)
    }

    /// Sets an attribute to a ``Value``. A value of another numeric type converts when it fits
    /// (see ``Value/converted(to:)``): `setValue(42, forKey: "price")` on a double attribute
    /// stores 42.0.
    ///
    /// - Throws: ``StoreError/Code/typeMismatch`` naming entity, property, expected and given
    ///   type when the value does not fit.
    public func setValue(_ value: Value, forKey key: String) throws {
        try setAttributeValue(value, at: try attributePosition(key))
    }

    /// Sets the attribute at `position` as ``setValue(_:forKey:)-(Value,_)`` does.
    package func setAttributeValue(_ value: Value, at position: Int) throws {
        try store(try storable(value, at: position), at: position)
    }

    /// Sets several attributes (a composite's elements) together: each value is converted
    /// first, so that one the attribute cannot hold changes none of them.
    package func setAttributeValues(_ values: [(position: Int, value: Value)]) throws {
        var converted: [(position: Int, value: Value)] = []
        converted.reserveCapacity(values.count)
        for (position, value) in values { converted.append((position, try storable(value, at: position))) }
        for (position, value) in converted { try store(value, at: position) }
    }

    /// `value` as attribute `position` holds it.
    private func storable(_ value: Value, at position: Int) throws -> Value {
        let type = entity.attributes[position].type
        // Most values fit as they are (and are stored without a copy); the others convert.
        if value.fits(type) { return value }
        guard let converted = value.converted(to: type) else {
            let key = entity.attributes[position].name
            throw StoreError(.typeMismatch, "\(entity.name).\(key): \(value.misfit(type))", entity: entity.name, property: key)
        }
        return converted
    }

    private func store(_ value: Value, at position: Int) throws {
        // An object not inserted through this instance goes to its context at once (which
        // finds an inserted one by its ID): one lock, not two.
        if insertSlot < 0, let context { return try context.setRaw(objectID, position, .attribute(value)) }
        let constrained = entity.isConstrained[position]
        if contextState.withLock({ $0.setInserted(objectID, slot: insertSlot, position, .attribute(value), constrained: constrained) }) { return }
        let context = try liveContext()
        try context.setRaw(objectID, position, .attribute(value))
    }

    /// An attribute's value, or nil when it is nil, unknown, or the object is gone.
    public subscript(key: String) -> Value? {
        guard let value = try? value(forKey: key, as: Value.self), value != .null else { return nil }
        return value
    }

    // MARK: Relationships

    /// The object a to-one relationship points to.
    public func object(forKey key: String) throws -> ManagedObject? {
        let index = try relationshipIndex(key, toMany: false)
        let (context, values) = try currentValues()
        guard case .toOne(let id?) = values[entity.attributes.count + index] else { return nil }
        return context.registeredObject(id)
    }

    /// Points a to-one relationship at `object` (nil clears it); the inverse follows.
    public func setObject(_ object: ManagedObject?, forKey key: String) throws {
        let index = try relationshipIndex(key, toMany: false)
        let context = try liveContext()
        if let object { try context.checkOwnership(object) }
        try context.setRelationship(objectID, index, to: object.map { [$0.objectID] } ?? [])
    }

    /// The objects of a to-many relationship (in order for an ordered one).
    public func objects(forKey key: String) throws -> [ManagedObject] {
        let index = try relationshipIndex(key, toMany: true)
        let (context, values) = try currentValues()
        return values[entity.attributes.count + index].targets.map(context.registeredObject)
    }

    /// Replaces the objects of a to-many relationship; inverses follow.
    public func setObjects(_ objects: [ManagedObject], forKey key: String) throws {
        let index = try relationshipIndex(key, toMany: true)
        let context = try liveContext()
        for object in objects { try context.checkOwnership(object) }
        try context.setRelationship(objectID, index, to: objects.map(\.objectID))
    }

    /// Adds an object to a to-many relationship (at the end of an ordered one).
    public func addObject(_ object: ManagedObject, forKey key: String) throws {
        try setObjects(try objects(forKey: key) + [object], forKey: key)
    }

    /// Removes an object from a to-many relationship.
    public func removeObject(_ object: ManagedObject, forKey key: String) throws {
        try setObjects(try objects(forKey: key).filter { $0 !== object }, forKey: key)
    }

    // MARK: State

    /// Whether the object was inserted since its context's last save.
    public var isInserted: Bool { context?.isInserted(objectID) ?? false }
    /// Whether it has unsaved changes to existing values.
    public var isUpdated: Bool { context?.isUpdated(objectID) ?? false }
    /// Whether it was deleted since the last save.
    public var isDeleted: Bool { context?.isDeleted(objectID) ?? false }
    /// Whether it has unsaved changes of any kind.
    public var hasChanges: Bool { isInserted || isUpdated || isDeleted }

    /// The unsaved values, by property name.
    public var changedValues: [String: PropertyValue] {
        guard let context else { return [:] }
        var result: [String: PropertyValue] = [:]
        for (position, value) in context.changes(of: objectID) {
            let name =
                position < entity.attributes.count
                ? entity.attributes[position].name : entity.relationships[position - entity.attributes.count].name
            result[name] = value
        }
        return result
    }

    /// Deletes the object from its context (applying delete rules).
    public func delete() throws {
        try liveContext().delete(self)
    }

    /// Discards the object's unsaved attribute changes. Relationship changes stay (their
    /// inverses live on other objects), and so does a pending delete.
    public func refresh() {
        let attributes = entity.attributes.count
        context?.state.withLock { state in
            guard var update = state.updated[objectID] else { return }
            update.keepChanges { $0.key >= attributes }
            state.updated[objectID] = update.values.isEmpty ? nil : update
        }
    }
}
