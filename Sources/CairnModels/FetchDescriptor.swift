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
        let entity = try ModelBinding.binding(M.self, in: store).entity
        var sortKeys: [SortKey] = []
        for descriptor in sortBy { sortKeys.append(try Self.sortKey(descriptor)) }
        var translated: FetchPredicate?
        if let predicate { translated = try FetchPredicate(typed: predicate, entity: entity.name) }
        return FetchRequest(
            entity.name, predicate: translated, sortKeys: sortKeys, fetchOffset: fetchOffset ?? 0, fetchLimit: fetchLimit,
            includesSubentities: includesSubentities)
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
