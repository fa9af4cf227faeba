extension ObjectContext {
    /// The objects that match a request, unsaved changes included (inserted objects that match
    /// are in, deleted ones out), as Core Data does.
    ///
    /// - Throws: ``StoreError`` for an unknown entity or key, or a comparison of an attribute
    ///   with a value of another type.
    public func fetch(_ request: FetchRequest) throws -> [ManagedObject] {
        registeredObjects(try matchingIDs(request))
    }

    /// The first object that matches, in the request's order.
    public func fetchFirst(_ request: FetchRequest) throws -> ManagedObject? {
        // The common lookup by unique key: one ID, one object, no list of either.
        if (request.fetchLimit ?? 1) > 0, let found = uniqueLookup(request, in: baseSnapshot) { return found.first.map(registeredObject) }
        var request = request
        request.fetchLimit = 1
        return try fetch(request).first
    }

    /// How many objects match (offset and limit applied).
    public func count(_ request: FetchRequest) throws -> Int {
        var request = request
        if request.fetchOffset == 0 && request.fetchLimit == nil {
            request.sortKeys = []  // the order cannot change the count
            let snapshot = baseSnapshot
            if let found = uniqueLookup(request, in: snapshot) { return found.count }
            let query = try PreparedQuery(request, model: model)
            let unsaved = hasPendingChangesInChain
            if !unsaved, query.matchesExactly(in: snapshot) {
                // The index's objects are exactly the matches: counted there.
                if let count = query.plan.count(in: snapshot, family: query.family) { return count }
            }
            if !unsaved, query.plan.scans(snapshot, family: query.family) {
                // Nothing unsaved and no index to use: each thread counts its share of the rows,
                // listing none of them.
                return snapshot.objects.visit(query.family) { CountingVisitor(filter: query.scanFilter(snapshot)) }.reduce(0, +)
            }
            return matchingIDs(query, in: snapshot).count
        }
        return try matchingIDs(request).count
    }

    /// Whether any object matches.
    public func exists(_ request: FetchRequest) throws -> Bool {
        var request = request
        if request.fetchOffset == 0 { request.sortKeys = [] }  // any match will do: no need to order them
        request.fetchLimit = 1
        return try !matchingIDs(request).isEmpty
    }

    /// Deletes every object that matches (delete rules apply); returns how many.
    @discardableResult
    public func deleteAll(_ request: FetchRequest) throws -> Int {
        let ids = try matchingIDs(request)
        for id in ids { try delete(id) }
        return ids.count
    }

    /// The IDs of the objects that match, in order: the result of a fetch without the objects.
    public func fetchIDs(_ request: FetchRequest) throws -> [ObjectID] {
        try matchingIDs(request)
    }

    /// How the request would be answered, in words: which index finds the candidates, or a
    /// scan; whether unsaved changes to objects of the fetched entities (along the chain of
    /// contexts) are added to them; the sort; the page.
    public func explain(_ request: FetchRequest) throws -> String {
        let query = try PreparedQuery(request, model: model)
        var lines = [query.plan.explanation(entity: query.entity.name, predicate: query.predicate != nil)]
        if hasPendingChanges(in: query.family) { lines.append("add this context's unsaved changes") }
        if !request.sortKeys.isEmpty {
            lines.append(
                "sort by "
                    + request.sortKeys.map { ($0.ascending ? "" : "-") + $0.key + ($0.caseInsensitive ? " (case-insensitive)" : "") }
                    .joined(separator: ", "))
        }
        if request.fetchOffset > 0 || request.fetchLimit != nil {
            lines.append(
                "keep \(request.fetchLimit.map { "\($0)" } ?? "all") from position \(request.fetchOffset)"
                    + (request.reversesOrder ? " counted from the end" : ""))
        }
        return lines.joined(separator: "\n")
    }

    /// Whether this context or one of its ancestors holds an unsaved change to an object of
    /// these entities: inserted, updated, deleted, or inserted and then deleted.
    func hasPendingChanges(in entities: Set<Int>) -> Bool {
        let here = state.withLock { state in
            state.inserted.contains { entities.contains($0.key.entity) } || state.updated.keys.contains { entities.contains($0.entity) }
                || state.deleted.contains { entities.contains($0.entity) } || state.discarded.contains { entities.contains($0.entity) }
        }
        return here || (parent?.hasPendingChanges(in: entities) ?? false)
    }

    /// Objects of these entities with unsaved changes along the chain of contexts: inserted
    /// ones, and (when `updated`) changed ones.
    func pendingIDs(_ entities: Set<Int>, updated: Bool) -> Set<ObjectID> {
        var ids = parent?.pendingIDs(entities, updated: updated) ?? []
        state.withLock { state in
            ids.formUnion(state.inserted.keys.filter { entities.contains($0.entity) })
            if updated { ids.formUnion(state.updated.keys.filter { entities.contains($0.entity) }) }
        }
        return ids
    }

    /// Whether this context and its ancestors hold no unsaved change at all.
    var hasPendingChangesInChain: Bool {
        state.withLock { !$0.inserted.isEmpty || !$0.updated.isEmpty || !$0.deleted.isEmpty || !$0.discarded.isEmpty }
            || (parent?.hasPendingChangesInChain ?? false)
    }

    /// Calls `body` with each object that matches (of `ids` when given, else of the plan).
    func forEachMatch(
        _ query: PreparedQuery, snapshot: StoreSnapshot, ids: [ObjectID]? = nil,
        _ body: (ObjectID, ObjectView) throws -> Void
    ) rethrows {
        let reader = ObjectReader { [self] in view(of: $0, in: snapshot) }
        func consider(_ id: ObjectID) throws {
            guard let view = view(of: id, in: snapshot), query.predicate?.evaluate(id, view, reader) ?? true else { return }
            try body(id, view)
        }
        if let ids {
            for id in ids {
                guard let view = view(of: id, in: snapshot) else { continue }
                try body(id, view)
            }
            return
        }
        let unsaved = hasPendingChangesInChain
        let candidates = query.plan.candidates(in: snapshot, family: query.family)
        switch (candidates, unsaved) {
        case (let candidates?, false):
            // Nothing unsaved: the candidates' committed rows are all there is.
            let committed = ObjectReader.committed(snapshot)
            let filter = query.predicate.map(RowFilter.init)
            for id in candidates {
                guard let row = snapshot.record(id)?.row,
                    row.withBorrowed({ filter?.evaluate(id, $0, committed) ?? true })
                else { continue }
                try body(id, ObjectView(base: .row(row), changes: nil))
            }
        case (let candidates?, true):
            var seen = Set(candidates)
            for id in candidates { try consider(id) }
            for id in pendingIDs(query.family, updated: true) where seen.insert(id).inserted { try consider(id) }
        case (nil, false):
            // Nothing unsaved: test the committed rows directly, on both cores.
            let ids = snapshot.objects.matching(query.family) { query.scanFilter(snapshot) }
            for (id, row) in ids { try body(id, ObjectView(base: .row(row), changes: nil)) }
        case (nil, true):
            for id in snapshot.objects.ids(query.family) { try consider(id) }
            for id in pendingIDs(query.family, updated: false) where snapshot.record(id) == nil { try consider(id) }
        }
    }

    /// The snapshot at the root of this context's chain.
    var baseSnapshot: StoreSnapshot { parent?.baseSnapshot ?? rootSnapshot }

    /// The IDs of the objects that match, in order, read from `snapshot` (one snapshot for a
    /// whole fetch; the root's latest when nil).
    func matchingIDs(_ request: FetchRequest, in given: StoreSnapshot? = nil) throws -> [ObjectID] {
        let snapshot = given ?? baseSnapshot
        if let found = uniqueLookup(request, in: snapshot) { return found.ids }
        return matchingIDs(try PreparedQuery(request, model: model), in: snapshot)
    }

    /// The IDs of the objects that match a prepared query, in order, read from `snapshot`.
    private func matchingIDs(_ query: PreparedQuery, in snapshot: StoreSnapshot) -> [ObjectID] {
        let sorted = !query.request.sortKeys.isEmpty
        if sorted, let ids = sortedScan(query, snapshot) { return ids }
        if !sorted, !hasPendingChangesInChain, let candidates = query.plan.candidates(in: snapshot, family: query.family) {
            // Nothing unsaved, no order but the IDs': the index's candidates, checked on their
            // borrowed rows (no view made) unless they are exactly the matches.
            if query.matchesExactly(in: snapshot) { return query.page(ObjectID.ordered(candidates)) }
            let committed = ObjectReader.committed(snapshot)
            let filter = query.predicate.map(RowFilter.init)
            let objects = snapshot.objects
            let matches = candidates.filter { id in objects.withBorrowedRow(id) { filter?.evaluate(id, $0, committed) ?? true } == true }
            return query.page(ObjectID.ordered(matches))
        }
        if !sorted, query.predicate == nil, !hasPendingChangesInChain {
            // Every committed object of the entities, in ID order: the table's IDs, no row read.
            // One entity's IDs come in ID order (its keys' order), so a page from the start stops
            // once it has its objects.
            let single = query.family.count == 1 && !query.request.reversesOrder
            let limit = query.request.fetchLimit.flatMap { limit -> Int? in
                let (end, overflow) = max(0, query.request.fetchOffset).addingReportingOverflow(max(0, limit))
                return single && !overflow ? end : nil
            }
            return query.page(ObjectID.ordered(snapshot.objects.ids(query.family, limit: limit)))
        }
        let reader = ObjectReader { [self] in view(of: $0, in: snapshot) }
        var matches: [ObjectID] = []
        var views: [ObjectView] = []
        forEachMatch(query, snapshot: snapshot) { id, view in
            matches.append(id)
            if sorted { views.append(view) }
        }
        return query.order(matches, views: views, reader: reader)
    }

    /// A sorted fetch of committed objects by a scan (nothing unsaved, no index to use) whose
    /// sort keys are the entity's own numbers, dates or strings: each thread reads the keys of
    /// its matches while it holds their rows. Nil when the request is not one of those.
    private func sortedScan(_ query: PreparedQuery, _ snapshot: StoreSnapshot) -> [ObjectID]? {
        guard let keys = SortColumns.directColumns(query), !hasPendingChangesInChain, query.plan.scans(snapshot, family: query.family) else { return nil }
        let parts = snapshot.objects.visit(query.family) { SortingCollector(filter: query.scanFilter(snapshot), keys: keys) }
        guard let (ids, columns) = SortingCollector.merge(parts, keys: keys) else { return nil }
        return query.page(SortColumns(query, columns: columns, count: ids.count).permutation(ids: ids).map { ids[$0] })
    }

    /// Whether an object's committed value at `position` is its value in this context: it was
    /// not deleted, and that value not changed, here or in an ancestor.
    private func keepsCommittedValue(_ id: ObjectID, at position: Int) -> Bool {
        state.withLock { $0.keepsCommittedValue(id, at: position) } && (parent?.keepsCommittedValue(id, at: position) ?? true)
    }

    /// The common lookup `key == value` on an attribute with a uniqueness constraint of its
    /// own, answered from the uniqueness index without compiling a query; nil for any other
    /// request.
    func uniqueLookup(_ request: FetchRequest, in snapshot: StoreSnapshot) -> UniqueLookup? {
        guard case .comparison(let key, .equal, let value)? = request.predicate, request.fetchOffset == 0, !request.reversesOrder,
            value != .null, value.isByteCanonical, let entity = model.entity(named: request.entityName),
            let position = entity.attributePosition(key), value.fits(entity.attributes[position].type),
            let constraint = entity.uniqueness(ofAttribute: position)
        else { return nil }
        // Sort keys are checked as the general path would (they cannot change one object's order).
        guard request.sortKeys.allSatisfy({ entity.attributePosition($0.key) != nil }) else { return nil }
        let subentities = request.includesSubentities
        func fetched(_ id: ObjectID) -> Bool { subentities ? entity.family.contains(id.entity) : id.entity == entity.index }
        // The committed holder (checked against its row) has the value in `snapshot`: it still
        // has it here unless it was deleted or that value changed, here or in an ancestor (then
        // it is checked as the objects whose unsaved changes give them the key are).
        let holder = snapshot.holder(of: value, for: constraint).flatMap { fetched($0) ? $0 : nil }
        var uniqueKey: UniqueKey { UniqueKey(owner: constraint.owner, number: constraint.number, values: [value]) }
        // The objects whose unsaved changes give them the key, and whether the committed
        // holder keeps it (nil: nothing unsaved). A root context learns both under one lock
        // (and makes the key only when it has pending keys to look it up among).
        let unsaved: (holders: [ObjectID], keepsHolder: Bool)?
        if parent == nil {
            unsaved = state.withLock { state in
                guard state.hasChanges || !state.discarded.isEmpty else { return nil }
                state.keys.refresh(model, inserted: state.inserted)
                let holders = state.keys.holders.isEmpty ? [] : state.keys.holders[uniqueKey].map { Array($0) } ?? []
                return (holders, holder.map { state.keepsCommittedValue($0, at: position) } ?? false)
            }
        } else {
            unsaved =
                hasPendingChangesInChain
                ? (Array(pendingHolders(of: uniqueKey)), holder.map { keepsCommittedValue($0, at: position) } ?? false) : nil
        }
        guard let unsaved else {
            // Nothing unsaved: the committed holder is the answer.
            return .one(request.fetchLimit ?? 1 > 0 ? holder : nil)
        }
        // The common case of a context with unsaved changes to other objects: no unsaved object
        // has the key, and the committed holder keeps it (no list to filter and sort).
        if unsaved.holders.isEmpty, unsaved.keepsHolder, let holder {
            return .one(request.fetchLimit ?? 1 > 0 ? holder : nil)
        }
        var ids = unsaved.holders
        var committed: ObjectID?
        if let holder, !ids.contains(holder) {
            if unsaved.keepsHolder { committed = holder } else { ids.append(holder) }
        }
        ids.removeAll { id in
            guard fetched(id), let view = view(of: id, in: snapshot), case .attribute(let current) = view[position] else { return true }
            return current != value
        }
        if let committed { ids.append(committed) }
        ids.sort()
        // Two unsaved objects may share the value until a save refuses it: then the sort keys matter.
        guard ids.count < 2 || request.sortKeys.isEmpty else { return nil }
        return .list(Array(ids.prefix(max(0, request.fetchLimit ?? ids.count))))
    }
}

/// The objects a lookup by unique key found, in order: one or none (the common answer, kept
/// without an array), or a list.
enum UniqueLookup {
    case one(ObjectID?)
    case list([ObjectID])

    var first: ObjectID? {
        switch self {
        case .one(let id): id
        case .list(let ids): ids.first
        }
    }

    var count: Int {
        switch self {
        case .one(let id): id == nil ? 0 : 1
        case .list(let ids): ids.count
        }
    }

    var ids: [ObjectID] {
        switch self {
        case .one(let id): id.map { [$0] } ?? []
        case .list(let ids): ids
        }
    }
}

/// Counts the objects that pass a filter (a count answered by a scan).
struct CountingVisitor: RowVisitor {
    let filter: ScanFilter?
    private var count = 0

    init(filter: ScanFilter?) { self.filter = filter }

    mutating func visit(_ id: ObjectID, _ row: BorrowedRow) { count += 1 }

    mutating func visitMatches(_ matches: SlotMask, in chunk: ChunkScan) { count += matches.count }

    mutating func takeResult() -> Int {
        defer { count = 0 }
        return count
    }
}
