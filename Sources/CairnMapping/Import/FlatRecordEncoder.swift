import Cairn
import CairnSupport
import Foundation

/// Reads flat records straight into the store's encoding (``EncodedRows``), for a batch upsert
/// that makes no `Value` and no `String` per field: each value is written from its token's bytes
/// as the store writes it (``FastValue``); a value it does not take goes through ``ValueReader``.
/// A to-one reference by key (`"album": 12`) is written after the attributes as the key's
/// encoding (``EncodedReference``: the batch upsert finds the object and keeps the inverse in
/// step) when the store can set it so; a record that gives any other relationship, or a
/// reference as an array or a nested object, is not flat: the encoder stops (``NotFlat``) and
/// the import reads the chunk again through a context.
struct FlatRecordEncoder {
    /// A record gave a relationship the encoder does not write (anything but a reference by
    /// key the batch upsert sets), or a record given as its key alone.
    struct NotFlat: Error {}

    let entity: ResolvedEntity
    let tree: KeyTree
    let lenient: Bool
    let nulls: ImportOptions.Nulls
    /// Per entity attribute, its default's encoding (null for a transient attribute).
    private let defaults: [[UInt8]]
    /// Per resolved attribute, its position in the entity.
    private let positions: [Int]
    /// Per entity attribute, its index among the resolved attributes (nil: not mapped).
    private let resolvedIndex: [Int?]
    /// Per resolved attribute, how its values are written straight from their tokens.
    private let kinds: [FastValue]
    /// The references the rows carry after the attributes, in order.
    let references: [EncodedReference]
    /// Per resolved relationship, its reference's number (nil: a record giving it is not flat).
    private let referenceOf: [Int?]
    /// Per reference: its relationship, the destination attribute its key is a value of (how
    /// the key is read), and how that value is written from its token.
    private let referenceSources: [(relationship: ResolvedRelationship, destination: ResolvedEntity, key: ResolvedAttribute, kind: FastValue)]
    /// The record being read: each resolved attribute's value in `scratch`, and its key rank.
    private var scratch = ByteWriter(capacity: 1024)
    private var ranges: [Range<Int>?]
    private var ranks: [Int]

    /// An encoder of `entity`'s flat records. References by key are read flat unless
    /// `insertsMissingReferences` (a missing object is then made, which a context does).
    init(_ entity: ResolvedEntity, tree: KeyTree, mapping: Mapping, lenient: Bool, nulls: ImportOptions.Nulls, insertsMissingReferences: Bool) {
        self.entity = entity
        self.tree = tree
        self.lenient = lenient
        self.nulls = nulls
        let attributes = entity.description.attributes
        defaults = attributes.map { attribute in
            var writer = ByteWriter(capacity: 16)
            ValueEncoding.write(attribute.isTransient ? .null : attribute.defaultValue ?? .null, &writer)
            return writer.bytes
        }
        positions = entity.attributes.map(\.position)
        var resolvedIndex = [Int?](repeating: nil, count: attributes.count)
        for (index, attribute) in entity.attributes.enumerated() { resolvedIndex[attribute.position] = index }
        self.resolvedIndex = resolvedIndex
        kinds = entity.attributes.map(FastValue.init)
        var references: [EncodedReference] = []
        var referenceOf: [Int?] = []
        var referenceSources: [(ResolvedRelationship, ResolvedEntity, ResolvedAttribute, FastValue)] = []
        for relationship in entity.relationships {
            let destination = mapping.resolved[relationship.destination]
            // (A reference by another attribute than the destination's key is found by a fetch,
            // which compares values as predicates do, not by their stored bytes.)
            guard !insertsMissingReferences, relationship.relatedBy == nil || relationship.relatedBy == destination.identity,
                let key = RecordReader.referenceAttribute(relationship, destination, mapping: mapping),
                EncodedReference.refusal(relationship.index, keyPosition: key.position, of: entity.description, in: mapping.model) == nil
            else {
                referenceOf.append(nil)
                continue
            }
            referenceOf.append(references.count)
            references.append(EncodedReference(relationship: relationship.index, keyPosition: key.position))
            referenceSources.append((relationship, destination, key, FastValue(key)))
        }
        self.references = references
        self.referenceOf = referenceOf
        self.referenceSources = referenceSources
        ranges = Array(repeating: nil, count: entity.attributes.count + references.count)
        ranks = Array(repeating: .max, count: entity.attributes.count + references.count)
    }

    /// The relationship of reference number `reference`.
    func relationship(ofReference reference: Int) -> ResolvedRelationship { referenceSources[reference].relationship }

    /// Whether reading a record may call a value transformer that is user code (not a
    /// built-in): an attribute's, or that of the destination attribute a reference's key is
    /// read as.
    var callsTransformers: Bool {
        func calls(_ attribute: ResolvedAttribute) -> Bool { attribute.transformerName != nil && !BuiltInTransformer.isBuiltIn(attribute.transformer) }
        return entity.attributes.contains(where: calls) || referenceSources.contains { calls($0.key) }
    }

    /// Reads the record whose `{` was just read (record number `record`, under `root`) and
    /// appends it to `rows`; false when a lenient import skipped it (no unique key).
    ///
    /// - Throws: ``NotFlat`` when the record gives a relationship it does not write; ``MappingError`` for a value
    ///   that does not fit (strict) or a missing key (strict).
    mutating func append(
        _ token: JSONScanner.Token, _ scanner: inout JSONScanner, to rows: inout EncodedRows, reader: inout RecordReader, root: [JSONPath.Step],
        record: Int
    ) throws -> Bool {
        var path: [JSONPath.Step] { root + [.index(record)] }  // made only for a message
        let start = scanner.offset - 1
        guard token == .beginObject else {
            try scanner.skip(token)
            throw MappingError(
                .unexpectedShape, "a record of \(entity.name) must be a JSON object, not \(RecordReader.describe(token))", entity: entity.name,
                path: JSONPath.text(path), offset: start)
        }
        scratch.removeAll()
        for index in ranges.indices {
            ranges[index] = nil
            ranks[index] = .max
        }
        // The record's path, in the reader's own array (no array made per record).
        reader.path.steps.removeAll(keepingCapacity: true)
        reader.path.steps.append(contentsOf: root)
        reader.path.steps.append(.index(record))
        try members(tree, &scanner, &reader)
        if nulls == .neverOverwrite {
            for index in entity.attributes.indices {  // a null reference empties its relationship all the same
                if let range = ranges[index], isNull(range) { ranges[index] = nil }
            }
        }
        // The unique key, whole and not null.
        if let missing = entity.identity.first(where: { position in
            guard let index = resolvedIndex[position], let range = ranges[index] else { return true }
            return isNull(range)
        }) {
            let problem = ImportRecord.missingKey(entity, position: missing, path: path, offset: start)
            guard lenient else { throw problem.error }
            reader.warnings.append(problem.warning)
            return false
        }
        let attributeCount = defaults.count, resolvedCount = entity.attributes.count
        scratch.bytes.withUnsafeBytes { given in
            rows.append { position, writer in
                guard position < attributeCount else {
                    // A reference's key, after the attributes.
                    guard let range = ranges[resolvedCount + position - attributeCount] else {
                        ValueEncoding.writeNull(&writer)
                        return false
                    }
                    writer.write(bytes: given.piece(range))
                    return true
                }
                if let index = resolvedIndex[position], let range = ranges[index] {
                    writer.write(bytes: given.piece(range))
                    return true
                }
                writer.write(bytes: defaults[position])
                return false
            }
        }
        return true
    }

    private func isNull(_ range: Range<Int>) -> Bool {
        scratch.bytes.withUnsafeBytes { ValueEncoding.isNull($0.piece(range)) }
    }

    /// Reads the members of an object (its `{` read) up to its `}`.
    private mutating func members(_ tree: KeyTree, _ scanner: inout JSONScanner, _ reader: inout RecordReader) throws {
        while let (member, key, valueToken) = try tree.nextMemberTarget(&scanner) {
            reader.path.push(key)
            defer { reader.path.pop() }
            let entry: KeyTree.Entry
            switch member {
            case .only(let only):
                try target(only, valueToken, &scanner, &reader)
                continue
            case .entry(let found): entry = found
            }
            let start: JSONScanner? = entry.consumers > 1 ? scanner : nil
            var first = true
            for target in entry.targets {
                if !first, let start { scanner = start }
                first = false
                try self.target(target, valueToken, &scanner, &reader)
            }
            if let child = entry.child, valueToken == .beginObject {
                if !first, let start { scanner = start }
                first = false
                try members(child, &scanner, &reader)
            }
            if first { try scanner.skip(valueToken) }
        }
    }

    /// Writes the value of an attribute, or of a relationship given as a reference by key.
    ///
    /// - Throws: ``NotFlat`` for any other relationship.
    private mutating func target(
        _ target: KeyTree.Target, _ token: JSONScanner.Token, _ scanner: inout JSONScanner, _ reader: inout RecordReader
    )
        throws
    {
        switch target {
        case .attribute(let index, let rank): try attribute(index, rank, token, &scanner, &reader)
        case .relationship(let index, let rank):
            guard let reference = referenceOf[index] else { throw NotFlat() }
            try self.reference(reference, rank, token, &scanner, &reader)
        }
    }

    /// Writes a reference's key (or null) into the scratch buffer, read as the destination
    /// attribute it is a value of.
    ///
    /// - Throws: ``NotFlat`` for an array or a nested record, or a key that does not fit in a
    ///   lenient import (the context sets the relationship aside as it says); strict, the
    ///   ``MappingError`` a context throws for that key.
    private mutating func reference(
        _ reference: Int, _ rank: Int, _ token: JSONScanner.Token, _ scanner: inout JSONScanner, _ reader: inout RecordReader
    ) throws {
        let slot = entity.attributes.count + reference
        guard token != .beginArray, token != .beginObject else { throw NotFlat() }
        // Read (and checked) whatever its rank, as a context's reader reads it; kept if it wins.
        let begin = scanner.offset
        let valueStart = scratch.count
        let source = referenceSources[reference]
        if token == .null {
            ValueEncoding.writeNull(&scratch)
        } else if !source.kind.write(token, &scanner, &scratch) {
            do {
                ValueEncoding.write(try ValueReader.read(token, source.key, &scanner), &scratch)
            } catch let misfit as ValueReader.Misfit {
                guard !lenient || misfit.isMappingError else { throw NotFlat() }
                throw RelationItem.misfitKey(
                    misfit, entity, source.relationship, source.destination, key: source.key, path: reader.path.text, offset: begin)
            }
        }
        guard rank <= ranks[slot] else { return }
        ranges[slot] = valueStart..<scratch.count
        ranks[slot] = rank
    }

    /// Writes one attribute's value into the scratch buffer.
    private mutating func attribute(
        _ index: Int, _ rank: Int, _ token: JSONScanner.Token, _ scanner: inout JSONScanner, _ reader: inout RecordReader
    )
        throws
    {
        guard rank <= ranks[index] else {
            try scanner.skip(token)
            return
        }
        let begin = scanner.offset
        let valueStart = scratch.count
        if !kinds[index].write(token, &scanner, &scratch) {
            let attribute = entity.attributes[index]
            do {
                ValueEncoding.write(try ValueReader.read(token, attribute, &scanner), &scratch)
            } catch let misfit as ValueReader.Misfit {
                guard lenient, !misfit.isMappingError else {
                    throw MappingError(
                        misfit.code, misfit.message, entity: entity.name, property: attribute.name, path: reader.path.text, offset: begin)
                }
                reader.warnings.append(ImportWarning(path: reader.path.text, message: "\(misfit.message); \(entity.name).\(attribute.name) set to nil"))
                ValueEncoding.writeNull(&scratch)
            }
        }
        ranges[index] = valueStart..<scratch.count
        ranks[index] = rank
    }
}
