import Foundation

/// A fetch request resolved against the model: its entities, compiled predicate, sort key
/// paths and plan.
struct PreparedQuery {
    let request: FetchRequest
    let entity: EntityDescription
    let family: Set<Int>
    let predicate: CompiledPredicate?
    let sortPaths: [CompiledKeyPath]
    let plan: QueryPlan

    init(_ request: FetchRequest, model: Model) throws {
        self.request = request
        let entity = try model.require(request.entityName)
        self.entity = entity
        family = request.includesSubentities ? entity.family : [entity.index]
        let predicate = try request.predicate?.compile(for: entity, in: model)
        self.predicate = predicate
        sortPaths = try request.sortKeys.map { key in
            let path = try CompiledKeyPath.resolve(key.key.split(separator: ".").map(String.init), from: entity, in: model)
            guard path.attributeType != nil, !path.isToMany else {
                throw StoreError(.invalidPredicate, "sort: \(entity.name).\(key.key) must lead to one attribute (to-one relationships only)",
                                 entity: entity.name, property: key.key)
            }
            return path
        }
        plan = QueryPlan.choose(predicate, entity: entity, family: family, model: model)
    }

    /// The values an object is sorted by.
    func sortValues(_ view: ObjectView, _ reader: ObjectReader) -> [Value] {
        sortPaths.enumerated().map { index, path in
            guard case .value(let value) = path.evaluate(view, reader) else { return .null }
            if request.sortKeys[index].caseInsensitive, let text = value.text { return .string(TextComparison.fold(text, [.caseInsensitive])) }
            return value
        }
    }

    /// Sorts (ties by object ID, so the order is stable), reverses when asked, and pages.
    func order(_ matches: [(ObjectID, [Value])]) -> [ObjectID] {
        var matches = matches
        let keys = request.sortKeys
        matches.sort { lhs, rhs in
            for index in keys.indices {
                let order = QueryValue.order(lhs.1[index], rhs.1[index]) ?? .orderedSame
                if order != .orderedSame { return keys[index].ascending ? order == .orderedAscending : order == .orderedDescending }
            }
            return lhs.0 < rhs.0
        }
        if request.reversesOrder { matches.reverse() }
        let start = min(max(0, request.fetchOffset), matches.count)
        let end = request.fetchLimit.map { start + min(matches.count - start, max(0, $0)) } ?? matches.count
        return matches[start..<end].map(\.0)
    }
}
