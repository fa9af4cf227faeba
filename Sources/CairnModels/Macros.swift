/// Makes a final class a typed model of Cairn, as SwiftData's `@Model` does: each stored `var`
/// becomes a persisted property (an attribute, or a relationship when its type is another
/// `@Managed` class, an optional of one or an array of them), read and written in the object's
/// context with Core Data's semantics.
///
/// ```swift
/// @Managed final class Author {
///     @Attribute(.unique) var name: String
///     var born: Int?
///     @Relationship(deleteRule: .cascade, inverse: \Book.author) var books: [Book] = []
///     init(name: String) { self.name = name }
/// }
/// ```
///
/// The class becomes ``ManagedModel`` and `Observable`. Mark a stored property that the store
/// must not keep `@Transient` (it needs an initial value). See docs/MODELS.md.
@attached(
    member, names: named(_managedState), named(_$observation), named(init(managedState:)), named(managedSchema),
    named(_managedPropertiesChanged))
@attached(memberAttribute)
@attached(extension, conformances: ManagedModel, Observable)
public macro Managed() = #externalMacro(module: "CairnModelsMacros", type: "ManagedMacro")

/// The accessors `@Managed` gives its n-th persisted property (not written by hand).
@attached(accessor, names: named(init), named(get), named(set))
@attached(peer, names: prefixed(_))
public macro _PersistedProperty(_ ordinal: Int) = #externalMacro(module: "CairnModelsMacros", type: "PersistedPropertyMacro")

/// Options of a persisted attribute: `@Attribute(.unique)`, `@Attribute(originalName: "title")`
/// (a rename that migration follows), `@Attribute(.ephemeral)` (kept in memory, never saved).
@attached(peer)
public macro Attribute(_ options: AttributeOption..., originalName: String? = nil) =
    #externalMacro(module: "CairnModelsMacros", type: "MarkerMacro")

/// Options of a relationship: what deleting the object does to the other end, the inverse
/// (`inverse: \Book.author`; inferred when one relationship of the other class points back),
/// bounds on a to-many's count, and the name it had before (a rename that migration follows).
@attached(peer)
public macro Relationship(
    deleteRule: DeleteRule = .nullify, minimumModelCount: Int? = nil, maximumModelCount: Int? = nil, originalName: String? = nil,
    inverse: AnyKeyPath? = nil
) = #externalMacro(module: "CairnModelsMacros", type: "MarkerMacro")

/// A stored property that the store does not keep (it needs an initial value).
@attached(peer)
public macro Transient() = #externalMacro(module: "CairnModelsMacros", type: "MarkerMacro")

/// A uniqueness constraint in a `@Managed` class, on one or more properties each:
/// `#Unique<Book>([\.isbn], [\.title, \.year])`. No two objects may share the values of one.
@freestanding(declaration)
public macro Unique<T>(_ constraints: [PartialKeyPath<T>]...) = #externalMacro(module: "CairnModelsMacros", type: "ConstraintMacro")

/// Indexes for fetching in a `@Managed` class: `#Index<Book>([\.year], [\.title])`. Cairn keeps
/// an index of a property named alone; several together become one of the entity's fetch indexes.
@freestanding(declaration)
public macro Index<T>(_ indexes: [PartialKeyPath<T>]...) = #externalMacro(module: "CairnModelsMacros", type: "ConstraintMacro")

/// Makes a struct the type of a composite attribute (Core Data's): each stored property is an
/// element, stored, fetched, sorted and queried as an attribute of its own
/// (`#Predicate { $0.location.latitude > 60 }`), where a plain `Codable` struct is one
/// attribute of JSON text. An element is a stored value type, optional or not, a
/// `RawRepresentable` enum of one, or another `@Composite` struct.
///
/// ```swift
/// @Composite struct Location {
///     var latitude: Double
///     var longitude: Double
/// }
/// ```
@attached(extension, conformances: CompositeAttribute, names: named(compositeElements), named(init(compositeValues:)))
public macro Composite() = #externalMacro(module: "CairnModelsMacros", type: "CompositeMacro")
