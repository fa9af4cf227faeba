import Foundation

/// A fetch request resolved against the model: its entities, compiled predicate, sort key
/// paths and plan.
struct PreparedQuery: Sendable {
    let request: FetchRequest
    let model: Model
    let entity: EntityDescription
    let family: Set<Int>
    let predicate: CompiledPredicate?
    let sortPaths: [CompiledKeyPath]
    let plan: QueryPlan
    /// Whether the plan's committed candidates are exactly the matches (no row to check), as
    /// long as the indexes it reads are packed (``matchesExactly(in:)``).
    let candidatesMatch: Bool

    init(_ request: FetchRequest, model: Model) throws {
        self.request = request
        self.model = model
        let entity = try model.require(request.entityName)
        self.entity = entity
        family = request.includesSubentities ? entity.family : [entity.index]
        let predicate = try request.predicate?.compile(for: entity, in: model)
        self.predicate = predicate
        sortPaths = try request.sortKeys.map { key in
            let path = try CompiledKeyPath.resolve(key.key.split(separator: ".").map(String.init), from: entity, in: model)
            guard path.attributeType != nil, !path.isToMany else {
                throw StoreError(
                    .invalidPredicate, "sort: \(entity.name).\(key.key) must lead to one attribute (to-one relationships only)",
                    entity: entity.name, property: key.key)
            }
            return path
        }
        plan = QueryPlan.choose(predicate, entity: entity, family: family, model: model)
        candidatesMatch = plan.findsExactly(predicate)
    }

    /// Whether the plan's committed candidates in `snapshot` are exactly the matches: the plan
    /// says so, and every index it reads still packs its values (an index that met a value of
    /// another kind keeps values, whose order across kinds is not exact; no model lets one in).
    func matchesExactly(in snapshot: StoreSnapshot) -> Bool {
        guard candidatesMatch, case .equal(_, let position, _, _) = plan else { return false }
        let layout = snapshot.model.indexLayout
        return family.allSatisfy { entity in layout.slot(entity: entity, position: position).map { snapshot.indexes[$0].ordered.isPacked } ?? true }
    }

    /// The predicate compiled again and flattened for row scans: a filter that shares no object
    /// with ``predicate`` (one for each thread of a scan); nil without a predicate.
    func rowFilter() -> RowFilter? {
        ((try? request.predicate?.compile(for: entity, in: model)) ?? predicate).map(RowFilter.init)
    }

    /// ``rowFilter()`` with what reads the committed objects of `snapshot`: a scan's filter
    /// (nil without a predicate).
    func scanFilter(_ snapshot: StoreSnapshot) -> ScanFilter? {
        rowFilter().map { ScanFilter(rows: $0, reader: ObjectReader.committed(snapshot)) }
    }

    /// The value an object is sorted by for sort key `index`.
    func sortValue(_ index: Int, _ id: ObjectID, _ view: ObjectView, _ reader: ObjectReader) -> Value {
        guard case .value(let value) = sortPaths[index].evaluate(id, view, reader) else { return .null }
        if request.sortKeys[index].caseInsensitive, let text = value.text { return .string(TextComparison.fold(text, [.caseInsensitive])) }
        return value
    }

    /// Sorts the matches (`views` holds each one's view when there are sort keys; ties by object
    /// ID, so the order is stable), reverses when asked, and pages.
    func order(_ matches: [ObjectID], views: [ObjectView], reader: ObjectReader) -> [ObjectID] {
        var ids = matches
        if request.sortKeys.isEmpty {
            ids = ObjectID.ordered(ids)
        } else {
            let columns = SortColumns(self, ids: matches, views: views, reader: reader)
            ids = columns.permutation(ids: matches).map { matches[$0] }
        }
        return page(ids)
    }

    /// Ordered matches reversed when asked, then offset and limit applied.
    func page(_ ordered: [ObjectID]) -> [ObjectID] {
        var ids = ordered
        if request.reversesOrder { ids.reverse() }
        let start = min(max(0, request.fetchOffset), ids.count)
        let end = request.fetchLimit.map { start + min(ids.count - start, max(0, $0)) } ?? ids.count
        return Array(ids[start..<end])
    }
}
