extension ObjectContext {
    /// An aggregate over the objects that match (unsaved changes included).
    ///
    /// ```swift
    /// let pages = try context.aggregate(.sum("pages"), FetchRequest("Book", predicate: try FetchPredicate(format: "year > 2000")))
    /// ```
    public func aggregate(_ function: AggregateFunction, _ request: FetchRequest) throws -> Value {
        try aggregate([function], request, groupBy: []).first?.values.first ?? AggregateAccumulator(function.operation).result
    }

    /// Aggregates over the objects that match, grouped by the values of `keys` (SQL's
    /// `GROUP BY`): one group per distinct combination, sorted by the key values (nil first).
    /// Without keys, one group with every object (none when nothing matches).
    public func aggregate(_ functions: [AggregateFunction], _ request: FetchRequest, groupBy keys: [String]) throws -> [AggregateGroup] {
        let query = try PreparedQuery(request, model: model)
        let entity = query.entity
        func path(_ key: String) throws -> CompiledKeyPath {
            let resolved = try CompiledKeyPath.resolve(key.split(separator: ".").map(String.init), from: entity, in: model)
            guard resolved.attributeType != nil, !resolved.isToMany else {
                throw StoreError(.invalidPredicate, "aggregate: \(entity.name).\(key) must lead to one attribute", entity: entity.name, property: key)
            }
            return resolved
        }
        let groupPaths = try keys.map(path)
        let functionPaths = try functions.map { function -> CompiledKeyPath? in
            guard let key = function.key else { return nil }
            let resolved = try path(key)
            if function == .sum(key) || function == .average(key), let type = resolved.attributeType, !QueryValue.isNumber(type) {
                throw StoreError(
                    .invalidPredicate, "aggregate: \(function) needs a number; \(entity.name).\(key) is \(type)",
                    entity: entity.name, property: key)
            }
            return resolved
        }
        var groups: [[Value]: [AggregateAccumulator]] = [:]
        let empty = functions.map { AggregateAccumulator($0.operation) }
        let snapshot = baseSnapshot
        let paged = request.fetchOffset > 0 || request.fetchLimit != nil
        if groupPaths.isEmpty, !paged, !hasPendingChangesInChain, query.plan.scans(snapshot, family: query.family) {
            // Nothing unsaved, no groups: each thread accumulates over its share of the rows.
            let partials = snapshot.objects.visit(query.family) {
                AggregatingVisitor(
                    filter: query.scanFilter(snapshot), paths: functionPaths, accumulators: empty, reader: ObjectReader.committed(snapshot))
            }
            guard var total = partials.first, partials.contains(where: \.matched) else { return [] }
            for partial in partials.dropFirst() { total.merge(partial) }
            return [AggregateGroup(keys: [], values: total.accumulators.map(\.result))]
        }
        let reader = ObjectReader { [self] in view(of: $0, in: snapshot) }
        try forEachMatch(query, snapshot: snapshot, ids: paged ? matchingIDs(request, in: snapshot) : nil) { id, view in
            let group = groupPaths.map { Self.read($0, id, view, reader) }
            var accumulators = groups.removeValue(forKey: group) ?? empty
            for (index, path) in functionPaths.enumerated() {
                accumulators[index].add(path.map { Self.read($0, id, view, reader) } ?? .boolean(true))
            }
            groups[group] = accumulators
        }
        return groups.map { group, accumulators in
            AggregateGroup(keys: group, values: accumulators.map(\.result))
        }.sorted { lhs, rhs in
            for (a, b) in zip(lhs.keys, rhs.keys) {
                let order = QueryValue.order(a, b) ?? .orderedSame
                if order != .orderedSame { return order == .orderedAscending }
            }
            return false
        }
    }

    /// The one value a key path gives for an object (nil when it gives none).
    static func read(_ path: CompiledKeyPath, _ id: ObjectID, _ view: ObjectView, _ reader: ObjectReader) -> Value {
        if case .value(let value) = path.evaluate(id, view, reader) { return value }
        return .null
    }

    /// The objects that match, in pages of `batchSize`: the order is computed once (object IDs
    /// only) and each page's objects are made when the page is read, so a large result is never
    /// held as objects all at once.
    public func pages(_ request: FetchRequest, batchSize: Int) throws -> FetchPages {
        FetchPages(context: self, ids: try matchingIDs(request), batchSize: max(1, batchSize))
    }
}

/// The results of a fetch, a page at a time (``ObjectContext/pages(_:batchSize:)``).
public struct FetchPages: Sequence {
    let context: ObjectContext
    /// Every matching object's ID, in order.
    public let ids: [ObjectID]
    /// Objects per page.
    public let batchSize: Int

    /// The number of pages.
    public var count: Int { ids.isEmpty ? 0 : (ids.count - 1) / batchSize + 1 }

    /// An iterator over the pages, each page fetched as it is reached.
    public func makeIterator() -> AnyIterator<[ManagedObject]> {
        var start = 0
        return AnyIterator {
            guard start < ids.count else { return nil }
            let end = Swift.min(start + batchSize, ids.count)
            defer { start = end }
            return context.registeredObjects(ids[start..<end])
        }
    }
}

/// Accumulates aggregates over the rows one thread of a scan sees.
private struct AggregatingVisitor: RowVisitor {
    struct Partial: Sendable {
        var accumulators: [AggregateAccumulator]
        var matched: Bool

        mutating func merge(_ other: Partial) {
            for index in accumulators.indices { accumulators[index].merge(other.accumulators[index]) }
            matched = matched || other.matched
        }
    }

    let filter: ScanFilter?
    private let paths: [CompiledKeyPath?]
    /// For each path that is one of the object's own attributes, its position in the row.
    private let positions: [Int?]
    private let reader: ObjectReader
    private var partial: Partial
    private let empty: [AggregateAccumulator]

    init(filter: ScanFilter?, paths: [CompiledKeyPath?], accumulators: [AggregateAccumulator], reader: ObjectReader) {
        self.filter = filter
        self.paths = paths
        positions = paths.map { $0?.directAttribute }
        self.reader = reader
        partial = Partial(accumulators: accumulators, matched: false)
        empty = accumulators
    }

    mutating func visitMatches(_ matches: SlotMask, in chunk: ChunkScan) {
        // Each function of one of the object's own attributes adds the values of its column, in
        // slot order as rows would; any other reads the rows.
        partial.matched = true
        for index in paths.indices {
            if paths[index] == nil {
                matches.forEach { _ in partial.accumulators[index].add(.boolean(true)) }  // a count of objects
            } else if let position = positions[index], let column = Self.column(position, for: partial.accumulators[index].operation, in: chunk) {
                partial.accumulators[index].add(column, matches)
            } else {
                chunk.forEachRow(in: matches) { _, id, row in add(index, id, row) }
            }
        }
    }

    mutating func visit(_ id: ObjectID, _ row: BorrowedRow) {
        partial.matched = true
        for index in paths.indices { add(index, id, row) }
    }

    /// The column a function reads: a count, sum or average makes it (it adds numbers straight
    /// from its arrays); a minimum or maximum, which decodes each value, only reads one another
    /// scan made.
    private static func column(_ position: Int, for operation: CollectionOperator, in chunk: ChunkScan) -> ChunkColumn? {
        switch operation {
        case .count, .sum, .average: chunk.column(position)
        case .minimum, .maximum: chunk.existingColumn(position)
        }
    }

    /// Adds the value function `index` reads of one object.
    private mutating func add(_ index: Int, _ id: ObjectID, _ row: BorrowedRow) {
        if let position = positions[index] {
            partial.accumulators[index].add(encoded: row.bytes.value(position))
        } else {
            let view = ObjectView(base: .row(row.owned()), changes: nil)
            partial.accumulators[index].add(paths[index].map { ObjectContext.read($0, id, view, reader) } ?? .boolean(true))
        }
    }

    mutating func takeResult() -> Partial {
        defer { partial = Partial(accumulators: empty, matched: false) }
        return partial
    }
}
