import Cairn

/// Picks each record's entity from the value of one of its keys: a type field (`"type": "car"`
/// → `Car`, a sub-entity of the entity imported) or the entity of each record of a file that
/// mixes entities (a Django fixture's `"model": "chinook.album"` → `Album`).
///
/// ```swift
/// EntityDiscriminator(key: "type", entities: ["car": "Car", "truck": "Truck"])
/// ```
///
/// A value is looked up in ``entities`` first; a value not listed there names an entity itself
/// when ``matchesEntityNames`` is on: compared case-insensitively, after its last dot
/// (`chinook.album` and `Album` both name `Album`). A record without the key is an object of the
/// entity imported (an error when the import names none); a value that names no entity, or an
/// entity the import may not make, is an error naming the key's JSON path and the record's
/// byte offset.
public struct EntityDiscriminator: Sendable, Hashable {
    /// The dotted key path of the value that names the entity.
    public var key: String
    /// Entity names by value.
    public var entities: [String: String]
    /// Whether a value ``entities`` does not list names an entity by its name (any case, an
    /// `app.` prefix dropped).
    public var matchesEntityNames: Bool

    /// A discriminator reading `key`.
    public init(key: String, entities: [String: String] = [:], matchesEntityNames: Bool = true) {
        self.key = key
        self.entities = entities
        self.matchesEntityNames = matchesEntityNames
    }

    /// A Django fixture's: `"model": "app.modelname"` names the entity.
    public static let django = EntityDiscriminator(key: "model")
}

/// A discriminator checked against the model: its key path split, each value's entity index.
final class ResolvedDiscriminator: Sendable {
    let path: [String]
    let key: String
    private let byValue: [String: Int]
    /// Entity indexes by lowercased name, when values may name entities (-1: names that differ
    /// only in case, which match only as written: ``exactNames``).
    private let byName: [String: Int]?
    /// Entity indexes by name as written, for names that differ only in case.
    private let exactNames: [String: Int]

    /// Checks `discriminator` against `model`: every entity it lists must exist and, with a
    /// `family` (an entity mapping's discriminator), be that entity or one of its sub-entities.
    init(_ discriminator: EntityDiscriminator, model: Model, family: EntityDescription?) throws(MappingError) {
        let owner = family?.name
        path = try MappingResolver.split([discriminator.key], owner ?? "the mapping", "discriminator")[0]
        key = discriminator.key
        var byValue: [String: Int] = [:]
        for (value, name) in discriminator.entities {
            guard let entity = model.entity(named: name) else {
                throw MappingError(
                    .unknownName, "the discriminator names entity \(name) for \(key) \"\(value)\", which the model does not have", entity: owner ?? name)
            }
            if let family, !family.family.contains(entity.index) {
                throw MappingError(
                    .invalidMapping, "the discriminator of \(family.name) names \(name), which is neither \(family.name) nor one of its sub-entities",
                    entity: family.name)
            }
            byValue[value] = entity.index
        }
        self.byValue = byValue
        if discriminator.matchesEntityNames {
            // Names that differ only in case match only as written (marked -1 here).
            var byName: [String: Int] = [:]
            for entity in model.descriptions where family?.family.contains(entity.index) ?? true {
                let lowered = entity.name.lowercased()
                byName[lowered] = byName[lowered] == nil ? entity.index : -1
            }
            self.byName = byName
            exactNames = Dictionary(
                model.descriptions.filter { byName[$0.name.lowercased()] == -1 && (family?.family.contains($0.index) ?? true) }.map { ($0.name, $0.index) },
                uniquingKeysWith: { first, _ in first })
        } else {
            byName = nil
            exactNames = [:]
        }
    }

    /// The entity index `value` names; nil when it names none.
    func entity(for value: String) -> Int? {
        if let index = byValue[value] { return index }
        guard let byName else { return nil }
        let name = value.split(separator: ".", omittingEmptySubsequences: false).last.map(String.init) ?? value
        if let index = byName[name.lowercased()], index >= 0 { return index }
        return exactNames[name]
    }

    /// The discriminator's value in the object whose `{` the scanner just read (a string, or a
    /// number's or boolean's text), found by a copy of the scanner; nil when the object lacks it.
    func value(in scanner: JSONScanner) throws(JSONSyntaxError) -> String? {
        var probe = scanner
        return try Self.find(path[...], &probe)
    }

    private static func find(_ path: ArraySlice<String>, _ probe: inout JSONScanner) throws(JSONSyntaxError) -> String? {
        guard let first = path.first else { return nil }
        while let token = try probe.next() {
            guard case .key(let name) = token, let value = try probe.next() else { return nil }
            guard probe.string(name, equals: first) else {
                try probe.skip(value)
                continue
            }
            if path.count > 1 { return value == .beginObject ? try find(path.dropFirst(), &probe) : nil }
            switch value {
            case .string(let text): return probe.string(text)
            case .number(let number): return probe.text(number)
            case .boolean(let flag): return flag ? "true" : "false"
            default: return nil
            }
        }
        return nil
    }
}
