import Cairn
import CairnSupport

/// What `@Managed` says of a class: its persisted properties in order, and its `#Unique` and
/// `#Index` lines. Cairn derives the class's entity from it, and binds it to a store's entity.
public final class ManagedSchema: @unchecked Sendable {
    // Safety: immutable after init (key paths and metatypes are never mutated), but for the
    // key path memory and the last binding, each behind its lock.

    /// The class.
    public let type: any ManagedModel.Type
    /// The persisted properties, by ordinal.
    public let properties: [ManagedProperty]
    /// Uniqueness constraints, each as the names of its properties.
    public let uniqueness: [[String]]
    /// Indexes, each as the names of its properties.
    public let indexes: [[String]]
    /// The property of each key path.
    private let byKeyPath: [AnyKeyPath: Int]
    /// The stored attribute of each key path to an element of a composite property
    /// (`\Place.location.latitude`: `location.latitude`), through non-optional composites.
    private let elementNames: [AnyKeyPath: String]
    /// The description of each composite property's key path, with its ordinal.
    private let compositePrefixes: [(String, Int)]
    /// The key path instances met before, by identity, with the ordinal each names (nil: none).
    /// A key path literal is one instance for the life of the program, so a predicate or sort
    /// built in a loop finds its key path here without hashing the path (most of a lookup's
    /// translation). Each entry holds its key path, so that its identity is not reused; at most
    /// ``keyPathMemoryLimit`` entries (then it starts again).
    private let knownKeyPaths = Protected<[ObjectIdentifier: (keyPath: AnyKeyPath, ordinal: Int?)]>([:])
    /// The most key path instances ``knownKeyPaths`` keeps (key paths made at run time, by
    /// appending, are new instances each time).
    private static let keyPathMemoryLimit = 256

    /// Describes a class (the `@Managed` expansion calls this).
    public init<M: ManagedModel>(
        _ type: M.Type, properties: [ManagedProperty], uniqueness: [[PartialKeyPath<M>]], indexes: [[PartialKeyPath<M>]]
    ) {
        self.type = type
        self.properties = properties
        var byKeyPath: [AnyKeyPath: Int] = [:]
        for property in properties { byKeyPath[property.keyPath] = property.ordinal }
        self.byKeyPath = byKeyPath
        var elementNames: [AnyKeyPath: String] = [:]
        for property in properties {
            guard case .composite(let type, optional: false) = property.kind, let layout = try? CompositeLayout.of(type) else { continue }
            for leaf in layout.leaves {
                if let path = leaf.keyPath.flatMap({ property.keyPath.appending(path: $0) }) { elementNames[path] = property.name + "." + leaf.path }
            }
        }
        self.elementNames = elementNames
        let prefixes: [(String, Int)] = properties.compactMap { property in
            guard case .composite = property.kind else { return nil }
            return (String(describing: property.keyPath), property.ordinal)
        }
        compositePrefixes = prefixes
        // A property by its name; an element of a composite by its attribute's (`route.length`).
        let name = { (path: PartialKeyPath<M>) in
            byKeyPath[path].map { properties[$0].name }
                ?? Self.compositeElementName(for: path, elementNames: elementNames, prefixes: prefixes, properties: properties) ?? "\(path)"
        }
        self.uniqueness = uniqueness.map { $0.map(name) }
        self.indexes = indexes.map { $0.map(name) }
    }

    /// The persisted property a key path of the class names, if it names one.
    public func property(for keyPath: AnyKeyPath) -> ManagedProperty? {
        ordinal(for: keyPath).map { properties[$0] }
    }

    /// The ordinal of the persisted property a key path of the class names, if it names one
    /// (``property(for:)`` without copying the property).
    func ordinal(for keyPath: AnyKeyPath) -> Int? {
        let identity = ObjectIdentifier(keyPath)
        if let known = knownKeyPaths.withLock({ $0[identity] }) { return known.ordinal }
        let ordinal = byKeyPath[keyPath]
        knownKeyPaths.withLock { known in
            // (Full, of key paths made at run time most likely: it starts again, so that the
            // literals used from now on are remembered.)
            if known.count >= Self.keyPathMemoryLimit { known.removeAll(keepingCapacity: true) }
            known[identity] = (keyPath, ordinal)
        }
        return ordinal
    }

    /// The stored attribute an element of a composite property is (`location.latitude`), by
    /// its key path from the class (`\Place.location.latitude`, `\Place.address?.city`); nil
    /// when it names no element.
    func compositeElementName(for keyPath: AnyKeyPath) -> String? {
        Self.compositeElementName(for: keyPath, elementNames: elementNames, prefixes: compositePrefixes, properties: properties)
    }

    private static func compositeElementName(
        for keyPath: AnyKeyPath, elementNames: [AnyKeyPath: String], prefixes: [(String, Int)], properties: [ManagedProperty]
    ) -> String? {
        if let name = elementNames[keyPath] { return name }
        // Through an optional (`\Place.address?.city`), key paths cannot be appended: the
        // description is the property's key path's (its computed accessor's, the same for both)
        // followed by the elements' names.
        let text = String(describing: keyPath)
        for (prefix, ordinal) in prefixes where text.hasPrefix(prefix) {
            let rest = text.dropFirst(prefix.count)
            guard let first = rest.first, "?!.".contains(first) else { continue }
            let property = properties[ordinal]
            guard case .composite(let type, _) = property.kind, let layout = try? CompositeLayout.of(type) else { return nil }
            let path = rest.split(separator: ".").map { $0.trimmingCharacters(in: ["?", "!"]) }.filter { !$0.isEmpty }.joined(separator: ".")
            return layout.leaves.contains { $0.path == path } ? property.name + "." + path : nil
        }
        return nil
    }

    /// The binding of the class to its own entity in the store it was last bound in, with that
    /// store's bindings (held: while it is, no other store's can take its address).
    private let lastBound = Protected<(bindings: AnyObject, binding: EntityBinding)?>(nil)

    /// The class's binding to its own entity in `store`, if it is the last one noted.
    func lastBinding(in store: Store) -> EntityBinding? {
        lastBound.withLock { last in last.flatMap { $0.bindings === store.typedBindings ? $0.binding : nil } }
    }

    /// Notes the class's binding to its own entity in `store`.
    func noteBinding(_ binding: EntityBinding, in store: Store) {
        lastBound.withLock { $0 = (store.typedBindings, binding) }
    }

    /// The class's name, for messages.
    var typeName: String { String(describing: type) }
}

/// One persisted property of a `@Managed` class.
public struct ManagedProperty: @unchecked Sendable {
    // Safety: immutable; the key path is never mutated.

    /// Its name (the attribute's or relationship's).
    public let name: String
    /// Its key path on the class.
    public let keyPath: AnyKeyPath
    /// Its place among the class's persisted properties.
    public let ordinal: Int
    /// What `@Attribute` says (nil: no `@Attribute`).
    public let attribute: AttributeOptions?
    /// What `@Relationship` says (nil: no `@Relationship`).
    public let relationship: RelationshipOptions?
    /// The property's Swift type.
    public let valueType: Any.Type
    /// What its type makes it: an attribute of a kind, or a relationship.
    let kind: PropertyKind

    /// Describes a property (the `@Managed` expansion calls this).
    public init<Root, V>(
        _ name: String, _ keyPath: KeyPath<Root, V>, ordinal: Int, attribute: AttributeOptions? = nil, relationship: RelationshipOptions? = nil
    ) {
        self.name = name
        self.keyPath = keyPath
        self.ordinal = ordinal
        self.attribute = attribute
        self.relationship = relationship
        self.valueType = V.self
        self.kind = PropertyKind(V.self)
    }
}

/// An option of `@Attribute`.
public enum AttributeOption: Sendable, Hashable {
    /// No two objects may hold the same value (a uniqueness constraint on the attribute alone).
    case unique
    /// Kept in memory with the object, never saved (Core Data's transient attribute).
    case ephemeral
    /// The store keeps an index of the attribute for fetching.
    case indexed
}

/// What `@Attribute(…)` says of a property.
public struct AttributeOptions: Sendable, Hashable {
    /// The options.
    public var options: [AttributeOption]
    /// The attribute's name in the model version before (a rename that migration follows).
    public var originalName: String?

    /// The options of `@Attribute(…)` (the `@Managed` expansion calls this).
    public init(_ options: AttributeOption..., originalName: String? = nil) {
        self.options = options
        self.originalName = originalName
    }
}

/// What `@Relationship(…)` says of a property.
public struct RelationshipOptions: @unchecked Sendable {
    // Safety: immutable; the key path is never mutated.

    /// What deleting the object does to the objects at the other end.
    public var deleteRule: DeleteRule
    /// The fewest objects a to-many may hold (nil: no bound).
    public var minimumModelCount: Int?
    /// The most objects a to-many may hold (nil: no bound).
    public var maximumModelCount: Int?
    /// The relationship's name in the model version before.
    public var originalName: String?
    /// The relationship of the other class that points back.
    public var inverse: AnyKeyPath?

    /// The options of `@Relationship(…)` (the `@Managed` expansion calls this).
    public init(
        deleteRule: DeleteRule = .nullify, minimumModelCount: Int? = nil, maximumModelCount: Int? = nil, originalName: String? = nil,
        inverse: AnyKeyPath? = nil
    ) {
        self.deleteRule = deleteRule
        self.minimumModelCount = minimumModelCount == 0 ? nil : minimumModelCount
        self.maximumModelCount = maximumModelCount == 0 ? nil : maximumModelCount
        self.originalName = originalName
        self.inverse = inverse
    }
}
