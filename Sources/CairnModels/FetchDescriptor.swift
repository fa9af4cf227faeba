import Cairn

/// What to fetch of a `@Managed` class, as SwiftData's `FetchDescriptor`: the objects that match
/// a `#Predicate`, sorted by key paths, a page of them.
///
/// ```swift
/// var recent = FetchDescriptor<Book>(
///     predicate: #Predicate { $0.year ?? 0 > 1970 && $0.author?.name == "Ursula K. Le Guin" },
///     sortBy: [SortDescriptor(\.year, order: .reverse), SortDescriptor(\.title)])
/// recent.fetchLimit = 20
/// let books = try context.fetch(recent)
/// ```
public struct FetchDescriptor<M: ManagedModel> {
    /// Which objects (nil: all of the class's entity and its sub-entities).
    public var predicate: Predicate<M>?
    /// Their order, each on a persisted attribute (ties keep a stable order by object ID).
    /// Strings sort as the descriptor's comparator says: `.lexical` by their characters, the
    /// localized comparators without regard to case.
    public var sortBy: [SortDescriptor<M>]
    /// How many matching objects to skip.
    public var fetchOffset: Int?
    /// How many to return at most (nil: all).
    public var fetchLimit: Int?
    /// Whether objects of sub-entities count (default true).
    public var includesSubentities = true

    /// A descriptor for objects of `M`.
    public init(predicate: Predicate<M>? = nil, sortBy: [SortDescriptor<M>] = []) {
        self.predicate = predicate
        self.sortBy = sortBy
    }

    /// The request the descriptor stands for, in a store's model. (Inlinable: specialized for
    /// the class where it is called, its fields are read without generic metadata.)
    @inlinable
    func request(in store: Store) throws -> FetchRequest {
        try request(in: store, binding: ModelBinding.binding(M.self, in: store))
    }

    /// ``request(in:)`` given `M`'s binding to its own entity in the store.
    @inlinable
    func request(in store: Store, binding: EntityBinding) throws -> FetchRequest {
        let entity = binding.entity
        var sortKeys: [SortKey] = []
        for descriptor in sortBy { sortKeys.append(try Self.sortKey(descriptor)) }
        var translated: FetchPredicate?
        if let predicate { translated = try Self.keyLookup(predicate.expression) ?? FetchPredicate(typed: predicate, entity: entity.name) }
        return FetchRequest(
            entity.name, predicate: translated, sortKeys: sortKeys, fetchOffset: fetchOffset ?? 0, fetchLimit: fetchLimit,
            includesSubentities: includesSubentities)
    }

    /// `$0.property == value` on a `String`, `Int` or `UUID` property, the lookup by key an app
    /// runs in a loop, recognized by its concrete type in code specialized for `M` (one type
    /// comparison each): no generic walk of the expression. Nil for any other predicate, which
    /// the general translation then takes (giving the same result for these).
    @inlinable
    static func keyLookup(_ expression: any StandardPredicateExpression<Bool>) -> FetchPredicate? {
        equality(expression, String.self) ?? equality(expression, Int.self) ?? equality(expression, UUID.self)
    }

    /// ``keyLookup(_:)`` for one type of property. (The values of these types are never nil,
    /// Boolean or NaN, the values the general translation gives forms of their own.)
    @inlinable
    static func equality<V>(_ expression: any StandardPredicateExpression<Bool>, _: V.Type) -> FetchPredicate?
    where V: AttributeValue & Equatable & Codable & Sendable {
        typealias Lookup = PredicateExpressions.Equal<
            PredicateExpressions.KeyPath<PredicateExpressions.Variable<M>, V>, PredicateExpressions.Value<V>
        >
        guard let lookup = expression as? Lookup, let property = M.predicateProperty(for: lookup.lhs.keyPath), !property.storesJSON,
            let value = lookup.rhs.value.storedValue
        else { return nil }
        return .comparison(key: property.name, .equal, value)
    }

    @usableFromInline
    static func sortKey(_ descriptor: SortDescriptor<M>) throws -> SortKey {
        let caseInsensitive = descriptor.stringComparator.map { $0 != .lexical } ?? false
        let schema = M.managedSchema
        guard let keyPath = descriptor.keyPath, let property = schema.property(for: keyPath) else {
            // An element of a composite property (`\.location.latitude`).
            if let keyPath = descriptor.keyPath, let element = schema.compositeElementName(for: keyPath) {
                return SortKey(element, ascending: descriptor.order == .forward, caseInsensitive: caseInsensitive)
            }
            throw StoreError(
                .invalidArgument,
                "SortDescriptor on \(descriptor.keyPath.map { "\($0)" } ?? "a comparator") of \(M.self): sort by a persisted attribute's key path (\\.title)",
                entity: M.entityName)
        }
        switch property.kind {
        case .attribute: break
        case .composite:
            throw StoreError(
                .invalidArgument,
                "SortDescriptor on \(M.self).\(property.name): a composite has no order; sort by one of its elements (\\.\(property.name).element)",
                entity: M.entityName, property: property.name)
        case .toOne, .toMany, .unsupported:
            throw StoreError(
                .invalidArgument, "SortDescriptor on \(M.self).\(property.name): a relationship has no order; sort by an attribute",
                entity: M.entityName, property: property.name)
        }
        return SortKey(property.name, ascending: descriptor.order == .forward, caseInsensitive: caseInsensitive)
    }
}
