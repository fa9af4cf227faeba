import Cairn

/// A struct stored as a composite attribute (Core Data's): each of its stored properties is an
/// element, stored, fetched, sorted and queried as an attribute of its own (`location.latitude`),
/// where a plain `Codable` value is one attribute of JSON text. `@Composite` writes the
/// conformance; don't conform by hand.
///
/// ```swift
/// @Composite struct Location {
///     var latitude: Double
///     var longitude: Double
/// }
/// @Managed final class Place {
///     var name: String
///     var location: Location
/// }
/// let north = try context.fetch(FetchDescriptor<Place>(
///     predicate: #Predicate { $0.location.latitude > 60 }, sortBy: [SortDescriptor(\.location.longitude)]))
/// ```
///
/// An element is of a type an attribute holds (optional or not, a `RawRepresentable` enum of
/// one) or another `@Composite` struct.
public protocol CompositeAttribute: PredicateKeyPathNaming {
    /// The elements, in declaration order (written by `@Composite`).
    static var compositeElements: [CompositeElement] { get }
    /// Makes a value of the elements' stored values (written by `@Composite`).
    ///
    /// - Throws: ``CompositeValues/Unreadable`` when an element's stored value does not read as
    ///   its type.
    init(compositeValues: CompositeValues) throws
}

extension CompositeAttribute {
    /// What a key path of the struct stands for in a `#Predicate`: an element by name.
    public static func predicateProperty(for keyPath: AnyKeyPath) -> PredicateProperty? {
        guard let element = compositeElements.first(where: { $0.keyPath == keyPath }) else { return nil }
        if case .attribute(_, _, .json) = element.kind { return PredicateProperty(name: element.name, storesJSON: true) }
        return PredicateProperty(name: element.name)
    }
}

/// One element of a ``CompositeAttribute`` struct.
public struct CompositeElement: @unchecked Sendable {
    // Safety: immutable; the key path is never mutated.

    /// The element's name (its property's).
    public let name: String
    /// Its key path on the struct.
    public let keyPath: AnyKeyPath
    /// Its Swift type.
    public let valueType: Any.Type
    /// What its type makes it.
    let kind: PropertyKind

    /// Describes an element (the `@Composite` expansion calls this).
    public init<Root, V>(_ name: String, _ keyPath: KeyPath<Root, V>) {
        self.name = name
        self.keyPath = keyPath
        self.valueType = V.self
        self.kind = PropertyKind(V.self)
    }
}
