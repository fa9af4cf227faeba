import Cairn
import CairnSupport

/// Reads records from the JSON scanner against their entities' mappings, straight from bytes:
/// only mapped keys are decoded, values convert to their attributes' types as they are read.
struct RecordReader {
    let mapping: Mapping
    let lenient: Bool
    private var trees: [Int: KeyTree] = [:]
    /// What a lenient read set aside.
    var warnings: [ImportWarning] = []
    /// Where the reader is.
    var path = JSONPath()
    /// How many records the record being read is nested in.
    private var nesting = 0
    /// The deepest nesting of records read: each level is a level of recursion of the reader and
    /// of the import applying its records, far fewer than the JSON scanner's limit allows, so
    /// that a thread with a small stack reads any input.
    static let nestingLimit = 100

    init(mapping: Mapping, lenient: Bool) {
        self.mapping = mapping
        self.lenient = lenient
    }

    private mutating func tree(_ entity: ResolvedEntity) -> KeyTree {
        if let tree = trees[entity.description.index] { return tree }
        let tree = KeyTree(entity)
        trees[entity.description.index] = tree
        return tree
    }

    /// Reads the record whose first token (`{`) was just read, as an object of `entity`, or of
    /// the sub-entity the entity's mapper picks for it (unless `picksEntity` is false).
    mutating func record(
        _ entity: ResolvedEntity, _ token: JSONScanner.Token, _ scanner: inout JSONScanner, picksEntity: Bool = true
    ) throws -> ImportRecord {
        let start = scanner.offset - 1
        if picksEntity, let key = try keyOnly(entity, token, &scanner) { return key }
        guard token == .beginObject else {
            try scanner.skip(token)
            throw MappingError(
                .unexpectedShape, "a record of \(entity.name) must be a JSON object, not \(Self.describe(token))", entity: entity.name,
                path: path.text, offset: start)
        }
        let actual = picksEntity ? try picked(entity, scanner, offset: start) : entity
        for candidate in [entity, actual] {
            guard var refusal = candidate.unhonoured else { continue }
            refusal.path = path.text
            refusal.offset = start
            throw refusal
        }
        var record = ImportRecord(actual, path: path.steps, offset: start)
        try members(actual, tree(actual), &record, &scanner)
        return record
    }

    /// Reads a top-level record whose entity `discriminator` names: any entity without a
    /// `target`, else the target or one of its sub-entities (the target when the record lacks
    /// the key).
    mutating func record(
        _ target: ResolvedEntity?, choosingBy discriminator: ResolvedDiscriminator, _ token: JSONScanner.Token, _ scanner: inout JSONScanner
    ) throws -> ImportRecord {
        guard token == .beginObject else {
            if let target { return try record(target, token, &scanner) }
            let start = scanner.offset - 1
            try scanner.skip(token)
            throw MappingError(
                .unexpectedShape, "a record must be a JSON object naming its entity by \(discriminator.key), not \(Self.describe(token))",
                path: path.text, offset: start)
        }
        let entity = try discriminated(discriminator, within: target, scanner, offset: scanner.offset - 1)
        return try record(entity, token, &scanner)
    }

    /// The entity `discriminator` names for the record whose `{` the scanner just read: within
    /// `family`'s entities when given (`family` itself when the record lacks the key).
    ///
    /// - Throws: ``MappingError/Code/missingKey`` when the record lacks the key and there is no
    ///   `family`; ``MappingError/Code/unknownName`` for a value that names no entity;
    ///   ``MappingError/Code/invalidValue`` for one outside `family`. Each names the key's JSON
    ///   path and the record's offset.
    private func discriminated(
        _ discriminator: ResolvedDiscriminator, within family: ResolvedEntity?, _ scanner: JSONScanner, offset: Int
    ) throws -> ResolvedEntity {
        let place = path.text + "." + discriminator.key
        guard let value = try discriminator.value(in: scanner) else {
            if let family { return family }
            throw MappingError(.missingKey, "the record has no \(discriminator.key), which names its entity", path: place, offset: offset)
        }
        guard let index = discriminator.entity(for: value) else {
            throw MappingError(
                .unknownName, "\(discriminator.key) \"\(value)\" names no entity \(family.map { "of \($0.name)'s family " } ?? "")of the model",
                entity: family?.name, path: place, offset: offset)
        }
        if let family, !family.description.family.contains(index) {
            throw MappingError(
                .invalidValue,
                "\(discriminator.key) \"\(value)\" names \(mapping.model.descriptions[index].name), which is neither \(family.name) nor one of its sub-entities",
                entity: family.name, path: place, offset: offset)
        }
        return mapping.resolved[index]
    }

    /// A record given as its key alone (`[1, 2, 3]` as records: Groot's and Sync's import by
    /// identifiers): it names the object holding that key. Nil for an object or an array (read
    /// as a record, or refused), and for an entity whose unique key is not one attribute.
    private mutating func keyOnly(_ entity: ResolvedEntity, _ token: JSONScanner.Token, _ scanner: inout JSONScanner) throws -> ImportRecord? {
        let offset: Int  // the value's first byte
        switch token {
        case .string(let text): offset = text.range.lowerBound - 1
        case .number(let number): offset = number.range.lowerBound
        case .boolean(let flag): offset = scanner.offset - (flag ? 4 : 5)
        default: return nil
        }
        guard entity.identity.count == 1, let index = entity.attributes.firstIndex(where: { $0.position == entity.identity[0] }) else { return nil }
        var record = ImportRecord(entity, path: path.steps, offset: offset)
        record.isKeyOnly = true
        do {
            record.values[index] = try ValueReader.read(token, entity.attributes[index], &scanner)
        } catch let misfit as ValueReader.Misfit {
            let message = "a key of \(entity.name) given as a record: \(misfit.message)"
            guard lenient, !misfit.isMappingError else {
                throw MappingError(misfit.code, message, entity: entity.name, property: entity.attributes[index].name, path: path.text, offset: offset)
            }
            // Lenient: as a record whose key does not fit, skipped for its missing key.
            warnings.append(ImportWarning(path: path.text, message: "\(message); \(entity.name).\(entity.attributes[index].name) set to nil"))
            record.values[index] = .null
        }
        return record
    }

    /// The entity the entity's mapper (Groot's `entityMapperName`) or its discriminator picks for
    /// the record whose `{` the scanner just read: the entity itself without either, or when the
    /// mapper answers nil or the record lacks the discriminator's key.
    private func picked(_ entity: ResolvedEntity, _ scanner: JSONScanner, offset: Int) throws -> ResolvedEntity {
        if entity.entityMapper == nil, let discriminator = entity.discriminator {
            return try discriminated(discriminator, within: entity, scanner, offset: offset)
        }
        guard let (name, mapper) = entity.entityMapper else { return entity }
        var probe = scanner
        var limit = 1_000_000
        let json = try probe.tree(.beginObject, limit: &limit)
        let chosen: String?
        do { chosen = try mapper(json) } catch {
            throw MappingError(.invalidValue, "entity mapper \(name) failed: \(error)", entity: entity.name, path: path.text, offset: offset)
        }
        guard let chosen else { return entity }
        guard let found = mapping.model.entity(named: chosen), entity.description.family.contains(found.index) else {
            throw MappingError(
                .invalidValue, "entity mapper \(name) names \(chosen), which is neither \(entity.name) nor one of its sub-entities", entity: entity.name,
                path: path.text, offset: offset)
        }
        return mapping.resolved[found.index]
    }

    /// Reads the members of an object (its `{` read) up to its `}` into `record`.
    private mutating func members(_ entity: ResolvedEntity, _ tree: KeyTree, _ record: inout ImportRecord, _ scanner: inout JSONScanner) throws {
        while let (entry, key, valueToken) = try tree.nextMember(&scanner) {
            path.push(key)
            defer { path.pop() }
            if let only = entry.only {
                switch only {
                case .attribute(let index, let rank): try attribute(entity.attributes[index], index, rank, valueToken, &record, &scanner)
                case .relationship(let index, let rank): try relationship(entity, index, rank, valueToken, &record, &scanner)
                }
                continue
            }
            let descends = entry.child != nil && valueToken == .beginObject
            // A key may feed several properties (`pricing` a relationship and
            // `pricing.retail_price` an attribute): each reads the value from the same place.
            // (Copying the scanner costs; most keys feed one property.)
            let start: JSONScanner? = entry.consumers > 1 ? scanner : nil
            var first = true
            for target in entry.targets {
                if !first, let start { scanner = start }
                first = false
                switch target {
                case .attribute(let index, let rank):
                    try attribute(entity.attributes[index], index, rank, valueToken, &record, &scanner)
                case .relationship(let index, let rank):
                    try relationship(entity, index, rank, valueToken, &record, &scanner)
                }
            }
            if descends, let child = entry.child {
                if !first, let start { scanner = start }
                first = false
                try members(entity, child, &record, &scanner)
            }
            if first { try scanner.skip(valueToken) }  // a key path through a value that is not an object
        }
    }

    private mutating func attribute(
        _ attribute: ResolvedAttribute, _ index: Int, _ rank: Int, _ token: JSONScanner.Token, _ record: inout ImportRecord,
        _ scanner: inout JSONScanner
    ) throws {
        // A key that ranks below one already read is passed over unread, as the flat encoder
        // passes it over: only the value that wins is checked.
        if !record.ranks.isEmpty && rank > record.ranks[index] {
            try scanner.skip(token)
            return
        }
        let offset = scanner.offset
        let value: Value
        do {
            value = try ValueReader.read(token, attribute, &scanner)
        } catch let misfit as ValueReader.Misfit {
            let entity = mapping.model.descriptions[record.entity].name
            guard lenient, !misfit.isMappingError else {
                throw MappingError(misfit.code, misfit.message, entity: entity, property: attribute.name, path: path.text, offset: offset)
            }
            warnings.append(ImportWarning(path: path.text, message: "\(misfit.message); \(entity).\(attribute.name) set to nil"))
            value = .null
        }
        // (A key that ranks above the one read was passed over above.)
        record.values[index] = value
        if !record.ranks.isEmpty { record.ranks[index] = rank }
    }

    private mutating func relationship(
        _ entity: ResolvedEntity, _ index: Int, _ rank: Int, _ token: JSONScanner.Token, _ record: inout ImportRecord, _ scanner: inout JSONScanner
    ) throws {
        let relationship = entity.relationships[index]
        let destination = mapping.resolved[relationship.destination]
        var input: RelationInput
        switch token {
        case .null: input = .null
        case .beginArray:
            var items: [RelationItem] = []
            var position = 0
            var complete = true
            while let element = try scanner.next(), element != .endArray {
                path.push(.index(position))
                defer { path.pop() }
                if let item = try item(entity, relationship, destination, element, &scanner, complete: &complete) { items.append(item) }
                position += 1
            }
            if !relationship.isToMany && items.count > 1 {
                throw MappingError(
                    .invalidValue, "\(items.count) objects for the to-one relationship \(entity.name).\(relationship.name)", entity: entity.name,
                    property: relationship.name, path: path.text)
            }
            input = .items(items, complete: complete)
        default:
            var complete = true
            let item = try item(entity, relationship, destination, token, &scanner, complete: &complete)
            input = .items(item.map { [$0] } ?? [], complete: complete)
        }
        if rank <= record.relationRanks[index] {
            record.relations[index] = input
            record.relationRanks[index] = rank
        }
    }

    /// One related object: a nested record, or a reference by key.
    private mutating func item(
        _ entity: ResolvedEntity, _ relationship: ResolvedRelationship, _ destination: ResolvedEntity, _ token: JSONScanner.Token,
        _ scanner: inout JSONScanner, complete: inout Bool
    ) throws -> RelationItem? {
        let offset = scanner.offset
        switch token {
        case .beginObject:
            // Each nested record is a level of recursion here and in the import that applies it.
            guard nesting < Self.nestingLimit else {
                throw MappingError(
                    .unexpectedShape, "records nest more than \(Self.nestingLimit) levels deep (a record inside a record…)", entity: entity.name,
                    property: relationship.name, path: path.text, offset: offset - 1)
            }
            nesting += 1
            defer { nesting -= 1 }
            return .record(try record(destination, token, &scanner))
        case .null: return nil
        case .beginArray:
            try scanner.skip(token)
            throw MappingError(
                .invalidValue, "an array inside the array of \(entity.name).\(relationship.name), where an object or a key belongs",
                entity: entity.name, property: relationship.name, path: path.text, offset: offset)
        default:
            let keyAttribute = try referenceAttribute(entity, relationship, destination)
            do {
                return .reference(try ValueReader.read(token, keyAttribute, &scanner), path: path.steps, offset: offset)
            } catch let misfit as ValueReader.Misfit {
                guard lenient, !misfit.isMappingError else {
                    throw RelationItem.misfitKey(misfit, entity, relationship, destination, key: keyAttribute, path: path.text, offset: offset)
                }
                warnings.append(
                    ImportWarning(path: path.text, message: "a reference to \(destination.name): \(misfit.message); the relationship is left as it is"))
                complete = false
                return nil
            }
        }
    }

    /// The destination attribute a reference by key names: `relatedBy`, else the destination's
    /// unique key (of one attribute).
    private func referenceAttribute(
        _ entity: ResolvedEntity, _ relationship: ResolvedRelationship, _ destination: ResolvedEntity
    ) throws
        -> ResolvedAttribute
    {
        let positions = relationship.relatedBy ?? destination.identity
        guard let attribute = Self.referenceAttribute(relationship, destination, mapping: mapping) else {
            throw MappingError(
                .invalidValue,
                positions.isEmpty
                    ? "a key where a \(destination.name) object belongs, and \(destination.name) has no unique key to find it by (map one, or relatedBy)"
                    : "a single key where a \(destination.name) object belongs, and its unique key has \(positions.count) attributes",
                entity: entity.name, property: relationship.name, path: path.text)
        }
        return attribute
    }

    /// The destination attribute a reference by key of `relationship` names (`relatedBy`, else
    /// the destination's unique key), read as the destination maps it; nil unless that is one
    /// attribute.
    static func referenceAttribute(_ relationship: ResolvedRelationship, _ destination: ResolvedEntity, mapping: Mapping) -> ResolvedAttribute? {
        let positions = relationship.relatedBy ?? destination.identity
        guard positions.count == 1, let position = positions.first else { return nil }
        if let mapped = destination.attributes.first(where: { $0.position == position }) { return mapped }
        let attribute = destination.description.attributes[position]
        return ResolvedAttribute(
            name: attribute.name, position: position, type: attribute.type, keyPaths: [], dateFormat: mapping.dateFormat, datePattern: nil,
            transformerName: nil, transformer: nil, coercesText: true)
    }

    static func describe(_ token: JSONScanner.Token) -> String {
        switch token {
        case .beginArray: "an array"
        case .string: "a string"
        case .number: "a number"
        case .boolean: "a boolean"
        case .null: "null"
        default: "something else"
        }
    }
}
