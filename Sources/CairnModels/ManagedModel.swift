/// A typed model class: what `@Managed` makes of a final class. Don't conform by hand.
///
/// An instance is either new (made by its initializer: it keeps its values itself until
/// `ObjectContext.insert(_:)` puts it into a context, or until it is linked to an object of
/// one) or an object of a context (inserted, or made by a fetch): then each property reads the
/// context's view of the object and each change is an unsaved change of that context, exactly as
/// `ManagedObject.setValue(_:forKey:)` is. An object belongs to its context: pass
/// its ``persistentModelID`` to another context or task, not the object (the class is not
/// `Sendable`, so the compiler refuses to send it).
public protocol ManagedModel: AnyObject, Hashable, Observable, PredicateKeyPathNaming {
    /// Where the object's values live (written by `@Managed`).
    var _managedState: ManagedState { get set }
    /// Makes the object of a fetch (written by `@Managed`).
    init(managedState: ManagedState)
    /// The class's persisted properties and constraints (written by `@Managed`).
    static var managedSchema: ManagedSchema { get }
    /// Tells observers that the persisted properties may have changed (written by `@Managed`).
    func _managedPropertiesChanged()
    /// The entity the class's objects are stored as. Default: the class's name.
    static var entityName: String { get }
}

extension ManagedModel {
    /// The same instance (one instance stands for an object in a context).
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs === rhs }
    /// The instance's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// The class's name.
    public static var entityName: String { String(describing: Self.self) }

    /// The object's identity, which any context and task can use (`ObjectContext.model(for:as:)`);
    /// nil until the object is inserted into a context.
    public var persistentModelID: ObjectID? { _managedState.object?.objectID }

    /// The context the object belongs to; nil before it is inserted, or once that context is gone.
    public var modelContext: ObjectContext? { _managedState.object?.context }

    /// The managed object underneath: the by-name way to the same object
    /// (`ManagedObject.value(forKey:as:)`); nil before the object is inserted.
    public var managedObject: ManagedObject? { _managedState.object }

    /// Whether the object has unsaved changes in its context (a new object that was not inserted
    /// yet has none).
    public var hasChanges: Bool { _managedState.object?.hasChanges ?? false }

    /// Whether the object was deleted from its context since its last save (or, after that
    /// save, no longer exists there).
    public var isDeleted: Bool {
        guard let object = _managedState.object else { return false }
        return object.isDeleted || object.context.map { $0.object(with: object.objectID) == nil } ?? true
    }
}

/// A persisted property's stored peer: it takes no room, and makes the compiler require every
/// initializer to set the property (as it would for a stored one).
public struct ManagedSlot: Sendable {
    /// The one value.
    public init() {}
}

extension ManagedModel {
    /// What a key path of the class stands for in a `#Predicate`: a persisted property by name.
    public static func predicateProperty(for keyPath: AnyKeyPath) -> PredicateProperty? {
        // (By ordinal, each field read in place: a property is large to copy, and a lookup by
        // key translates its predicate at every call.)
        let schema = managedSchema
        guard let ordinal = schema.ordinal(for: keyPath) else { return nil }
        if case .attribute(_, _, .json) = schema.properties[ordinal].kind { return PredicateProperty(name: schema.properties[ordinal].name, storesJSON: true) }
        return PredicateProperty(name: schema.properties[ordinal].name)
    }
}
