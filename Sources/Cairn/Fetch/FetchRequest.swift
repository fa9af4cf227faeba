/// An order on an attribute, or on an attribute reached through to-one relationships
/// (`author.lastName`).
public struct SortKey: Sendable, Hashable {
    /// The attribute's name or key path.
    public var key: String
    /// Ascending (nil first) or descending.
    public var ascending: Bool
    /// Strings compare without regard to case.
    public var caseInsensitive: Bool

    /// Sorts by `key`.
    public init(_ key: String, ascending: Bool = true, caseInsensitive: Bool = false) {
        self.key = key
        self.ascending = ascending
        self.caseInsensitive = caseInsensitive
    }
}

/// What to fetch: objects of an entity that match a predicate, in an order, a page of them.
///
/// ```swift
/// var request = FetchRequest("Book", predicate: .compare("year", .greater, 1990))
/// request.sortKeys = [SortKey("year", ascending: false), SortKey("title")]
/// request.fetchLimit = 20
/// let books = try context.fetch(request)
/// ```
public struct FetchRequest: Sendable, Hashable {
    /// The entity's name.
    public var entityName: String
    /// Which objects (nil: all).
    public var predicate: FetchPredicate?
    /// Their order (ties keep a stable order by object ID).
    public var sortKeys: [SortKey]
    /// How many matching objects to skip.
    public var fetchOffset: Int
    /// How many to return at most (nil: all).
    public var fetchLimit: Int?
    /// Whether objects of sub-entities count (default true, as in Core Data).
    public var includesSubentities: Bool
    /// Whether the offset and limit count from the end of the order (AsyncCoreData's reversed
    /// range): the results come last first.
    public var reversesOrder = false

    /// A request for objects of an entity.
    public init(
        _ entityName: String, predicate: FetchPredicate? = nil, sortKeys: [SortKey] = [],
        fetchOffset: Int = 0, fetchLimit: Int? = nil, includesSubentities: Bool = true
    ) {
        self.entityName = entityName
        self.predicate = predicate
        self.sortKeys = sortKeys
        self.fetchOffset = fetchOffset
        self.fetchLimit = fetchLimit
        self.includesSubentities = includesSubentities
    }
}

extension FetchRequest {
    /// Asks for the objects at `range` of the order, counted from the start, or from the end
    /// when `reversed` (the last object first), as AsyncCoreData's ranged fetches do.
    public mutating func setRange(_ range: Range<Int>, reversed: Bool = false) {
        fetchOffset = range.lowerBound
        fetchLimit = range.count
        reversesOrder = reversed
    }
}
