import Foundation

/// Which model userInfo keys a ``Mapping`` reads, so that a model annotated for another library
/// imports with no code. Earlier libraries in ``libraries`` take precedence where two give the
/// same fact (a key, a unique key, a date format) for a property; docs/MAPPING.md lists the keys.
///
/// ```swift
/// var conventions = UserInfoConventions.standard
/// conventions.aliases["api_name"] = "cairn.key"   // the model writes its JSON keys under api_name
/// ```
public struct UserInfoConventions: Sendable, Hashable {
    /// A library whose userInfo keys are read.
    public enum Library: String, Sendable, Hashable, CaseIterable {
        /// Cairn's own: `cairn.key` (comma-separated fallbacks), `cairn.identity`,
        /// `cairn.dateFormat`, `cairn.transformer`, `cairn.policy`, `cairn.relatedBy`,
        /// `cairn.ignore`.
        case cairn
        /// Sync: `sync.remoteKey`, `sync.isPrimaryKey`, `sync.valueTransformer`, and the older
        /// `hyper.*` keys.
        case sync
        /// Groot: `JSONKeyPath`, `JSONTransformerName`, entity `identityAttribute` /
        /// `identityAttributes` and `entityMapperName` (a name registered with ``EntityMappers``);
        /// a mapping of an entity with `JSONDictionaryTransformerName` is refused.
        case groot
        /// Modelmatic: `jsonKeyPath`, the older `externalKeyPath`, and a transformable
        /// attribute's `valueTransformerName`.
        case modelmatic
        /// MagicalRecord: `mappedKeyName` with `mappedKeyName.1`, `.2`… fallbacks,
        /// `relatedByAttribute` (entity: its unique key; relationship: the key it references),
        /// `dateFormat` (`UnixTime` too).
        case magicalRecord
        /// WTAData: `ImportName` (comma-separated fallbacks), entity `PrimaryAttribute`,
        /// `DateFormat`, relationship `MergePolicy`.
        case wtaData
    }

    /// The libraries read, in order of precedence.
    public var libraries: [Library]
    /// userInfo keys of your own, each read as the known key it names (`"api_name": "cairn.key"`).
    public var aliases: [String: String]

    /// Reads `libraries` (in that order of precedence), with `aliases`.
    public init(libraries: [Library] = Library.allCases, aliases: [String: String] = [:]) {
        self.libraries = libraries
        self.aliases = aliases
    }

    /// Every library, in the order ``Library`` lists them.
    public static let standard = UserInfoConventions()
    /// No userInfo is read.
    public static let none = UserInfoConventions(libraries: [])

    /// `userInfo` with aliases renamed to the keys they stand for.
    func normalized(_ userInfo: [String: String]) -> [String: String] {
        guard !aliases.isEmpty else { return userInfo }
        var out = userInfo
        for (alias, key) in aliases { if let value = userInfo[alias], out[key] == nil { out[key] = value } }
        return out
    }

    /// The JSON key paths userInfo gives a property, by the first library that gives any.
    func keyPaths(_ raw: [String: String]) -> [String]? {
        let userInfo = normalized(raw)
        for library in libraries {
            var paths: [String] = []
            switch library {
            case .cairn: paths = Self.list(userInfo["cairn.key"])
            case .sync: paths = [userInfo["sync.remoteKey"] ?? userInfo["hyper.remoteKey"]].compactMap { $0 }
            case .groot: paths = [userInfo["JSONKeyPath"]].compactMap { $0 }
            case .modelmatic: paths = [userInfo["jsonKeyPath"] ?? userInfo["externalKeyPath"]].compactMap { $0 }
            case .magicalRecord:
                if let first = userInfo["mappedKeyName"] { paths.append(first) }
                var number = 1
                while let next = userInfo["mappedKeyName.\(number)"] {
                    paths.append(next)
                    number += 1
                }
            case .wtaData: paths = Self.list(userInfo["ImportName"])
            }
            paths = paths.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            if !paths.isEmpty { return paths }
        }
        return nil
    }

    /// The unique key userInfo gives an entity: its own userInfo, or attributes marked as
    /// primary keys.
    func identity(_ raw: [String: String], attributes: [(name: String, userInfo: [String: String])]) -> [String]? {
        let userInfo = normalized(raw)
        for library in libraries {
            var names: [String] = []
            switch library {
            case .cairn: names = Self.list(userInfo["cairn.identity"])
            case .sync:
                names = attributes.filter { attribute in
                    let info = normalized(attribute.userInfo)
                    return Self.isTrue(info["sync.isPrimaryKey"] ?? info["hyper.isPrimaryKey"])
                }.map(\.name)
            case .groot: names = Self.list(userInfo["identityAttributes"] ?? userInfo["identityAttribute"])
            case .modelmatic: break
            case .magicalRecord: names = Self.list(userInfo["relatedByAttribute"])
            case .wtaData: names = Self.list(userInfo["PrimaryAttribute"])
            }
            if !names.isEmpty { return names }
        }
        return nil
    }

    /// The name of the ``EntityMappers`` entry that picks each record's entity (Groot's
    /// `entityMapperName`).
    func entityMapper(_ raw: [String: String]) -> String? {
        firstValue(raw) { library, userInfo in library == .groot ? userInfo["entityMapperName"] : nil }
    }

    /// Entity userInfo keys of a library read here whose meaning Cairn cannot honour: a mapping
    /// that meets one is refused rather than importing as if it were not there.
    func unsupportedEntityKeys(_ raw: [String: String]) -> [String] {
        let userInfo = normalized(raw)
        var keys: [String] = []
        if libraries.contains(.groot), userInfo["JSONDictionaryTransformerName"] != nil { keys.append("JSONDictionaryTransformerName") }
        return keys
    }

    /// Whether a library that guesses an `<entity>ID` unique key is read.
    var guessesEntityIDKey: Bool { libraries.contains(.wtaData) || libraries.contains(.magicalRecord) }

    /// The date format userInfo gives.
    func dateFormat(_ raw: [String: String]) -> DateFormat? {
        firstValue(raw) { library, userInfo in
            switch library {
            case .cairn: userInfo["cairn.dateFormat"]
            case .magicalRecord: userInfo["dateFormat"]
            case .wtaData: userInfo["DateFormat"]
            case .sync: userInfo["sync.dateFormat"]
            case .groot, .modelmatic: nil
            }
        }.map(DateFormat.init(name:))
    }

    /// The transformer userInfo (or a transformable attribute's transformer name) gives.
    func transformer(_ raw: [String: String], transformable: String?) -> String? {
        firstValue(raw) { library, userInfo in
            switch library {
            case .cairn: userInfo["cairn.transformer"]
            case .sync: userInfo["sync.valueTransformer"] ?? userInfo["hyper.valueTransformer"]
            case .groot: userInfo["JSONTransformerName"]
            case .modelmatic: transformable
            case .magicalRecord, .wtaData: nil
            }
        }
    }

    /// The first non-empty value `value` reads from the normalized userInfo, library by library
    /// in precedence order.
    private func firstValue(_ raw: [String: String], _ value: (Library, [String: String]) -> String?) -> String? {
        let userInfo = normalized(raw)
        for library in libraries {
            if let name = value(library, userInfo), !name.isEmpty { return name }
        }
        return nil
    }

    /// The relationship policy userInfo gives (nil: none, or a name no library knows).
    func policy(_ raw: [String: String]) -> (name: String, policy: RelationshipPolicy?)? {
        let userInfo = normalized(raw)
        for library in libraries {
            let name: String? =
                switch library {
                case .cairn: userInfo["cairn.policy"]
                case .wtaData: userInfo["MergePolicy"]
                default: nil
                }
            if let name { return (name, RelationshipPolicy(name: name)) }
        }
        return nil
    }

    /// The attributes of the destination a relationship's references name.
    func relatedBy(_ raw: [String: String]) -> [String]? {
        let userInfo = normalized(raw)
        for library in libraries {
            let names: [String] =
                switch library {
                case .cairn: Self.list(userInfo["cairn.relatedBy"])
                case .magicalRecord: Self.list(userInfo["relatedByAttribute"])
                default: []
                }
            if !names.isEmpty { return names }
        }
        return nil
    }

    /// Whether userInfo says never to map the property.
    func ignores(_ raw: [String: String]) -> Bool {
        libraries.contains(.cairn) && Self.isTrue(normalized(raw)["cairn.ignore"])
    }

    static func list(_ text: String?) -> [String] {
        (text ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    static func isTrue(_ text: String?) -> Bool {
        guard let text else { return false }
        return ["yes", "true", "1"].contains(text.lowercased())
    }
}
