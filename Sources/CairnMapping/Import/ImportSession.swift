import Cairn

/// Applies records to a context: finds each record's object by its unique key (among the
/// objects this import has touched, then the store's), inserts or updates it, links related
/// objects by each relationship's policy, and counts what changed.
final class ImportSession {
    enum Outcome { case inserted, updated, unchanged }

    let context: ObjectContext
    let mapping: Mapping
    let options: ImportOptions
    var result = ImportResult()
    /// What happened to each object the import touched.
    private var outcomes: [ObjectID: Outcome] = [:]
    /// Objects of this import by entity and key.
    private var known: [Int: [[Value]: ObjectID]] = [:]
    /// Saved objects by key, for entities whose unique key no uniqueness constraint indexes
    /// (built by one pass over the entity's objects when first needed).
    private var scanned: [Int: [[Value]: ObjectID]] = [:]
    /// Relationships waiting for references to objects later records may create.
    private var deferred: [DeferredLinks] = []
    private var topLevel: Set<ObjectID> = []

    private struct DeferredLinks {
        var object: ObjectID
        var relationship: ResolvedRelationship
        var entity: ResolvedEntity
        var items: [Either]
        var path: [JSONPath.Step]

        enum Either {
            case object(ObjectID)
            case key(Value, path: [JSONPath.Step], offset: Int)
        }
    }

    init(context: ObjectContext, mapping: Mapping, options: ImportOptions) {
        self.context = context
        self.mapping = mapping
        self.options = options
    }

    // MARK: Records

    /// Applies a top-level record; nil when a lenient import skipped it.
    func apply(topLevel record: ImportRecord) throws {
        let id: ObjectID
        do {
            guard let upserted = try upsert(record) else { return }
            id = upserted
        } catch is Skip {
            return
        }
        if topLevel.insert(id).inserted { result.objectIDs.append(id) }
    }

    /// Finds or inserts the record's object and applies its values; nil when a lenient import
    /// skipped it (no key).
    @discardableResult
    func upsert(_ record: ImportRecord) throws -> ObjectID? {
        let entity = mapping.resolved[record.entity]
        guard let key = try key(of: record, entity) else { return try insert(record, entity) }
        if let id = try find(entity, key: key) {
            if outcomes[id] == nil { outcomes[id] = .unchanged }
            guard options.updatesExisting || outcomes[id] == .inserted else { return id }
            if try applyValues(record, entity, to: id, isNew: false), outcomes[id] == .unchanged { outcomes[id] = .updated }
            return id
        }
        return try insert(record, entity, key: key)
    }

    /// The record's unique key; nil when the entity has none.
    ///
    /// - Throws: ``MappingError/Code/missingKey`` when the record lacks it (strict), or a
    ///   ``Skip`` (lenient).
    private func key(of record: ImportRecord, _ entity: ResolvedEntity) throws -> [Value]? {
        guard !entity.identity.isEmpty else { return nil }
        var key: [Value] = []
        key.reserveCapacity(entity.identity.count)
        for position in entity.identity {
            guard let index = entity.attributes.firstIndex(where: { $0.position == position }), let value = record.values[index], value != .null
            else {
                let name = entity.description.attributes[position].name
                let message = "the record has no value for \(entity.name).\(name), its unique key"
                guard options.lenient else {
                    throw MappingError(.missingKey, message, entity: entity.name, property: name, path: JSONPath.text(record.path), offset: record.offset)
                }
                result.warnings.append(ImportWarning(path: JSONPath.text(record.path), message: message + "; record skipped"))
                throw Skip()
            }
            key.append(value)
        }
        return key
    }

    /// A lenient import passes over a record.
    struct Skip: Error {}

    private func insert(_ record: ImportRecord, _ entity: ResolvedEntity, key: [Value]? = nil) throws -> ObjectID {
        guard !entity.description.isAbstract else {
            throw MappingError(
                .invalidValue, "\(entity.name) is abstract: a record cannot make one (map a relationship to one of its sub-entities)",
                entity: entity.name, path: JSONPath.text(record.path), offset: record.offset)
        }
        let id = try context.insert(entity.name).objectID
        outcomes[id] = .inserted
        if let key { known[entity.description.index, default: [:]][key] = id }
        try applyValues(record, entity, to: id, isNew: true)
        return id
    }

    /// The object of `entity`'s family holding `key`, as the import's context sees it.
    private func find(_ entity: ResolvedEntity, key: [Value]) throws -> ObjectID? {
        if let id = known[entity.description.index]?[key], context.propertyValues(of: id) != nil { return id }
        let found: ObjectID?
        if let holder = context.uniqueHolder(entity.description, positions: entity.identity, values: key) {
            found = holder
        } else {
            found = try scannedHolder(entity, key: key)
        }
        if let found { known[entity.description.index, default: [:]][key] = found }
        return found
    }

    /// The saved object holding `key` when no uniqueness constraint indexes the entity's key:
    /// one pass over its objects makes a table for the rest of the import.
    private func scannedHolder(_ entity: ResolvedEntity, key: [Value]) throws -> ObjectID? {
        let index = entity.description.index
        if scanned[index] == nil {
            var table: [[Value]: ObjectID] = [:]
            for id in try context.fetchIDs(FetchRequest(entity.name)) {
                guard let values = context.propertyValues(of: id) else { continue }
                let key = entity.identity.map { position -> Value in
                    if case .attribute(let value) = values[position] { return value }
                    return .null
                }
                if table[key] == nil { table[key] = id }
            }
            scanned[index] = table
        }
        guard let id = scanned[index]?[key], context.propertyValues(of: id) != nil else { return nil }
        return id
    }

    // MARK: Values

    /// Applies a record's attributes and relationships to its object; whether anything changed.
    @discardableResult
    private func applyValues(_ record: ImportRecord, _ entity: ResolvedEntity, to id: ObjectID, isNew: Bool) throws -> Bool {
        guard let current = context.propertyValues(of: id) else { return false }
        var changed = false
        for (index, attribute) in entity.attributes.enumerated() {
            guard let value = effectiveValue(record.values[index], isNew: isNew) else { continue }
            if case .attribute(let old) = current[attribute.position], old == value { continue }
            try context.setAttribute(id, attribute.position, value)
            changed = true
        }
        for (index, relationship) in entity.relationships.enumerated() {
            guard let input = record.relations[index] else { continue }
            if try link(id, entity, relationship, input, current: current[relationship.position].targets, path: record.path) { changed = true }
        }
        return changed
    }

    /// What a record's value (nil: absent) sets, under the null and missing-key options; nil:
    /// nothing.
    private func effectiveValue(_ given: Value?, isNew: Bool) -> Value? {
        guard let given else { return !isNew && options.missingKeys == .clear ? .null : nil }
        if given == .null && options.nulls == .neverOverwrite { return nil }
        return given
    }

    // MARK: Relationships

    /// Links an object's relationship to what the input gives, by the relationship's policy;
    /// whether it changed.
    private func link(
        _ id: ObjectID, _ entity: ResolvedEntity, _ relationship: ResolvedRelationship, _ input: RelationInput, current: [ObjectID],
        path: [JSONPath.Step]
    ) throws -> Bool {
        var items: [DeferredLinks.Either] = []
        var waiting = false
        var reused: Set<ObjectID> = []
        if case .items(let given) = input {
            for (position, item) in given.enumerated() {
                switch item {
                case .record(let nested):
                    if let target = try related(nested, relationship, position: position, current: current, reused: &reused) {
                        items.append(.object(target))
                    }
                case .reference(let key, let place, let offset):
                    if let target = try reference(relationship, key) {
                        items.append(.object(target))
                    } else {
                        items.append(.key(key, path: place, offset: offset))
                        waiting = true
                    }
                }
            }
        }
        if waiting {
            deferred.append(DeferredLinks(object: id, relationship: relationship, entity: entity, items: items, path: path))
            return false
        }
        let targets = items.compactMap { item -> ObjectID? in
            if case .object(let id) = item { return id }
            return nil
        }
        return try setTargets(id, relationship, targets, current: current)
    }

    /// Sets the relationship to `targets` (added to what it holds, for `merge`), and deletes the
    /// objects it no longer holds that it owned (`replace`, `mergeAndPrune`).
    private func setTargets(_ id: ObjectID, _ relationship: ResolvedRelationship, _ targets: [ObjectID], current: [ObjectID]) throws -> Bool {
        var wanted = targets
        if relationship.policy == .merge && relationship.isToMany {
            wanted = current + targets.filter { !current.contains($0) }
        }
        var deduplicated: [ObjectID] = []
        var seen: Set<ObjectID> = []
        for target in wanted where seen.insert(target).inserted { deduplicated.append(target) }
        let same = relationship.isOrdered ? deduplicated == current : Set(deduplicated) == Set(current)
        guard !same else { return false }
        try context.setRelationship(id, relationship.index, to: deduplicated)
        if relationship.policy != .merge || !relationship.isToMany {
            for old in current where !seen.contains(old) && owns(relationship, in: id.entity) && context.propertyValues(of: old) != nil {
                if relationship.policy == .merge { continue }
                try context.deleteObject(old)
                outcomes[old] = nil
                result.deleted += 1
            }
        }
        return true
    }

    /// Whether the relationship's objects belong to its source: their inverse is to-one, or
    /// there is none. Objects another object may share (a many-to-many relationship) are only
    /// unlinked, never deleted, by `replace` and `mergeAndPrune`.
    private func owns(_ relationship: ResolvedRelationship, in entityIndex: Int) -> Bool {
        let entity = mapping.model.descriptions[entityIndex]
        guard let inverseName = entity.relationships[relationship.index].inverse,
            let inverse = mapping.model.descriptions[relationship.destination].relationshipPosition(inverseName)
        else { return true }
        return !mapping.model.descriptions[relationship.destination].relationships[inverse].isToMany
    }

    /// The object a nested record stands for. `merge` and `mergeAndPrune` find it by its key;
    /// `replace` keeps the related object in its place (same key, or same position when keyless)
    /// only when the record would leave it exactly as it is, and otherwise makes a new one.
    private func related(
        _ record: ImportRecord, _ relationship: ResolvedRelationship, position: Int, current: [ObjectID], reused: inout Set<ObjectID>
    ) throws -> ObjectID? {
        do {
            guard relationship.policy == .replace else { return try upsert(record) }
            let entity = mapping.resolved[record.entity]
            let key = try key(of: record, entity)
            let candidate: ObjectID?
            if let key {
                candidate = current.first { id in !reused.contains(id) && keyValues(id, entity) == key }
            } else {
                candidate = position < current.count && !reused.contains(current[position]) ? current[position] : nil
            }
            var matched: [ObjectID] = []
            if let candidate, context.propertyValues(of: candidate) != nil, try unchanged(record, entity, candidate, matched: &matched) {
                reused.insert(candidate)
                for id in matched where outcomes[id] == nil { outcomes[id] = .unchanged }
                return candidate
            }
            if let candidate, key != nil, context.propertyValues(of: candidate) != nil {
                // The old object holds the key the new one needs: it goes first.
                try context.deleteObject(candidate)
                outcomes[candidate] = nil
                result.deleted += 1
                known[entity.description.index]?[key ?? []] = nil
            }
            if let key, let holder = try find(entity, key: key) {
                // Another object, not this relationship's, holds the key: it is updated, never duplicated.
                if outcomes[holder] == nil { outcomes[holder] = .unchanged }
                if try applyValues(record, entity, to: holder, isNew: false), outcomes[holder] == .unchanged { outcomes[holder] = .updated }
                return holder
            }
            return try insert(record, entity, key: key)
        } catch is Skip {
            return nil
        }
    }

    private func keyValues(_ id: ObjectID, _ entity: ResolvedEntity) -> [Value]? {
        guard let values = context.propertyValues(of: id) else { return nil }
        return entity.identity.map { position in
            if case .attribute(let value) = values[position] { return value }
            return .null
        }
    }

    /// Whether applying `record` to `id` would change nothing (attributes, and relationships
    /// through the same test); `matched` gathers the objects it compared.
    private func unchanged(_ record: ImportRecord, _ entity: ResolvedEntity, _ id: ObjectID, matched: inout [ObjectID]) throws -> Bool {
        guard let current = context.propertyValues(of: id) else { return false }
        matched.append(id)
        for (index, attribute) in entity.attributes.enumerated() {
            guard let value = effectiveValue(record.values[index], isNew: false) else { continue }
            guard case .attribute(let old) = current[attribute.position], old == value else { return false }
        }
        for (index, relationship) in entity.relationships.enumerated() {
            guard let input = record.relations[index] else { continue }
            let targets = current[relationship.position].targets
            guard case .items(let items) = input else {
                if !targets.isEmpty { return false }
                continue
            }
            if relationship.policy != .merge && items.count != targets.count { return false }
            let destination = mapping.resolved[relationship.destination]
            for (position, item) in items.enumerated() {
                switch item {
                case .reference(let key, _, _):
                    guard let target = try reference(relationship, key), targets.contains(target) else { return false }
                case .record(let nested):
                    let key = try? self.key(of: nested, destination)
                    let match: ObjectID?
                    if let key {
                        match = targets.first { keyValues($0, destination) == key }
                    } else {
                        match = relationship.policy == .replace && position < targets.count ? targets[position] : nil
                    }
                    guard let match, try unchanged(nested, destination, match, matched: &matched) else { return false }
                }
            }
        }
        return true
    }

    /// The object a reference by key names, among this import's objects and the store's; nil
    /// when none holds it (yet).
    private func reference(_ relationship: ResolvedRelationship, _ key: Value) throws -> ObjectID? {
        let destination = mapping.resolved[relationship.destination]
        let positions = relationship.relatedBy ?? destination.identity
        if positions == destination.identity { return try find(destination, key: [key]) }
        // References by another attribute than the unique key: found by a fetch.
        guard positions.count == 1 else { return nil }
        let name = destination.description.attributes[positions[0]].name
        return try context.fetchFirst(FetchRequest(destination.name, predicate: .equal(name, key)))?.objectID
    }

    // MARK: Finishing

    /// Links the references that waited for later records; what no record made fails (strict),
    /// is left out with a warning (lenient), or makes an object holding only its key
    /// (``ImportOptions/insertsMissingReferences``).
    func finish() throws {
        let waiting = deferred
        deferred = []
        for links in waiting {
            var targets: [ObjectID] = []
            for item in links.items {
                switch item {
                case .object(let id): targets.append(id)
                case .key(let key, let path, let offset):
                    if let id = try reference(links.relationship, key) {
                        targets.append(id)
                        continue
                    }
                    let destination = mapping.resolved[links.relationship.destination]
                    let message = "no \(destination.name) has the key \(key)"
                    if options.insertsMissingReferences {
                        var record = ImportRecord(destination, path: path, offset: offset)
                        let positions = links.relationship.relatedBy ?? destination.identity
                        if let index = destination.attributes.firstIndex(where: { $0.position == positions.first }) { record.values[index] = key }
                        targets.append(try insert(record, destination, key: positions == destination.identity ? [key] : nil))
                    } else if options.lenient {
                        result.warnings.append(ImportWarning(path: JSONPath.text(path), message: message + "; the reference is left out"))
                    } else {
                        throw MappingError(
                            .unresolvedReference, message + ", in the store or in the input", entity: links.entity.name,
                            property: links.relationship.name, path: JSONPath.text(path), offset: offset)
                    }
                }
            }
            guard let current = context.propertyValues(of: links.object) else { continue }
            if try setTargets(links.object, links.relationship, targets, current: current[links.relationship.position].targets),
                outcomes[links.object] == .unchanged
            {
                outcomes[links.object] = .updated
            }
        }
        // An object set back to what it was (duplicate records that change a value and change
        // it back) is unchanged: what counts is its values now against the saved ones.
        for (id, outcome) in outcomes where outcome != .inserted {
            let now = context.propertyValues(of: id)
            outcomes[id] = now != nil && now == context.committedValues(of: id) ? .unchanged : .updated
        }
        result.inserted = 0
        result.updated = 0
        result.unchanged = 0
        for outcome in outcomes.values {
            switch outcome {
            case .inserted: result.inserted += 1
            case .updated: result.updated += 1
            case .unchanged: result.unchanged += 1
            }
        }
        if let hook = options.afterImport {
            for (id, outcome) in outcomes where outcome != .unchanged {
                if let object = context.object(with: id) { try hook(object) }
            }
        }
    }
}
