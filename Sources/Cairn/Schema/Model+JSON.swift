import Foundation

/// Cairn's own JSON model format (docs/MODEL-FORMAT.md): what `cairn create --model` reads and
/// what a store keeps in its log, so that the store opens without the app's code.
extension Model {
    /// Loads a model from its JSON form.
    public init(jsonData: Data) throws {
        let file: ModelFile
        do {
            file = try JSONDecoder().decode(ModelFile.self, from: jsonData)
        } catch let error as DecodingError {
            throw ModelError(.invalidFormat, "the model JSON does not decode: \(Self.describe(error))")
        }
        guard file.format == ModelFile.formatName else {
            throw ModelError(.invalidFormat, "\"format\" is \"\(file.format)\", expected \"\(ModelFile.formatName)\"")
        }
        guard (1...ModelFile.newestVersion).contains(file.version) else {
            throw ModelError(
                .invalidFormat,
                "model format version \(file.version) is not supported (this version of Cairn reads 1 to \(ModelFile.newestVersion)): the model was written by a newer version of Cairn"
            )
        }
        let composites = try (file.composites ?? []).map { form in
            Composite(form.name, elements: try form.elements.map { try $0.attribute(entity: form.name) })
        }
        try self.init(
            try file.entities.map { try $0.entity() }, userInfo: file.userInfo ?? [:], configurations: file.configurations ?? [:],
            composites: composites)
    }

    /// The model's JSON form (keys sorted, so equal models give equal bytes).
    public func jsonData(pretty: Bool = true) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys] : [.sortedKeys]
        let file = ModelFile(
            format: ModelFile.formatName, version: usesVersion2 ? 2 : 1, entities: entities.map(ModelFile.EntityForm.init),
            userInfo: userInfo.isEmpty ? nil : userInfo, configurations: configurations.isEmpty ? nil : configurations,
            composites: composites.isEmpty
                ? nil : composites.map { ModelFile.CompositeForm(name: $0.name, elements: $0.elements.map(ModelFile.AttributeForm.init)) })
        return (try? encoder.encode(file)) ?? Data()
    }

    /// Whether the model needs format version 2 (composite or undefined attributes), which a
    /// reader of version 1 refuses by its number rather than by an unknown type.
    private var usesVersion2: Bool {
        !composites.isEmpty || entities.contains { $0.attributes.contains { $0.type == .undefined } }
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        }
        switch error {
        case .keyNotFound(let key, let context): return "missing key \"\(key.stringValue)\" at \(path(context).isEmpty ? "the top" : path(context))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "\(context.debugDescription) at \(path(context).isEmpty ? "the top" : path(context))"
        @unknown default: return "\(error)"
        }
    }
}

/// The JSON shape of a model file.
private struct ModelFile: Codable {
    static let formatName = "cairn-model"
    /// 1: the first form. 2: adds composites and the undefined type; written only by models that
    /// use them, so that every other model stays readable by readers of 1.
    static let newestVersion = 2
    var format: String
    var version: Int
    var entities: [EntityForm]
    var userInfo: [String: String]?
    var configurations: [String: [String]]?
    var composites: [CompositeForm]?

    struct CompositeForm: Codable {
        var name: String
        var elements: [AttributeForm]
    }

    struct FetchIndexForm: Codable {
        struct ElementForm: Codable {
            var attribute: String
            var ascending: Bool?
        }
        var name: String
        var elements: [ElementForm]
    }

    struct EntityForm: Codable {
        var name: String
        var parent: String?
        var abstract: Bool?
        var attributes: [AttributeForm]?
        var relationships: [RelationshipForm]?
        var uniquenessConstraints: [[String]]?
        var userInfo: [String: String]?
        var fetchIndexes: [FetchIndexForm]?
        var renamingIdentifier: String?
        var elementID: String?

        init(_ entity: Entity) {
            name = entity.name
            parent = entity.parent
            abstract = entity.isAbstract
            attributes = entity.attributes.map(AttributeForm.init)
            relationships = entity.relationships.map(RelationshipForm.init)
            uniquenessConstraints = entity.uniquenessConstraints
            userInfo = entity.userInfo.isEmpty ? nil : entity.userInfo
            fetchIndexes =
                entity.fetchIndexes.isEmpty
                ? nil
                : entity.fetchIndexes.map { index in
                    FetchIndexForm(name: index.name, elements: index.elements.map { .init(attribute: $0.attribute, ascending: $0.ascending) })
                }
            renamingIdentifier = entity.renamingIdentifier
            elementID = entity.elementID
        }

        func entity() throws -> Entity {
            Entity(
                name, parent: parent, abstract: abstract ?? false,
                attributes: try (attributes ?? []).map { try $0.attribute(entity: name) },
                relationships: try (relationships ?? []).map { try $0.relationship(entity: name) },
                uniquenessConstraints: uniquenessConstraints ?? [], userInfo: userInfo ?? [:],
                fetchIndexes: (fetchIndexes ?? []).map { index in
                    FetchIndex(index.name, index.elements.map { FetchIndex.Element($0.attribute, ascending: $0.ascending ?? true) })
                },
                renamingIdentifier: renamingIdentifier, elementID: elementID)
        }
    }

    struct AttributeForm: Codable {
        var name: String
        var type: String
        var transformer: String?
        var composite: String?
        var optional: Bool?
        var `default`: DefaultValue?
        var indexed: Bool?
        var transient: Bool?
        var userInfo: [String: String]?
        var renamingIdentifier: String?
        var elementID: String?
        var customClassName: String?

        init(_ attribute: Attribute) {
            name = attribute.name
            if case .transformable(let name) = attribute.type {
                type = "transformable"
                transformer = name
            } else if case .composite(let name) = attribute.type {
                type = "composite"
                composite = name
            } else {
                type = attribute.type.description
            }
            optional = attribute.isOptional
            `default` = attribute.defaultValue.map(DefaultValue.init)
            indexed = attribute.isIndexed ? true : nil
            transient = attribute.isTransient ? true : nil
            userInfo = attribute.userInfo.isEmpty ? nil : attribute.userInfo
            renamingIdentifier = attribute.renamingIdentifier
            elementID = attribute.elementID
            customClassName = attribute.customClassName
        }

        func attribute(entity: String) throws -> Attribute {
            let types: [String: AttributeType] = [
                "string": .string, "integer16": .integer16, "integer32": .integer32,
                "integer64": .integer64, "double": .double, "float": .float,
                "decimal": .decimal, "boolean": .boolean, "date": .date,
                "binary": .binary, "uuid": .uuid, "uri": .uri, "undefined": .undefined
            ]
            let attributeType: AttributeType
            if type == "transformable" {
                guard let transformer else {
                    throw ModelError(.invalidFormat, "a transformable attribute needs \"transformer\"", entity: entity, property: name)
                }
                attributeType = .transformable(transformer: transformer)
            } else if type == "composite" {
                guard let composite else {
                    throw ModelError(.invalidFormat, "a composite attribute needs \"composite\" (the composite's name)", entity: entity, property: name)
                }
                attributeType = .composite(composite)
            } else if let known = types[type] {
                attributeType = known
            } else {
                throw ModelError(.invalidFormat, "unknown attribute type \"\(type)\"", entity: entity, property: name)
            }
            return Attribute(
                name, attributeType, optional: optional ?? true,
                default: try `default`?.value(for: attributeType, entity: entity, property: name),
                indexed: indexed ?? false, transient: transient ?? false, userInfo: userInfo ?? [:],
                renamingIdentifier: renamingIdentifier, elementID: elementID, customClassName: customClassName)
        }
    }

    struct RelationshipForm: Codable {
        var name: String
        var destination: String
        var inverse: String?
        var toMany: Bool?
        var ordered: Bool?
        var deleteRule: String?
        var optional: Bool?
        var minCount: Int?
        var maxCount: Int?
        var userInfo: [String: String]?
        var renamingIdentifier: String?
        var elementID: String?

        init(_ relationship: Relationship) {
            name = relationship.name
            destination = relationship.destination
            inverse = relationship.inverse
            toMany = relationship.isToMany
            ordered = relationship.isOrdered ? true : nil
            deleteRule = relationship.deleteRule.rawValue
            optional = relationship.isOptional
            minCount = relationship.minimumCount
            maxCount = relationship.maximumCount
            userInfo = relationship.userInfo.isEmpty ? nil : relationship.userInfo
            renamingIdentifier = relationship.renamingIdentifier
            elementID = relationship.elementID
        }

        func relationship(entity: String) throws -> Relationship {
            let rule =
                try deleteRule.map { name in
                    guard let rule = DeleteRule(rawValue: name) else {
                        throw ModelError(.invalidFormat, "unknown delete rule \"\(name)\"", entity: entity, property: self.name)
                    }
                    return rule
                } ?? .nullify
            return Relationship(
                name, to: destination, inverse: inverse,
                toMany ?? false ? .toMany(ordered: ordered ?? false) : .toOne, deleteRule: rule,
                optional: optional ?? true, minimumCount: minCount, maximumCount: maxCount, userInfo: userInfo ?? [:],
                renamingIdentifier: renamingIdentifier, elementID: elementID)
        }
    }

    /// A default value, written as the JSON type that fits its attribute type.
    enum DefaultValue: Codable {
        case text(String)
        case number(Double)
        case integer(Int64)
        case flag(Bool)

        init(_ value: Value) {
            switch value {
            case .null: self = .text("")
            case .string(let text), .uri(let text): self = .text(text)
            case .integer(let number): self = .integer(number)
            case .double(let number): self = .number(number)
            case .float(let number): self = .number(Double(number))
            case .decimal(let number): self = .text(number.description)
            case .boolean(let flag): self = .flag(flag)
            case .date(let date): self = .number(date.timeIntervalSinceReferenceDate)
            case .binary(let bytes): self = .text(Data(bytes).base64EncodedString())
            case .uuid(let id): self = .text(id.uuidString)
            }
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let flag = try? container.decode(Bool.self) {
                self = .flag(flag)
            } else if let integer = try? container.decode(Int64.self) {
                self = .integer(integer)
            } else if let number = try? container.decode(Double.self) {
                self = .number(number)
            } else {
                self = .text(try container.decode(String.self))
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .text(let text): try container.encode(text)
            case .number(let number): try container.encode(number)
            case .integer(let number): try container.encode(number)
            case .flag(let flag): try container.encode(flag)
            }
        }

        func value(for type: AttributeType, entity: String, property: String) throws -> Value {
            let wrong = ModelError(.invalidDefault, "default \(self) does not fit type \(type)", entity: entity, property: property)
            switch (type, self) {
            case (.string, .text(let text)): return .string(text)
            case (.uri, .text(let text)): return .uri(text)
            case (.integer16, .integer(let number)), (.integer32, .integer(let number)), (.integer64, .integer(let number)):
                return .integer(number)
            case (.double, .number(let number)): return .double(number)
            case (.double, .integer(let number)): return .double(Double(number))
            case (.float, .number(let number)): return .float(Float(number))
            case (.float, .integer(let number)): return .float(Float(number))
            case (.decimal, .text(let text)):
                guard let number = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else { throw wrong }
                return .decimal(number)
            case (.boolean, .flag(let flag)): return .boolean(flag)
            case (.date, .number(let seconds)): return .date(Date(timeIntervalSinceReferenceDate: seconds))
            case (.date, .integer(let seconds)): return .date(Date(timeIntervalSinceReferenceDate: Double(seconds)))
            case (.binary, .text(let text)), (.transformable, .text(let text)):
                guard let data = Data(base64Encoded: text) else { throw wrong }
                return .binary(Array(data))
            case (.uuid, .text(let text)):
                guard let id = UUID(uuidString: text) else { throw wrong }
                return .uuid(id)
            default: throw wrong
            }
        }
    }
}
