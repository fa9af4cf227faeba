import Cairn
import Foundation

extension Mapping {
    /// Builds a mapping from a JSON mapping file (the form the command line takes):
    ///
    /// ```json
    /// {
    ///   "keyStyle": "snakeCase", "dateFormat": "iso8601", "userInfo": true,
    ///   "layout": "plain", "discriminator": { "key": "model", "entities": { "app.person": "Person" }, "matchesEntityNames": true },
    ///   "insertsMissingReferences": false,
    ///   "entities": {
    ///     "Person": {
    ///       "identity": ["ticket"], "dateFormat": "M/d/yyyy", "mapsUnlisted": true,
    ///       "discriminator": { "key": "type", "entities": { "manager": "Manager" } },
    ///       "attributes": { "ticket": "ticket_number", "salary": ["pay.salary", "salary"],
    ///                       "hired": { "key": "hire_date", "date": "M/d/yyyy", "transformer": "Name", "coerce": true } },
    ///       "relationships": { "employer": { "key": "employer_id", "policy": "merge", "relatedBy": ["code"] } },
    ///       "ignore": ["notes"]
    ///     }
    ///   }
    /// }
    /// ```
    ///
    /// - Throws: ``MappingError/Code/invalidMapping`` naming the place in the file (a JSON path)
    ///   for a malformed file, and what ``init(model:keyStyle:dateFormat:conventions:layout:discriminator:entities:)``
    ///   throws.
    public init(model: Model, file bytes: [UInt8]) throws(MappingError) {
        let root = try Self.parse(bytes)
        var file = MappingFile(root: root)
        let keyStyle = try file.keyStyle(root["keyStyle"], "$.keyStyle") ?? .asIs
        let dateFormat = try file.string(root["dateFormat"], "$.dateFormat").map(DateFormat.init(name:)) ?? .standard
        let readsUserInfo = try file.bool(root["userInfo"], "$.userInfo") ?? true
        var entities: [EntityMapping] = []
        if let node = root["entities"] {
            for (name, value) in try file.object(node, "$.entities") {
                entities.append(try file.entity(name, value, "$.entities.\(name)"))
            }
        }
        let layout = try file.layout(root["layout"], "$.layout") ?? .plain
        let discriminator = try root["discriminator"].map { node throws(MappingError) in try file.discriminator(node, "$.discriminator") }
        let insertsMissing = try file.bool(root["insertsMissingReferences"], "$.insertsMissingReferences") ?? false
        try file.checkKnownKeys(root, ["keyStyle", "dateFormat", "userInfo", "layout", "discriminator", "insertsMissingReferences", "entities"], "$")
        try self.init(
            model: model, keyStyle: keyStyle, dateFormat: dateFormat, conventions: readsUserInfo ? .standard : .none, layout: layout,
            discriminator: discriminator, entities: entities)
        insertsMissingReferences = insertsMissing
    }

    /// Reads a mapping file from disk, a pipe or a device (see ``init(model:file:)``), at most
    /// ``maximumFileSize`` bytes of it.
    ///
    /// - Throws: ``MappingError/Code/unreadableInput`` for a file that does not read or is
    ///   larger (`/dev/zero` is refused after that many bytes, not read forever).
    public init(model: Model, contentsOf url: URL) throws(MappingError) {
        let bytes: [UInt8]
        do {
            let handle = try FileHandle(forReadingFrom: url)
            defer { try? handle.close() }
            bytes = Array(try handle.read(upToCount: Self.maximumFileSize + 1) ?? Data())
        } catch {
            throw MappingError(.unreadableInput, "cannot read the mapping file \(url.path): \(error.localizedDescription)")
        }
        guard bytes.count <= Self.maximumFileSize else {
            throw MappingError(.unreadableInput, "the mapping file \(url.path) is larger than \(Self.maximumFileSize) bytes; a mapping file is small")
        }
        try self.init(model: model, file: bytes)
    }

    /// The largest mapping file read: real ones are a few KiB.
    public static let maximumFileSize = 16 << 20

    private static func parse(_ bytes: [UInt8]) throws(MappingError) -> JSONValue {
        do {
            return try bytes.withUnsafeBytes { buffer throws(JSONSyntaxError) in
                var scanner = JSONScanner(buffer, maximumDepth: 64)
                guard let first = try scanner.next() else { throw scanner.failure("no JSON value in the input") }
                var limit = 1_000_000
                let value = try scanner.tree(first, limit: &limit)
                _ = try scanner.next()
                return value
            }
        } catch let error as JSONSyntaxError {
            throw MappingError(.invalidMapping, "the mapping file is not JSON: \(error)", offset: error.offset)
        } catch {
            throw MappingError(.invalidMapping, "the mapping file is not JSON: \(error)")
        }
    }
}

/// Reads the parts of a mapping file, naming the JSON path of anything out of place.
private struct MappingFile {
    let root: JSONValue

    func fail(_ path: String, _ message: String) -> MappingError {
        MappingError(.invalidMapping, "the mapping file: \(message)", path: path)
    }

    func string(_ value: JSONValue?, _ path: String) throws(MappingError) -> String? {
        guard let value else { return nil }
        guard case .string(let text) = value else { throw fail(path, "a string was expected") }
        return text
    }

    func bool(_ value: JSONValue?, _ path: String) throws(MappingError) -> Bool? {
        guard let value else { return nil }
        guard case .boolean(let flag) = value else { throw fail(path, "true or false was expected") }
        return flag
    }

    func strings(_ value: JSONValue?, _ path: String) throws(MappingError) -> [String]? {
        guard let value else { return nil }
        switch value {
        case .string(let text): return [text]
        case .array(let items):
            return try items.enumerated().map { index, item throws(MappingError) in
                guard case .string(let text) = item else { throw fail("\(path)[\(index)]", "a string was expected") }
                return text
            }
        default: throw fail(path, "a string or an array of strings was expected")
        }
    }

    func object(_ value: JSONValue, _ path: String) throws(MappingError) -> [(key: String, value: JSONValue)] {
        guard case .object(let members) = value else { throw fail(path, "an object was expected") }
        return members
    }

    func keyStyle(_ value: JSONValue?, _ path: String) throws(MappingError) -> KeyStyle? {
        guard let text = try string(value, path) else { return nil }
        guard let style = KeyStyle(rawValue: text) else { throw fail(path, "key style \(text): asIs or snakeCase was expected") }
        return style
    }

    func checkKnownKeys(_ value: JSONValue, _ known: Set<String>, _ path: String) throws(MappingError) {
        for (key, _) in try object(value, path) where !known.contains(key) {
            throw fail("\(path).\(key)", "unknown key \(key); known here: \(known.sorted().joined(separator: ", "))")
        }
    }

    func layout(_ value: JSONValue?, _ path: String) throws(MappingError) -> RecordLayout? {
        guard let text = try string(value, path) else { return nil }
        guard let layout = RecordLayout(rawValue: text) else { throw fail(path, "layout \(text): plain or django was expected") }
        return layout
    }

    /// `{"key": "type", "entities": {"car": "Car"}, "matchesEntityNames": true}`, or only the key
    /// as a string.
    func discriminator(_ value: JSONValue, _ path: String) throws(MappingError) -> EntityDiscriminator {
        if case .string(let key) = value { return EntityDiscriminator(key: key) }
        try checkKnownKeys(value, ["key", "entities", "matchesEntityNames"], path)
        guard let key = try string(value["key"], "\(path).key") else { throw fail("\(path).key", "the key whose value names the entity is missing") }
        var entities: [String: String] = [:]
        if let node = value["entities"] {
            for (given, name) in try object(node, "\(path).entities") {
                guard case .string(let entity) = name else { throw fail("\(path).entities.\(given)", "an entity name was expected") }
                entities[given] = entity
            }
        }
        let matches = try bool(value["matchesEntityNames"], "\(path).matchesEntityNames") ?? true
        return EntityDiscriminator(key: key, entities: entities, matchesEntityNames: matches)
    }

    mutating func entity(_ name: String, _ value: JSONValue, _ path: String) throws(MappingError) -> EntityMapping {
        try checkKnownKeys(
            value, ["identity", "dateFormat", "keyStyle", "mapsUnlisted", "discriminator", "attributes", "relationships", "ignore"], path)
        var mapping = EntityMapping(name)
        mapping.discriminator = try value["discriminator"].map { node throws(MappingError) in try discriminator(node, "\(path).discriminator") }
        mapping.identity = try strings(value["identity"], "\(path).identity")
        mapping.dateFormat = try string(value["dateFormat"], "\(path).dateFormat").map(DateFormat.init(name:))
        mapping.keyStyle = try keyStyle(value["keyStyle"], "\(path).keyStyle")
        mapping.mapsUnlisted = try bool(value["mapsUnlisted"], "\(path).mapsUnlisted") ?? true
        mapping.ignored = try strings(value["ignore"], "\(path).ignore") ?? []
        if let attributes = value["attributes"] {
            for (attribute, spec) in try object(attributes, "\(path).attributes") {
                let place = "\(path).attributes.\(attribute)"
                if case .object = spec {
                    try checkKnownKeys(spec, ["key", "date", "transformer", "coerce"], place)
                    mapping.attributes.append(
                        AttributeMap(
                            attribute, keyPaths: try strings(spec["key"], "\(place).key") ?? [],
                            date: try string(spec["date"], "\(place).date").map(DateFormat.init(name:)),
                            transformer: try string(spec["transformer"], "\(place).transformer"),
                            coercesText: try bool(spec["coerce"], "\(place).coerce") ?? true))
                } else {
                    mapping.attributes.append(AttributeMap(attribute, keyPaths: try strings(spec, place) ?? []))
                }
            }
        }
        if let relationships = value["relationships"] {
            for (relationship, spec) in try object(relationships, "\(path).relationships") {
                let place = "\(path).relationships.\(relationship)"
                if case .object = spec {
                    try checkKnownKeys(spec, ["key", "policy", "relatedBy"], place)
                    var policy = RelationshipPolicy.replace
                    if let name = try string(spec["policy"], "\(place).policy") {
                        guard let known = RelationshipPolicy(name: name) else {
                            throw fail("\(place).policy", "policy \(name): replace, merge or mergeAndPrune was expected")
                        }
                        policy = known
                    }
                    mapping.relationships.append(
                        RelationshipMap(
                            relationship, keyPaths: try strings(spec["key"], "\(place).key") ?? [], policy: policy,
                            relatedBy: try strings(spec["relatedBy"], "\(place).relatedBy")))
                } else {
                    mapping.relationships.append(RelationshipMap(relationship, keyPaths: try strings(spec, place) ?? []))
                }
            }
        }
        return mapping
    }
}
