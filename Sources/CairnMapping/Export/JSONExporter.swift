import Cairn
import CairnSupport
import Foundation

/// Writes objects as JSON: each entity's properties laid out once as a tree of keys (dotted key
/// paths nest), values formatted as the mapping reads them.
struct JSONExporter {
    let context: ObjectContext
    let mapping: Mapping
    let options: ExportOptions
    var writer: JSONWriter
    private var layouts: [Int: [ExportNode]] = [:]
    /// The stored values of the object being written (reused), and where each starts.
    private var rowBytes: [UInt8] = []
    private var rowStarts: [Int] = []

    init(context: ObjectContext, mapping: Mapping, options: ExportOptions, writer: JSONWriter) {
        self.context = context
        self.mapping = mapping
        self.options = options
        self.writer = writer
    }

    /// One key of an exported object: a property, or an object holding the keys of dotted paths.
    indirect enum ExportNode {
        case attribute(MemberName, ResolvedAttribute)
        case relationship(MemberName, ResolvedRelationship)
        case object(MemberName, [ExportNode])
    }

    /// A member's key as JSON (`"key":`), written once, not once per object.
    struct MemberName {
        let json: [UInt8]

        init(_ key: String) {
            var writer = JSONWriter(sink: { _ in })
            writer.string(key)
            writer.byte(UInt8(ascii: ":"))
            json = Array(writer.buffer[...])  // not the writer's whole buffer
        }
    }

    mutating func write(_ ids: [ObjectID]) throws {
        let lines = options.format == .jsonLines
        if !lines { writer.byte(UInt8(ascii: "[")) }
        for (index, id) in ids.enumerated() {
            if index > 0 { writer.byte(lines ? 0x0A : UInt8(ascii: ",")) }
            try object(id, depth: options.depth, from: nil)
            try writer.flush()
            if let progress = options.progress, (index + 1) % max(1, options.progressInterval) == 0 || index == ids.count - 1 {
                progress(index + 1, ids.count)
            }
        }
        if lines {
            if !ids.isEmpty { writer.byte(0x0A) }
        } else {
            writer.byte(UInt8(ascii: "]"))
        }
        try writer.flush(force: true)
    }

    private mutating func layout(_ entity: Int) -> [ExportNode] {
        if let nodes = layouts[entity] { return nodes }
        let resolved = mapping.resolved[entity]
        var paths: [([String], ExportNode)] = []
        for attribute in resolved.attributes {
            if let path = attribute.keyPaths.first { paths.append((path, .attribute(MemberName(path.last ?? attribute.name), attribute))) }
        }
        for relationship in resolved.relationships {
            if let path = relationship.keyPaths.first { paths.append((path, .relationship(MemberName(path.last ?? relationship.name), relationship))) }
        }
        let nodes = Self.nest(paths)
        layouts[entity] = nodes
        return nodes
    }

    /// Groups key paths by their first key, in order; the first property to claim a key keeps it.
    private static func nest(_ paths: [([String], ExportNode)]) -> [ExportNode] {
        var order: [String] = []
        var leaves: [String: ExportNode] = [:]
        var deeper: [String: [([String], ExportNode)]] = [:]
        for (path, node) in paths {
            guard let first = path.first else { continue }
            if leaves[first] == nil && deeper[first] == nil { order.append(first) }
            if path.count == 1 {
                if leaves[first] == nil && deeper[first] == nil { leaves[first] = node }
            } else if leaves[first] == nil {
                deeper[first, default: []].append((Array(path.dropFirst()), node))
            }
        }
        return order.compactMap { key in leaves[key] ?? deeper[key].map { .object(MemberName(key), nest($0)) } }
    }

    /// Writes one object; `from` is the relationship (and object) that nested it, whose inverse is
    /// not followed back.
    private mutating func object(_ id: ObjectID, depth: Int, from: (object: ObjectID, inverse: String?)?) throws {
        let nodes = layout(id.entity)
        // Flat objects are written from the stored bytes: no value decoded that can be written
        // as it is.
        if depth == 0, options.beforeExport == nil, context.copyStoredValues(of: id, into: &rowBytes, starts: &rowStarts),
            rowStarts.count == mapping.model.descriptions[id.entity].propertyCount + 1
        {
            return try storedMembers(nodes, id: id, from: from)
        }
        guard let values = context.propertyValues(of: id) else {
            throw MappingError(.invalidValue, "object \(id) does not exist in the context")
        }
        if let hook = options.beforeExport, let managed = context.object(with: id) {
            var json = try tree(nodes, values, id: id, depth: depth, from: from)
            try hook(managed, &json)
            writer.value(json)
            return
        }
        try members(nodes, values, id: id, depth: depth, from: from)
    }

    private mutating func members(
        _ nodes: [ExportNode], _ values: [PropertyValue], id: ObjectID, depth: Int, from: (object: ObjectID, inverse: String?)?
    ) throws {
        writer.byte(UInt8(ascii: "{"))
        var first = true
        func separate(_ writer: inout JSONWriter) {
            if !first { writer.byte(UInt8(ascii: ",")) }
            first = false
        }
        for node in nodes {
            switch node {
            case .attribute(let key, let attribute):
                guard case .attribute(let value) = values[attribute.position] else { continue }
                if value == .null && !options.writesNulls { continue }
                separate(&writer)
                writer.bytes(key.json)
                try self.value(value, attribute, entity: id.entity)
            case .relationship(let key, let relationship):
                if let from, from.inverse == relationship.name { continue }
                let targets = values[relationship.position].targets
                guard let json = try related(targets, relationship, id: id, depth: depth) else { continue }
                if json == .null && !options.writesNulls { continue }
                separate(&writer)
                writer.bytes(key.json)
                try writeRelated(json, targets, relationship, id: id, depth: depth)
            case .object(let key, let children):
                separate(&writer)
                writer.bytes(key.json)
                try members(children, values, id: id, depth: depth, from: from)
            }
        }
        writer.byte(UInt8(ascii: "}"))
    }

    /// Writes an object's members from its stored bytes (``rowBytes``): strings, integers,
    /// doubles, booleans and ISO dates as they are; other values, and relationships (their keys:
    /// this runs at depth 0), decoded.
    private mutating func storedMembers(_ nodes: [ExportNode], id: ObjectID, from: (object: ObjectID, inverse: String?)?) throws {
        writer.byte(UInt8(ascii: "{"))
        var first = true
        for node in nodes {
            switch node {
            case .attribute(let key, let attribute):
                let range = rowStarts[attribute.position]..<rowStarts[attribute.position + 1]
                let isNull = rowBytes.withUnsafeBytes { ValueEncoding.isNull($0.piece(range)) }
                if isNull && !options.writesNulls { continue }
                if !first { writer.byte(UInt8(ascii: ",")) }
                first = false
                writer.bytes(key.json)
                try storedValue(range, attribute, entity: id.entity)
            case .relationship(let key, let relationship):
                if let from, from.inverse == relationship.name { continue }
                let range = rowStarts[relationship.position]..<rowStarts[relationship.position + 1]
                let targets = rowBytes.withUnsafeBytes { ValueEncoding.decodeProperty($0.piece(range)) }.targets
                guard let json = try related(targets, relationship, id: id, depth: 0) else { continue }
                if json == .null && !options.writesNulls { continue }
                if !first { writer.byte(UInt8(ascii: ",")) }
                first = false
                writer.bytes(key.json)
                writer.value(json)
            case .object(let key, let children):
                if !first { writer.byte(UInt8(ascii: ",")) }
                first = false
                writer.bytes(key.json)
                try storedMembers(children, id: id, from: from)
            }
        }
        writer.byte(UInt8(ascii: "}"))
    }

    /// Writes one stored value as the attribute's mapping reads it back: the scalars
    /// ``ValueEncoding/scalar(_:)`` reads in place without decoding them, the rest decoded.
    private mutating func storedValue(_ range: Range<Int>, _ attribute: ResolvedAttribute, entity: Int) throws {
        let bytes = rowBytes
        try bytes.withUnsafeBytes { buffer in
            let value = buffer.piece(range)
            let scalar = attribute.transformerName == nil ? ValueEncoding.scalar(value) : .other
            switch scalar {
            case .null: writer.raw("null")
            case .boolean(let flag): flag ? writer.raw("true") : writer.raw("false")
            case .integer(let number): writer.integer(number)
            case .string(let utf8) where attribute.type == .string: writer.string(utf8: utf8)
            case .double(let number): try self.value(.double(number), attribute, entity: entity)
            case .date(let seconds): try self.value(.date(Date(timeIntervalSinceReferenceDate: seconds)), attribute, entity: entity)
            case .string, .other:
                guard let decoded = ValueEncoding.decode(value) else {
                    throw MappingError(
                        .invalidValue, "the stored value does not decode", entity: mapping.model.descriptions[entity].name, property: attribute.name)
                }
                try self.value(decoded, attribute, entity: entity)
            }
        }
    }

    /// What a relationship writes: nil to leave it out; a placeholder `.null` / `.boolean(true)`
    /// telling ``writeRelated`` to nest objects, or the keys to write.
    private func related(_ targets: [ObjectID], _ relationship: ResolvedRelationship, id: ObjectID, depth: Int) throws -> JSONValue? {
        if depth > 0 { return .boolean(true) }
        let destination = mapping.resolved[relationship.destination]
        let positions = relationship.relatedBy ?? destination.identity
        guard positions.count == 1, let keyAttribute = destination.attributes.first(where: { $0.position == positions[0] }) else { return nil }
        let keys = try targets.map { target -> JSONValue in
            guard let values = context.propertyValues(of: target), case .attribute(let key) = values[keyAttribute.position] else { return .null }
            return try json(key, keyAttribute, entity: relationship.destination)
        }
        if relationship.isToMany { return .array(keys) }
        return keys.first ?? .null
    }

    private mutating func writeRelated(_ json: JSONValue, _ targets: [ObjectID], _ relationship: ResolvedRelationship, id: ObjectID, depth: Int) throws {
        guard depth > 0 else { return writer.value(json) }
        let inverse = mapping.model.descriptions[id.entity].relationships[relationship.index].inverse
        if relationship.isToMany {
            writer.byte(UInt8(ascii: "["))
            for (index, target) in targets.enumerated() {
                if index > 0 { writer.byte(UInt8(ascii: ",")) }
                try object(target, depth: depth - 1, from: (id, inverse))
            }
            writer.byte(UInt8(ascii: "]"))
        } else if let target = targets.first {
            try object(target, depth: depth - 1, from: (id, inverse))
        } else {
            writer.raw("null")
        }
    }

    /// An object as a tree (for the before-export hook).
    private mutating func tree(
        _ nodes: [ExportNode], _ values: [PropertyValue], id: ObjectID, depth: Int, from: (object: ObjectID, inverse: String?)?
    ) throws -> JSONValue {
        var sub = JSONWriter(sink: { _ in })
        swap(&sub, &writer)
        defer { swap(&sub, &writer) }
        try members(nodes, values, id: id, depth: depth, from: from)
        let bytes = writer.buffer
        return try bytes.withUnsafeBytes { buffer in
            var scanner = JSONScanner(buffer)
            guard let first = try scanner.next() else { return .null }
            var limit = Int.max
            return try scanner.tree(first, limit: &limit)
        }
    }

    private mutating func value(_ value: Value, _ attribute: ResolvedAttribute, entity: Int) throws {
        // A transformer makes the JSON of every value but null, whatever the attribute's type.
        if attribute.transformerName != nil && value != .null { return writer.value(try json(value, attribute, entity: entity)) }
        if case .date(let date) = value { try check(date, attribute, entity: entity) }
        ValueJSON.write(value, dateFormat: attribute.dateFormat, pattern: attribute.datePattern, to: &writer)
    }

    /// A value of an attribute of `entity` as JSON, as the attribute's mapping reads it back:
    /// through its transformer (but null, which is null both ways), dates in their format.
    ///
    /// - Throws: ``MappingError/Code/invalidMapping`` when no transformer is registered under the
    ///   attribute's transformer name (an import would refuse the value too);
    ///   ``MappingError/Code/invalidValue`` when the transformer refuses the value, or for a date
    ///   outside years 1 to 9999 (``DateRange``).
    func json(_ value: Value, _ attribute: ResolvedAttribute, entity: Int) throws -> JSONValue {
        if let name = attribute.transformerName, value != .null {
            let entityName = mapping.model.descriptions[entity].name
            guard let transformer = attribute.transformer else {
                throw MappingError(
                    .invalidMapping, MappingError.unregisteredTransformer(name), entity: entityName, property: attribute.name)
            }
            do { return try transformer.json(from: value) } catch {
                throw MappingError(.invalidValue, "transformer \(name) refused the value: \(error)", entity: entityName, property: attribute.name)
            }
        }
        if case .date(let date) = value { try check(date, attribute, entity: entity) }
        return ValueJSON.json(value, dateFormat: attribute.dateFormat, pattern: attribute.datePattern)
    }

    /// Checks that `date` lies in years 1 to 9999 as the attribute's format writes it (ISO 8601
    /// and milliseconds rounded to the millisecond, a pattern at its offset too): the dates every
    /// reader takes back.
    ///
    /// - Throws: ``MappingError/Code/invalidValue`` naming the entity, the attribute and the date.
    private func check(_ date: Date, _ attribute: ResolvedAttribute, entity: Int) throws {
        var seconds = date.timeIntervalSince1970
        var offset = 0
        switch attribute.dateFormat {
        case .pattern(_, let patternOffset): offset = patternOffset
        case .iso8601, .unixMilliseconds: seconds = (seconds * 1000).rounded() / 1000
        case .unixSeconds: break
        }
        guard DateRange.contains(secondsSince1970: seconds, offset: offset) else {
            throw MappingError(
                .invalidValue, "\(DateText.iso8601(date)) is outside \(DateRange.description), the dates JSON import reads back",
                entity: mapping.model.descriptions[entity].name, property: attribute.name)
        }
    }
}
