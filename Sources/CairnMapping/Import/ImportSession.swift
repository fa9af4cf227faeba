import Cairn

/// Applies records to a context: finds each record's object by its unique key (among the
/// objects this import has touched, then the store's), inserts or updates it, links related
/// objects by each relationship's policy, and counts what changed.
///
/// Keys compare as the store compares them, by their stored bytes, so that this path and the
/// batch upsert agree on which records name the same object.
final class ImportSession {
    enum Outcome { case inserted, updated, unchanged }

    let context: ObjectContext
    let mapping: Mapping
    let options: ImportOptions
    var result = ImportResult()
    /// What happened to each object the import touched.
    private var outcomes: [ObjectID: Outcome] = [:]
    /// Objects of this import by key scope (``ResolvedEntity/keyScope``: the entity whose family
    /// a key is unique across) and stored key bytes.
    private var known: [Int: [[UInt8]: ObjectID]] = [:]
    /// Saved objects by key bytes, per key scope, for unique keys no uniqueness constraint
    /// indexes (built by one pass over the scope's family when first needed).
    private var scanned: [Int: [[UInt8]: ObjectID]] = [:]
    /// Reads a record again as an object of another entity (a sub-entity of the one it was read
    /// for): an import into a parent reads and writes each object's own entity's properties.
    /// A lenient read's warnings come with it.
    var reread: ((ImportRecord, ResolvedEntity) throws -> (ImportRecord, [ImportWarning]))?
    /// Relationships waiting for references to objects later records may create.
    private var deferred: [DeferredLinks] = []
    /// Objects a pruning relationship took out of its owner: deleted at the end unless another
    /// record gave them an owner meanwhile, or another object holds them (``DeletionGuard``),
    /// or the relationship's change (`unit`) was undone.
    private var orphans: [(id: ObjectID, ownerPosition: Int, unit: Int?)] = []
    /// Objects a pruning relationship replaced by a new object holding their key: deleted at the
    /// end unless the nested record that replaced them (`unit`) was skipped. A key lookup no
    /// longer finds them.
    private var replaced: [(id: ObjectID, unit: Int?, owner: (id: ObjectID, inverse: Int))] = []
    private var replacedIDs: Set<ObjectID> = []
    /// What each record changed: to name it, and to undo it when a lenient import skips it.
    private let undo: ImportUndoLog
    /// The records (units) that named each object the import touched, and each top-level object.
    private var namedBy: [ObjectID: [Int]] = [:]
    private var topLevelUnits: [ObjectID: [Int]] = [:]
    /// What the import may delete.
    private let deletions: DeletionGuard
    private var topLevel: Set<ObjectID> = []
    /// The record that last inserted or updated each object: what an error about the object's
    /// values names.
    private var origins: [ObjectID: (path: [JSONPath.Step], offset: Int)] = [:]

    private struct DeferredLinks {
        var object: ObjectID
        var relationship: ResolvedRelationship
        var entity: ResolvedEntity
        var items: [Either]
        /// The unit the relationship's change belongs to.
        var assignment: Int

        enum Either {
            case object(ObjectID)
            case key(Value, path: [JSONPath.Step], offset: Int)
        }
    }

    /// A lenient import passes over a record.
    struct Skip: Error {}

    init(context: ObjectContext, mapping: Mapping, options: ImportOptions) {
        self.context = context
        self.mapping = mapping
        var options = options
        options.insertsMissingReferences = options.insertsMissingReferences || mapping.insertsMissingReferences
        self.options = options
        let deletions = DeletionGuard(model: mapping.model, context: context)
        self.deletions = deletions
        undo = ImportUndoLog(context: context, model: mapping.model)
        undo.relationshipSet = { deletions.relationshipSet($0, $1, to: $2, from: $3) }
    }

    // MARK: Records

    /// Applies a top-level record (a lenient import may pass over it).
    func apply(topLevel record: ImportRecord) throws {
        let unit = undo.begin(.record, path: record.path, offset: record.offset, parent: nil)
        let id: ObjectID
        do {
            id = try undo.within(unit) { try upsert(record) }
        } catch is Skip {
            return
        }
        topLevelUnits[id, default: []].append(unit)
        if topLevel.insert(id).inserted { result.objectIDs.append(id) }
    }

    /// Notes that the current record named an object.
    private func named(_ id: ObjectID) {
        if let unit = undo.current { namedBy[id, default: []].append(unit) }
    }

    /// Finds or inserts the record's object and applies its values.
    ///
    /// - Throws: ``Skip`` when a lenient import passes over the record (no key).
    @discardableResult
    func upsert(_ record: ImportRecord) throws -> ObjectID {
        let entity = mapping.resolved[record.entity]
        guard let key = try requiredKey(of: record, entity) else { return try insert(record, entity) }
        if let id = try holder(of: record, entity, key: key) {
            if record.isKeyOnly {
                // A key alone names the object and changes nothing.
                if outcomes[id] == nil { outcomes[id] = .unchanged }
                named(id)
            } else {
                try update(id, with: record, entity)
            }
            return id
        }
        if record.isKeyOnly && !options.insertsMissingReferences { try missingObject(named: record, entity, key: key) }
        return try insert(record, entity, key: key)
    }

    /// A record given as its key alone whose object neither the store nor the input (so far)
    /// holds: an error (strict), or a warning and ``Skip`` (lenient).
    private func missingObject(named record: ImportRecord, _ entity: ResolvedEntity, key: [Value]) throws -> Never {
        let keyText = key.count == 1 ? "\(key[0])" : "\(key)"
        let message = "no \(entity.name) has the key \(keyText), which this record names"
        let place = JSONPath.text(record.path)
        guard options.lenient else {
            throw MappingError(
                .unresolvedReference, message + ", in the store or earlier in the input (insertsMissingReferences makes one)", entity: entity.name,
                path: place, offset: record.offset)
        }
        result.warnings.append(ImportWarning(path: place, message: message + "; record skipped"))
        throw Skip()
    }

    /// Applies a record to an existing object (unless the options leave existing objects alone),
    /// read as an object of the object's own entity.
    private func update(_ id: ObjectID, with record: ImportRecord, _ entity: ResolvedEntity) throws {
        if outcomes[id] == nil { outcomes[id] = .unchanged }
        named(id)
        guard options.updatesExisting || outcomes[id] == .inserted else { return }
        origins[id] = (record.path, record.offset)
        let (actual, actualEntity) = try asObjectOf(id, record, entity)
        try applyValues(actual, actualEntity, to: id, isNew: false)
    }

    /// The record read as an object of `id`'s entity (a sub-entity of the record's, when an
    /// import into a parent finds an object of a sub-entity), with that entity's mapping.
    private func asObjectOf(_ id: ObjectID, _ record: ImportRecord, _ entity: ResolvedEntity) throws -> (ImportRecord, ResolvedEntity) {
        guard id.entity != entity.description.index, entity.description.family.contains(id.entity), let reread else { return (record, entity) }
        let actual = mapping.resolved[id.entity]
        let (again, warnings) = try reread(record, actual)
        for warning in warnings where !result.warnings.contains(warning) { result.warnings.append(warning) }
        return (again, actual)
    }

    /// The object of the record's entity's family holding `key`; nil when none does.
    ///
    /// - Throws: ``MappingError/Code/invalidValue`` when an object of another entity that shares
    ///   the key's scope (a sibling) holds it.
    private func holder(of record: ImportRecord, _ entity: ResolvedEntity, key: [Value]) throws -> ObjectID? {
        guard let id = try find(entity, key: key) else { return nil }
        guard entity.description.family.contains(id.entity) else {
            let names = entity.identity.map { entity.description.attributes[$0].name }.joined(separator: ", ")
            throw MappingError(
                .invalidValue, "a \(mapping.model.descriptions[id.entity].name) already holds this \(names), a key unique across \(scopeName(entity))",
                entity: entity.name, path: JSONPath.text(record.path), offset: record.offset)
        }
        return id
    }

    private func scopeName(_ entity: ResolvedEntity) -> String { mapping.model.descriptions[entity.keyScope].name }

    /// The record's unique key: nil when the entity has none.
    ///
    /// - Throws: ``MappingError/Code/missingKey`` when the record lacks it (strict), or ``Skip``
    ///   with a warning (lenient).
    private func requiredKey(of record: ImportRecord, _ entity: ResolvedEntity) throws -> [Value]? {
        guard !entity.identity.isEmpty else { return nil }
        guard let key = record.key(entity) else {
            let problem = record.missingKey(entity)
            guard options.lenient else { throw problem.error }
            result.warnings.append(problem.warning)
            throw Skip()
        }
        return key
    }

    private func insert(_ record: ImportRecord, _ entity: ResolvedEntity, key: [Value]? = nil) throws -> ObjectID {
        guard !entity.description.isAbstract else {
            throw MappingError(
                .invalidValue, "\(entity.name) is abstract: a record cannot make one (map a relationship to one of its sub-entities)",
                entity: entity.name, path: JSONPath.text(record.path), offset: record.offset)
        }
        let id = try context.insert(entity.name).objectID
        undo.inserted(id)
        named(id)
        outcomes[id] = .inserted
        origins[id] = (record.path, record.offset)
        if let key { known[entity.keyScope, default: [:]][Value.storedKey(key)] = id }
        try applyValues(record, entity, to: id, isNew: true)
        return id
    }

    /// The object of the key's scope holding `key`, as the import's context sees it: of
    /// `entity`'s family, or of a sibling sharing the scope (``holder(of:_:key:)`` refuses
    /// that; a reference by key does not see it).
    private func find(_ entity: ResolvedEntity, key: [Value]) throws -> ObjectID? {
        let bytes = Value.storedKey(key)
        let scope = entity.keyScope
        if let id = known[scope]?[bytes], context.propertyValues(of: id) != nil { return id }
        let found: ObjectID?
        let scopeEntity = mapping.model.descriptions[scope]
        if let holder = context.uniqueHolder(scopeEntity, positions: entity.identity, values: key) {
            found = holder
        } else {
            found = try scannedHolder(entity, scope: scope, key: bytes)
        }
        if let found, replacedIDs.contains(found) { return nil }
        if let found { known[scope, default: [:]][bytes] = found }
        return found
    }

    /// The object holding `key` when no uniqueness constraint indexes the entity's key: one pass
    /// over the scope's family makes a table for the rest of the import.
    private func scannedHolder(_ entity: ResolvedEntity, scope: Int, key: [UInt8]) throws -> ObjectID? {
        if scanned[scope] == nil {
            var table: [[UInt8]: ObjectID] = [:]
            for id in try context.fetchIDs(FetchRequest(mapping.model.descriptions[scope].name)) {
                guard let values = keyValues(id, entity) else { continue }
                let bytes = Value.storedKey(values)
                if table[bytes] == nil { table[bytes] = id }
            }
            scanned[scope] = table
        }
        guard let id = scanned[scope]?[key], context.propertyValues(of: id) != nil else { return nil }
        return id
    }

    /// An object's values of the entity's unique key, as this context sees them.
    private func keyValues(_ id: ObjectID, _ entity: ResolvedEntity) -> [Value]? {
        guard let values = context.propertyValues(of: id) else { return nil }
        return entity.identity.map { position in
            guard position < values.count, case .attribute(let value) = values[position] else { return .null }
            return value
        }
    }

    // MARK: Values

    /// Applies a record's attributes and relationships to its object.
    private func applyValues(_ record: ImportRecord, _ entity: ResolvedEntity, to id: ObjectID, isNew: Bool) throws {
        guard let current = context.propertyValues(of: id) else { return }
        for (index, attribute) in entity.attributes.enumerated() {
            guard let value = effectiveValue(record.values[index], isNew: isNew) else { continue }
            guard case .attribute(let old) = current[attribute.position] else { continue }
            if old.isStoredIdentically(to: value) {
                undo.claim(id, attribute.position, old)
            } else {
                try undo.setAttribute(id, attribute.position, value, old: old)
            }
        }
        for (index, relationship) in entity.relationships.enumerated() {
            guard let input = record.relations[index] else { continue }
            try link(id, entity, relationship, input, current: current[relationship.position].targets, record: record)
        }
    }

    /// What a record's value (nil: absent) sets, under the null and missing-key options; nil:
    /// nothing.
    private func effectiveValue(_ given: Value?, isNew: Bool) -> Value? {
        guard let given else { return !isNew && options.missingKeys == .clear ? .null : nil }
        if given == .null && options.nulls == .neverOverwrite { return nil }
        return given
    }

    // MARK: Relationships

    /// Links an object's relationship to what the input gives, by the relationship's policy. An
    /// input a lenient read set part of aside leaves the relationship as it is.
    private func link(
        _ id: ObjectID, _ entity: ResolvedEntity, _ relationship: ResolvedRelationship, _ input: RelationInput, current: [ObjectID],
        record: ImportRecord
    ) throws {
        let path = record.path
        let assignment = undo.begin(
            .assignment(entity: id.entity, relationship: relationship.index), path: path, offset: record.offset, parent: undo.current)
        var items: [DeferredLinks.Either] = []
        var waiting = false
        var complete = true
        var nestedOnly = true
        var reused: Set<ObjectID> = []
        if case .items(let given, let whole) = input {
            complete = whole
            for (position, item) in given.enumerated() {
                switch item {
                case .record(let nested):
                    let unit = undo.begin(.record, path: nested.path, offset: nested.offset, parent: assignment)
                    if let target = try undo.within(unit, { try related(nested, of: id, relationship, position: position, current: current, reused: &reused) })
                    {
                        items.append(.object(target))
                    } else {
                        complete = false
                    }
                case .reference(let key, let place, let offset):
                    nestedOnly = false
                    if let target = try reference(relationship, key) {
                        items.append(.object(target))
                    } else {
                        items.append(.key(key, path: place, offset: offset))
                        waiting = true
                    }
                }
            }
        }
        // A later record's value wins over an earlier one still waiting for its references.
        deferred.removeAll { $0.object == id && $0.relationship.index == relationship.index }
        guard complete else {
            result.warnings.append(
                ImportWarning(
                    path: JSONPath.text(path), message: "\(entity.name).\(relationship.name) is left as it is: an item of it was set aside"))
            return
        }
        if waiting {
            deferred.append(DeferredLinks(object: id, relationship: relationship, entity: entity, items: items, assignment: assignment))
            return
        }
        let targets = items.compactMap { item -> ObjectID? in
            if case .object(let id) = item { return id }
            return nil
        }
        try undo.within(assignment) { try setTargets(id, relationship, targets, current: current, releasesOwned: nestedOnly) }
    }

    /// Sets the relationship to `targets` (added to what it holds, for a to-many `merge`). The
    /// owned objects it no longer holds become orphans to delete at the end when its policy
    /// prunes (``DeletionGuard``), and `releasesOwned`: references by key never give the import
    /// the right to delete what they name.
    private func setTargets(_ id: ObjectID, _ relationship: ResolvedRelationship, _ targets: [ObjectID], current: [ObjectID], releasesOwned: Bool) throws {
        var wanted = targets
        if relationship.policy == .merge && relationship.isToMany {
            let held = Set(current)
            wanted = current + targets.filter { !held.contains($0) }
        }
        var deduplicated: [ObjectID] = []
        var seen: Set<ObjectID> = []
        for target in wanted where seen.insert(target).inserted { deduplicated.append(target) }
        let same = relationship.isOrdered ? deduplicated == current : Set(deduplicated) == Set(current)
        guard !same else { return }
        try setRelationship(id, relationship.index, to: deduplicated, from: current)
        guard releasesOwned, let inverse = deletions.prunedInverse(of: relationship, in: id.entity) else { return }
        for old in current where !seen.contains(old) {
            orphans.append((old, mapping.model.descriptions[old.entity].propertyPosition(ofRelationship: inverse), undo.current))
        }
    }

    /// Sets a relationship through the undo log (which notes the links it makes and breaks, and
    /// reports the relationships its undoing sets to the deletion guard itself): every
    /// relationship the import sets goes through here, so that the deletion guard sees the
    /// links it makes.
    private func setRelationship(_ id: ObjectID, _ index: Int, to targets: [ObjectID], from previous: [ObjectID]) throws {
        try undo.setRelationship(id, index, to: targets)
        deletions.relationshipSet(id, index, to: targets, from: previous)
    }

    /// Deletes an object the import replaces (counted when it was saved before).
    private func delete(_ id: ObjectID) throws {
        guard context.propertyValues(of: id) != nil else { return }
        try context.deleteObject(id)
    }

    /// The object a nested record stands for. `merge` and `mergeAndPrune` find it by its key;
    /// `replace` keeps the related object in its place (same key, or same position when keyless)
    /// only when the record would leave it exactly as it is, and otherwise makes a new one. Nil
    /// when a lenient import passed over the record.
    private func related(
        _ record: ImportRecord, of owner: ObjectID, _ relationship: ResolvedRelationship, position: Int, current: [ObjectID],
        reused: inout Set<ObjectID>
    ) throws -> ObjectID? {
        do {
            guard relationship.policy == .replace else { return try upsert(record) }
            let entity = mapping.resolved[record.entity]
            let key = try requiredKey(of: record, entity)
            let candidate: ObjectID?
            if let key {
                candidate = current.first { id in !reused.contains(id) && keyValues(id, entity).map(Value.storedKey) == Value.storedKey(key) }
            } else {
                candidate = position < current.count && !reused.contains(current[position]) ? current[position] : nil
            }
            var matched: [ObjectID] = []
            if let candidate, context.propertyValues(of: candidate) != nil, try unchangedAsObjectOf(candidate, record, entity, matched: &matched) {
                reused.insert(candidate)
                for id in matched {
                    if outcomes[id] == nil { outcomes[id] = .unchanged }
                    named(id)
                }
                return candidate
            }
            if let candidate, let key, context.propertyValues(of: candidate) != nil,
                let inverse = deletions.prunedInverse(of: relationship, in: owner.entity),
                try !deletions.isHeldElsewhere(candidate, besides: (owner, inverse))
            {
                // The old object holds the key the new one needs: it goes at the end, and no
                // key lookup finds it meanwhile. (One the import may not delete is updated in
                // place below, as the holder of its key.)
                replaced.append((candidate, undo.current, (owner, inverse)))
                replacedIDs.insert(candidate)
                known[entity.keyScope]?[Value.storedKey(key)] = nil
            }
            if let key, let holder = try holder(of: record, entity, key: key) {
                // Another object, not this relationship's, holds the key: it is updated, never duplicated.
                try update(holder, with: record, entity)
                return holder
            }
            return try insert(record, entity, key: key)
        } catch is Skip {
            return nil
        }
    }

    /// Whether applying `record` to `id` would change nothing, read as an object of `id`'s entity.
    private func unchangedAsObjectOf(_ id: ObjectID, _ record: ImportRecord, _ entity: ResolvedEntity, matched: inout [ObjectID]) throws -> Bool {
        let (actual, actualEntity) = try asObjectOf(id, record, entity)
        return try unchanged(actual, actualEntity, id, matched: &matched)
    }

    /// Whether applying `record` to `id` would change nothing (attributes, and relationships
    /// through the same test); `matched` gathers the objects it compared.
    private func unchanged(_ record: ImportRecord, _ entity: ResolvedEntity, _ id: ObjectID, matched: inout [ObjectID]) throws -> Bool {
        guard let current = context.propertyValues(of: id) else { return false }
        matched.append(id)
        for (index, attribute) in entity.attributes.enumerated() {
            guard let value = effectiveValue(record.values[index], isNew: false) else { continue }
            guard case .attribute(let old) = current[attribute.position], old.isStoredIdentically(to: value) else { return false }
        }
        for (index, relationship) in entity.relationships.enumerated() {
            guard let input = record.relations[index] else { continue }
            let targets = current[relationship.position].targets
            guard case .items(let items, let complete) = input, complete else {
                if case .null = input, targets.isEmpty { continue }
                return false
            }
            if relationship.policy != .merge && items.count != targets.count { return false }
            for (position, item) in items.enumerated() {
                switch item {
                case .reference(let key, _, _):
                    guard let target = try reference(relationship, key), targets.contains(target) else { return false }
                case .record(let nested):
                    let match: ObjectID?
                    let nestedEntity = mapping.resolved[nested.entity]  // the destination, or the sub-entity its mapper picked
                    if let key = nested.key(nestedEntity) {
                        let bytes = Value.storedKey(key)
                        match = targets.first { keyValues($0, nestedEntity).map(Value.storedKey) == bytes }
                    } else if nestedEntity.identity.isEmpty {
                        match = relationship.policy == .replace && position < targets.count ? targets[position] : nil
                    } else {
                        return false  // a record without its key changes something (or is set aside)
                    }
                    guard let match, try unchangedAsObjectOf(match, nested, nestedEntity, matched: &matched) else { return false }
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
        if positions == destination.identity {
            guard let id = try find(destination, key: [key]), destination.description.family.contains(id.entity) else { return nil }
            return id
        }
        // References by another attribute than the unique key: found by a fetch.
        guard positions.count == 1 else { return nil }
        let name = destination.description.attributes[positions[0]].name
        // (An object a new one replaces at the end is not found: the new one is.)
        let request = FetchRequest(destination.name, predicate: .equal(name, key))
        guard let first = try context.fetchFirst(request)?.objectID else { return nil }
        guard replacedIDs.contains(first) else { return first }
        return try context.fetchIDs(request).first { !replacedIDs.contains($0) }
    }

    // MARK: Finishing

    /// Links the references that waited for later records (what no record made fails when
    /// strict, leaves the relationship as it is with a warning when lenient, or makes an object
    /// holding only its key with ``ImportOptions/insertsMissingReferences``), runs the
    /// after-import hook, checks what the save checks (a lenient import skips the records that
    /// fail it), deletes what pruning relationships gave up or replaced and nothing holds, and
    /// counts what happened.
    func finish() throws {
        let waiting = deferred
        deferred = []
        for links in waiting {
            try undo.within(links.assignment) { try linkWaiting(links) }
        }
        try runHook()
        // The hook changed relationships through the context, not through this session: the
        // table of holders through relationships without an inverse is made again when needed.
        if options.afterImport != nil { deletions.forgetHolders() }
        try checkWhatTheSaveChecks()
        try deleteWhatWasGivenUp()
        count()
    }

    private func linkWaiting(_ links: DeferredLinks) throws {
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
                let problem = RelationItem.unresolved(key, links.entity, links.relationship, destination, path: path, offset: offset)
                if options.insertsMissingReferences {
                    var record = ImportRecord(destination, path: path, offset: offset)
                    let positions = links.relationship.relatedBy ?? destination.identity
                    if let index = destination.attributes.firstIndex(where: { $0.position == positions.first }) { record.values[index] = key }
                    targets.append(try insert(record, destination, key: positions == destination.identity ? [key] : nil))
                } else if options.lenient {
                    result.warnings.append(problem.warning)
                    return
                } else {
                    throw problem.error
                }
            }
        }
        guard let current = context.propertyValues(of: links.object) else { return }
        try setTargets(links.object, links.relationship, targets, current: current[links.relationship.position].targets, releasesOwned: false)
    }

    // MARK: Checking

    /// Checks every object the import inserted or changed (the context's, not only the records'
    /// own: an object a relationship gave up too) as the save will (required values,
    /// relationship counts), but those it deletes at the end. A problem is named by the record
    /// that set the offending value (for a relationship: that made or broke a link of it; for a
    /// value a new object never got: the record that inserted it; a record's relationship stands
    /// for the record). Strict, the first such record in input order fails the import; lenient,
    /// each is skipped with a warning naming it (``ImportUndoLog/skip(_:)`` undoes exactly its
    /// changes), and the objects the undoing changed are checked again, until none fails. Each
    /// pass skips a record more, or fails: the passes are bounded by the records.
    private func checkWhatTheSaveChecks() throws {
        var pending = context.changedObjectIDs
        for _ in 0...undo.units.count {
            let going = Set(try objectsToDelete())
            var found: [(record: Int, unit: Int, id: ObjectID, problem: StoreError)] = []
            for id in pending where !going.contains(id) {
                guard let problem = context.saveProblem(of: id) else { continue }
                guard let position = position(of: problem, in: id), let unit = undo.culprit(of: id, position: position) else {
                    // Nothing the import can undo made it so.
                    let origin = origins[id]
                    throw MappingError(saveProblem: problem, path: origin.map { JSONPath.text($0.path) } ?? "$", offset: origin?.offset)
                }
                found.append((undo.record(of: unit), unit, id, problem))
            }
            guard let first = found.min(by: { ($0.record, $0.id) < ($1.record, $1.id) }) else { return }
            let unit = undo.units[first.record]
            guard options.lenient else {
                throw MappingError(
                    saveProblem: first.problem, path: JSONPath.text(unit.path), offset: unit.offset, hint: hint(first.unit, first.id, first.problem))
            }
            var records: [Int] = []
            var seen: Set<Int> = []
            for problem in found.sorted(by: { ($0.record, $0.id) < ($1.record, $1.id) }) where seen.insert(problem.record).inserted {
                records.append(problem.record)
                result.warnings.append(
                    ImportWarning(
                        skipping: JSONPath.text(undo.units[problem.record].path), saveProblem: problem.problem,
                        hint: hint(problem.unit, problem.id, problem.problem),
                        also: leftAsItWas(problem.record)))
            }
            pending = try undo.skip(records).sorted()
        }
    }

    /// The position of the property a save problem names, in the object's entity.
    private func position(of problem: StoreError, in id: ObjectID) -> Int? {
        let entity = mapping.model.descriptions[id.entity]
        guard let name = problem.property else { return nil }
        return entity.propertyPosition(name)
    }

    /// What to change when the problem is an object a record's relationship gave up and the
    /// import may not delete (a required inverse left empty); nil otherwise.
    private func hint(_ unit: Int, _ id: ObjectID, _ problem: StoreError) -> String? {
        guard case .assignment(let entityIndex, let index) = undo.units[unit].kind, problem.code == .missingValue || problem.code == .countViolation else {
            return nil
        }
        let owner = mapping.model.descriptions[entityIndex]
        let declared = owner.relationships[index]
        // The owner's own relationship left short: no object was given up.
        if owner.family.contains(id.entity) && problem.property == declared.name { return nil }
        let name = "\(owner.name).\(declared.name)"
        let policy = mapping.resolved[entityIndex].relationships.first { $0.index == index }?.policy
        switch policy {
        case .replace where declared.deleteRule != .cascade:
            return
                "\(name) gave it up, and the import deletes what a relationship gives up only when the mapping says so: the relationship's delete rule is \(declared.deleteRule.rawValue): make it cascade, or use mergeAndPrune, to let the import delete such objects"
        case .merge:
            return
                "\(name) gave it up, and merge never deletes: use mergeAndPrune, or replace with the cascade delete rule, to let the import delete such objects"
        default:
            return
                "\(name) gave it up, and the import does not delete it: another object holds it, or the relationship does not own its objects (a to-one inverse)"
        }
    }

    /// For a nested record: the relationship that took it, which skipping it leaves as it was.
    private func leftAsItWas(_ record: Int) -> String? {
        guard let parent = undo.units[record].parent, case .assignment(let entityIndex, let index) = undo.units[parent].kind else { return nil }
        let owner = mapping.model.descriptions[entityIndex]
        return "\(owner.name).\(owner.relationships[index].name) of \(JSONPath.text(undo.units[parent].path)) is left as it was"
    }

    // MARK: Deleting, the hook, counting

    /// What the import deletes at the end: objects a pruning relationship replaced (by a nested
    /// record that was not skipped) that nothing but their owner holds, and objects it gave up
    /// (a change not undone) that no record gave an owner meanwhile and nothing else holds.
    private func objectsToDelete() throws -> [ObjectID] {
        var found: [ObjectID] = []
        var seen: Set<ObjectID> = []
        for item in replaced where !(item.unit.map(undo.isSkipped) ?? false) && context.propertyValues(of: item.id) != nil {
            if seen.insert(item.id).inserted, try !deletions.isHeldElsewhere(item.id, besides: item.owner) { found.append(item.id) }
        }
        for orphan in orphans where !(orphan.unit.map(undo.isSkipped) ?? false) && !seen.contains(orphan.id) {
            guard let values = context.propertyValues(of: orphan.id), orphan.ownerPosition < values.count else { continue }
            if values[orphan.ownerPosition].targets.isEmpty, seen.insert(orphan.id).inserted, try !deletions.isHeldElsewhere(orphan.id, besides: nil) {
                found.append(orphan.id)
            }
        }
        return found
    }

    /// Deletes what the import gives up (``objectsToDelete()``), each looked at when its turn
    /// comes (deleting one may free another).
    private func deleteWhatWasGivenUp() throws {
        for item in replaced where !(item.unit.map(undo.isSkipped) ?? false) && context.propertyValues(of: item.id) != nil {
            if try !deletions.isHeldElsewhere(item.id, besides: item.owner) { try delete(item.id) }
        }
        for orphan in orphans where !(orphan.unit.map(undo.isSkipped) ?? false) {
            guard let values = context.propertyValues(of: orphan.id), orphan.ownerPosition < values.count else { continue }
            if values[orphan.ownerPosition].targets.isEmpty, try !deletions.isHeldElsewhere(orphan.id, besides: nil) { try delete(orphan.id) }
        }
        replaced = []
        orphans = []
    }

    /// Whether a record not skipped named the object (an object no record named, changed only
    /// through a relationship, counts as named).
    private func isNamed(_ id: ObjectID) -> Bool {
        namedBy[id]?.contains { !undo.isSkipped($0) } ?? true
    }

    /// Runs the after-import hook on every object a record inserted or changed, before the check
    /// of what the save refuses (so that the hook may fill in what the input lacks) and before
    /// the import deletes what it gave up (so that the hook may keep an object by linking it).
    private func runHook() throws {
        guard let hook = options.afterImport else { return }
        for (id, outcome) in outcomes where context.propertyValues(of: id) != nil {
            if outcome == .inserted || context.propertyValues(of: id) != context.committedValues(of: id), let object = context.object(with: id) {
                try hook(object)
            }
        }
    }

    /// Counts what the import did: an object set back to what it was (duplicate records that
    /// change a value and change it back) is unchanged; objects gone (replaced, or taken by a
    /// cascade) count as deleted when they were saved before, and not at all when this import
    /// made them; an object only skipped records named counts not at all, and is not among
    /// ``ImportResult/objectIDs``.
    private func count() {
        result.inserted = 0
        result.updated = 0
        result.unchanged = 0
        for (id, outcome) in outcomes where isNamed(id) {
            guard let now = context.propertyValues(of: id) else { continue }
            if outcome == .inserted {
                result.inserted += 1
            } else if now == context.committedValues(of: id) {
                result.unchanged += 1
            } else {
                result.updated += 1
            }
        }
        // Each top-level object where the first record not skipped named it.
        if undo.hasSkipped {
            let firsts = result.objectIDs.compactMap { id -> (unit: Int, id: ObjectID)? in
                guard context.propertyValues(of: id) != nil, let unit = topLevelUnits[id]?.first(where: { !undo.isSkipped($0) }) else { return nil }
                return (unit, id)
            }
            result.objectIDs = firsts.sorted { $0.unit < $1.unit }.map(\.id)
        }
        // What the context deletes on save: replaced objects and their cascades, never objects
        // this import made.
        result.deleted = context.deletedObjects.count
    }
}
