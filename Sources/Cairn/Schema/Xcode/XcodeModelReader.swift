import Foundation

/// Reads the `contents` XML of an Xcode Core Data model (`.xcdatamodel`) into a ``Model``.
///
/// Everything that describes data is read: entities (abstract, parent, renaming identifier,
/// element ID, fetch indexes, uniqueness constraints, user info), attributes of every type
/// (composite ones with the model's `<composite>` types, transient ones of undefined type),
/// relationships, configurations. Layout (`elements`), code generation and fetch request
/// templates are ignored; `syncable`, `usesScalarValueType` and the like describe generated
/// classes and have no meaning here.
struct XcodeModelReader {
    let file: String?

    func read(_ data: Data) throws(ModelError) -> Model {
        let root = try XMLNode.parse(data, file: file)
        guard root.name == "model" else {
            throw failure("the root element is <\(root.name)>, expected <model> (an Xcode model's contents file)", root)
        }
        var entities: [Entity] = []
        for node in root.children(named: "entity") { entities.append(try entity(node)) }
        var configurations: [String: [String]] = [:]
        for node in root.children(named: "configuration") {
            let name = try required("name", node)
            guard configurations[name] == nil else { throw failure("a second configuration named \(name)", node) }
            configurations[name] = try values("name", of: node.children(named: "memberEntity"))
        }
        var composites: [Composite] = []
        for node in root.children(named: "composite") {
            let name = try required("name", node)
            var elements: [Attribute] = []
            for child in node.children(named: "attribute") { elements.append(try attribute(child, entity: name)) }
            composites.append(Composite(name, elements: elements))
        }
        do {
            return try Model(entities, userInfo: try userInfo(root), configurations: configurations, composites: composites)
        } catch {
            throw locate(error, in: root)
        }
    }

    // MARK: Elements

    private func entity(_ node: XMLNode) throws(ModelError) -> Entity {
        let name = try required("name", node)
        var entity = Entity(
            name, parent: node.attributes["parentEntity"], abstract: try flag("isAbstract", node) ?? false,
            userInfo: try userInfo(node), renamingIdentifier: node.attributes["renamingIdentifier"],
            elementID: node.attributes["elementID"])
        for child in node.children {
            switch child.name {
            case "attribute": entity.attributes.append(try attribute(child, entity: name))
            case "relationship": entity.relationships.append(try relationship(child, entity: name))
            case "fetchIndex": entity.fetchIndexes.append(try fetchIndex(child, entity: name))
            case "uniquenessConstraints":
                for constraint in child.children(named: "uniquenessConstraint") {
                    entity.uniquenessConstraints.append(try values("value", of: constraint.children(named: "constraint")))
                }
            default: continue
            }
        }
        return entity
    }

    private func attribute(_ node: XMLNode, entity: String) throws(ModelError) -> Attribute {
        let name = try required("name", node)
        let transient = try flag("transient", node) ?? false
        // A transient attribute may leave its type undefined (Xcode then writes none).
        let typeName = transient ? node.attributes["attributeType"] ?? "Undefined" : try required("attributeType", node)
        let type: AttributeType
        if typeName == "Undefined" && transient {
            type = .undefined
        } else if typeName == "Composite" {
            type = .composite(try required("composite", node))
        } else if typeName == "Transformable" {
            type = .transformable(transformer: node.attributes["valueTransformerName"] ?? XcodeAttributeType.defaultTransformer)
        } else if let known = XcodeAttributeType.type(named: typeName) {
            type = known
        } else if let reason = XcodeAttributeType.unsupported[typeName] {
            throw failure(reason, node, code: .unsupportedType, entity: entity, property: name)
        } else {
            throw failure("unknown attributeType \"\(typeName)\"", node, code: .unsupportedType, entity: entity, property: name)
        }
        var defaultValue: Value?
        if let text = node.attributes["defaultValueString"] ?? node.attributes["defaultDateTimeInterval"] {
            guard let value = XcodeAttributeType.value(text, for: type) else {
                throw failure("default value \"\(text)\" is not a valid \(typeName)", node, code: .invalidDefault, entity: entity, property: name)
            }
            defaultValue = value
        }
        return Attribute(
            name, type, optional: try flag("optional", node) ?? false, default: defaultValue,
            indexed: try flag("indexed", node) ?? false, transient: transient,
            userInfo: try userInfo(node), renamingIdentifier: node.attributes["renamingIdentifier"],
            elementID: node.attributes["elementID"], customClassName: node.attributes["customClassName"])
    }

    private func relationship(_ node: XMLNode, entity: String) throws(ModelError) -> Relationship {
        let name = try required("name", node)
        let rules: [String: DeleteRule] = ["Nullify": .nullify, "Cascade": .cascade, "Deny": .deny, "No Action": .noAction]
        let ruleName = node.attributes["deletionRule"] ?? "Nullify"
        guard let rule = rules[ruleName] else {
            throw failure("unknown deletionRule \"\(ruleName)\" (expected Nullify, Cascade, Deny or No Action)", node, entity: entity, property: name)
        }
        let toMany = try flag("toMany", node) ?? false
        return Relationship(
            name, to: try required("destinationEntity", node), inverse: node.attributes["inverseName"],
            toMany ? .toMany(ordered: try flag("ordered", node) ?? false) : .toOne, deleteRule: rule,
            optional: try flag("optional", node) ?? false,
            minimumCount: try count("minCount", node, entity: entity, property: name),
            maximumCount: try count("maxCount", node, entity: entity, property: name),
            userInfo: try userInfo(node), renamingIdentifier: node.attributes["renamingIdentifier"],
            elementID: node.attributes["elementID"])
    }

    private func fetchIndex(_ node: XMLNode, entity: String) throws(ModelError) -> FetchIndex {
        let name = try required("name", node)
        var elements: [FetchIndex.Element] = []
        for element in node.children(named: "fetchIndexElement") {
            if let type = element.attributes["type"], type != "Binary" {
                throw failure(
                    "fetch index element of type \(type) is not supported (only Binary)", element,
                    code: .invalidFetchIndex, entity: entity)
            }
            let order = element.attributes["order"] ?? "ascending"
            guard order == "ascending" || order == "descending" else {
                throw failure("order \"\(order)\" is neither ascending nor descending", element, code: .invalidFetchIndex, entity: entity)
            }
            let property = try required("property", element)
            elements.append(FetchIndex.Element(property, ascending: order == "ascending"))
        }
        return FetchIndex(name, elements)
    }

    private func userInfo(_ node: XMLNode) throws(ModelError) -> [String: String] {
        let elements = node.children(named: "userInfo")
        if elements.count > 1 { throw failure("<\(node.name)> has a second <userInfo>", elements[1]) }
        var info: [String: String] = [:]
        for entry in elements.first?.children(named: "entry") ?? [] {
            let key = try required("key", entry)
            guard info.updateValue(entry.attributes["value"] ?? "", forKey: key) == nil else {
                throw failure("user info has a second entry for the key \(key)", entry)
            }
        }
        return info
    }

    // MARK: Attribute values

    private func required(_ attribute: String, _ node: XMLNode) throws(ModelError) -> String {
        guard let value = node.attributes[attribute], !value.isEmpty else {
            throw failure("<\(node.name)> has no \(attribute)", node, entity: nil)
        }
        return value
    }

    private func values(_ attribute: String, of nodes: [XMLNode]) throws(ModelError) -> [String] {
        var values: [String] = []
        for node in nodes { values.append(try required(attribute, node)) }
        return values
    }

    private func flag(_ attribute: String, _ node: XMLNode) throws(ModelError) -> Bool? {
        switch node.attributes[attribute] {
        case nil: return nil
        case "YES": return true
        case "NO": return false
        case let other?: throw failure("\(attribute)=\"\(other)\" is neither YES nor NO", node, entity: nil)
        }
    }

    private func count(_ attribute: String, _ node: XMLNode, entity: String, property: String) throws(ModelError) -> Int? {
        guard let text = node.attributes[attribute] else { return nil }
        guard let number = Int(text), number >= 0 else {
            throw failure("\(attribute)=\"\(text)\" is not a count", node, code: .invalidCount, entity: entity, property: property)
        }
        return number
    }

    // MARK: Errors

    private func failure(
        _ message: String, _ node: XMLNode, code: ModelError.Code = .invalidFormat,
        entity: String? = nil, property: String? = nil
    ) -> ModelError {
        ModelError(code, message, entity: entity, property: property, file: file, line: node.line, element: node.name)
    }

    /// Adds the line and element of the entity or property a model check named.
    private func locate(_ error: ModelError, in root: XMLNode) -> ModelError {
        var located = error
        located.file = file
        guard let entityName = error.entity,
            let entity = root.children(named: "entity").first(where: { $0.attributes["name"] == entityName })
        else { return located }
        located.line = entity.line
        located.element = entity.name
        guard let property = error.property else { return located }
        var candidates = entity.children.filter { ["attribute", "relationship"].contains($0.name) && $0.attributes["name"] == property }
        if error.code == .unknownConstraintAttribute {
            candidates = entity.children(named: "uniquenessConstraints").flatMap { $0.children(named: "uniquenessConstraint") }
                .flatMap { $0.children(named: "constraint") }.filter { $0.attributes["value"] == property }
        }
        // A duplicate is the second element of the name.
        if let node = error.code == .duplicateName ? candidates.last : candidates.first {
            located.line = node.line
            located.element = node.name
        }
        return located
    }
}

extension Model {
    /// Loads a model from the `contents` XML of an Xcode model (`.xcdatamodel`).
    ///
    /// - Parameter file: the path to name in errors.
    /// - Throws: ``ModelError`` with the line and element at fault.
    public init(xcodeModelXML data: Data, file: String? = nil) throws(ModelError) {
        self = try XcodeModelReader(file: file).read(data)
    }
}
