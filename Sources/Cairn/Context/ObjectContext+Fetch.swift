extension ObjectContext {
    /// The objects that match a request, unsaved changes included (inserted objects that match
    /// are in, deleted ones out), as Core Data does.
    ///
    /// - Throws: ``StoreError`` for an unknown entity or attribute, or a comparison of an
    ///   attribute with a value of another type.
    public func fetch(_ request: FetchRequest) throws -> [ManagedObject] {
        try matchingIDs(request).map(registeredObject)
    }

    /// The first object that matches, in the request's order.
    public func fetchFirst(_ request: FetchRequest) throws -> ManagedObject? {
        var request = request
        request.fetchLimit = 1
        return try fetch(request).first
    }

    /// How many objects match (offset and limit applied).
    public func count(_ request: FetchRequest) throws -> Int {
        try matchingIDs(request).count
    }

    /// Whether any object matches.
    public func exists(_ request: FetchRequest) throws -> Bool {
        try fetchFirst(request) != nil
    }

    /// Deletes every object that matches (delete rules apply); returns how many.
    @discardableResult
    public func deleteAll(_ request: FetchRequest) throws -> Int {
        let ids = try matchingIDs(request)
        for id in ids { try delete(id) }
        return ids.count
    }

    /// The IDs of the objects of these entities visible in this context.
    func visibleIDs(_ entities: Set<Int>, in snapshot: StoreSnapshot) -> Set<ObjectID> {
        var ids: Set<ObjectID>
        if let parent {
            ids = parent.visibleIDs(entities, in: snapshot)
        } else {
            ids = Set(entities.flatMap { snapshot.ids(entity: $0, includingSubentities: false) })
        }
        state.withLock { state in
            ids.formUnion(state.inserted.keys.filter { entities.contains($0.entity) })
            ids.subtract(state.deleted)
        }
        return ids
    }

    /// The snapshot at the root of this context's chain.
    var baseSnapshot: StoreSnapshot { parent?.baseSnapshot ?? rootSnapshot }

    /// When the predicate pins every attribute of a uniqueness constraint with `==`, the few
    /// objects that can match: the holder in the snapshot's uniqueness index, and the objects
    /// whose unsaved changes give them that key. Nil when the predicate does not allow it (then
    /// all are scanned).
    private func uniqueCandidates(_ predicate: FetchPredicate, entity: EntityDescription, entities: Set<Int>,
                                  snapshot: StoreSnapshot) -> Set<ObjectID>? {
        var pinned: [String: Value] = [:]
        func collect(_ predicate: FetchPredicate) {
            switch predicate {
            case .comparison(let key, .equal, let value): pinned[key] = value
            case .and(let parts): parts.forEach(collect)
            default: break
            }
        }
        collect(predicate)
        for constraint in entity.uniqueness {
            let values = constraint.names.compactMap { pinned[$0] }
            guard values.count == constraint.names.count, !values.contains(.null), values.allSatisfy(\.isByteCanonical),
                  zip(constraint.positions, values).allSatisfy({ position, value in value.fits(entity.attributes[position].type) }) else { continue }
            let key = UniqueKey(owner: constraint.owner, number: constraint.number, values: values)
            var ids = pendingHolders(of: key).filter { entities.contains($0.entity) }
            if let holder = snapshot.holder(of: key), entities.contains(holder.entity) { ids.insert(holder) }
            return ids
        }
        return nil
    }

    private func matchingIDs(_ request: FetchRequest) throws -> [ObjectID] {
        let entity = try model.require(request.entityName)
        let entities = request.includesSubentities ? entity.family : [entity.index]
        let predicate = try request.predicate?.compile(for: entity)
        let sortPositions = try request.sortKeys.map { descriptor -> (Int, Bool) in
            guard let position = entity.attributePosition(descriptor.key) else {
                throw StoreError(.unknownName, "sort: \(entity.name) has no attribute \(descriptor.key)", entity: entity.name, property: descriptor.key)
            }
            return (position, descriptor.ascending)
        }
        var rows: [(ObjectID, [Value])] = []
        let snapshot = baseSnapshot        // one snapshot for the whole fetch
        let candidates = request.predicate.flatMap { uniqueCandidates($0, entity: entity, entities: entities, snapshot: snapshot) }
            ?? visibleIDs(entities, in: snapshot)
        for id in candidates {
            guard let view = view(of: id, in: snapshot), predicate?.evaluate({ view[$0] }) ?? true else { continue }
            rows.append((id, sortPositions.map { position, _ in
                if case .attribute(let value) = view[position] { return value }
                return .null
            }))
        }
        rows.sort { lhs, rhs in
            for (index, (_, ascending)) in sortPositions.enumerated() {
                let order = Value.order(lhs.1[index], rhs.1[index]) ?? .orderedSame
                if order != .orderedSame { return ascending ? order == .orderedAscending : order == .orderedDescending }
            }
            return lhs.0 < rhs.0
        }
        let start = min(max(0, request.fetchOffset), rows.count)
        let end = request.fetchLimit.map { start + min(rows.count - start, max(0, $0)) } ?? rows.count
        return rows[start..<end].map(\.0)
    }
}
