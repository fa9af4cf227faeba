import Foundation

/// Reads the `contents` XML of an Xcode Core Data model (`.xcdatamodel`) into a ``Model``.
///
/// Everything that describes data is read: entities (abstract, parent, renaming identifier,
/// element ID, fetch indexes, uniqueness constraints, user info), attributes of every type
/// (composite ones with the model's `<composite>` types, transient ones of undefined type),
/// relationships, configurations. Layout (`elements`), code generation and fetch request
/// templates are ignored; `syncable`, `usesScalarValueType` and the like describe generated
/// classes and have no meaning here.
///
/// A model loads as Core Data loads it: what Core Data's tools accept is not refused. A default
/// the model compiler converts is converted, one it leaves out is left out; an inverse that does
/// not point back is left out; a composite type without elements, an R-tree fetch index and a
/// fetched property are left out. Each of these, and each validation rule or derivation Cairn
/// does not apply, is one entry of ``Model/warnings`` naming the file, line and property.
struct XcodeModelReader {
    let file: String?
    /// What was loaded otherwise than written, as Core Data loads it.
    private(set) var warnings: [ModelWarning] = []

    init(file: String?) { self.file = file }

    mutating func read(_ data: Data) throws(ModelError) -> Model {
        let root = try XMLNode.parse(
            data, file: file,
            limits: XMLNode.Limits(rootChildren: ["entity": Model.maximumEntityCount, "composite": Model.maximumCompositeCount]))
        guard root.name == "model" else {
            throw failure("the root element is <\(root.name)>, expected <model> (an Xcode model's contents file)", root)
        }
        let (composites, empty) = try readComposites(root)
        var entities: [Entity] = []
        for node in root.children(named: "entity") { entities.append(try entity(node, emptyComposites: empty)) }
        var configurations: [String: [String]] = [:]
        for node in root.children(named: "configuration") {
            let name = try required("name", node)
            guard configurations[name] == nil else { throw failure("a second configuration named \(name)", node) }
            configurations[name] = try values("name", of: node.children(named: "memberEntity"))
        }
        do {
            let (kept, unmatched) = try Model.withoutUnmatchedInverses(entities, composites: composites)
            for problem in unmatched {
                let located = locate(problem, in: root)
                let name = [problem.entity, problem.property].compactMap { $0 }.joined(separator: ".")
                warn(
                    "\(problem.message): \(name) is loaded without an inverse, so that setting it never changes the other end (Core Data would change a relationship that another one has as its inverse)",
                    line: located.line, element: located.element, entity: problem.entity, property: problem.property)
            }
            var model = try Model(kept, userInfo: try userInfo(root), configurations: configurations, composites: composites)
            model.warnings = warnings
            for node in root.children(named: "entity") {
                if let name = node.attributes["name"], let className = node.attributes["representedClassName"], !className.isEmpty {
                    model.classNames[name] = className
                }
            }
            return model
        } catch {
            throw locate(error, in: root)
        }
    }

    /// The model's composite types. One without elements (or whose elements are all of such
    /// types) holds nothing, as in Core Data: it is left out, with the attributes and elements
    /// of its type, each with a warning. Returns the names left out.
    private mutating func readComposites(_ root: XMLNode) throws(ModelError) -> ([Composite], Set<String>) {
        var read: [(node: XMLNode, name: String, elements: [(node: XMLNode, attribute: Attribute)])] = []
        for node in root.children(named: "composite") {
            let name = try required("name", node)
            var elements: [(XMLNode, Attribute)] = []
            for child in node.children(named: "attribute") { elements.append((child, try attribute(child, entity: name))) }
            read.append((node, name, elements))
        }
        // "" stands for a composite attribute that names no composite type.
        var empty: Set<String> = [""]
        var changed = true
        while changed {
            changed = false
            for index in read.indices where !empty.contains(read[index].name) {
                var kept: [(node: XMLNode, attribute: Attribute)] = []
                for element in read[index].elements {
                    if case .composite(let inner) = element.attribute.type, empty.contains(inner) {
                        warnEmptyComposite(inner, element.node, entity: read[index].name, property: element.attribute.name)
                    } else {
                        kept.append(element)
                    }
                }
                read[index].elements = kept
                if kept.isEmpty {
                    empty.insert(read[index].name)
                    warn(
                        "composite \(read[index].name) has no elements: it holds nothing, as in Core Data, and is left out", line: read[index].node.line,
                        element: read[index].node.name, property: read[index].name)
                    changed = true
                }
            }
        }
        let composites = read.filter { !empty.contains($0.name) }.map { Composite($0.name, elements: $0.elements.map(\.attribute)) }
        return (composites, empty)
    }

    private mutating func warnEmptyComposite(_ type: String, _ node: XMLNode, entity: String, property: String) {
        let what = type.isEmpty ? "names no composite type" : "is of composite type \(type), which has no elements"
        warn(
            "the attribute \(what): it holds nothing, as in Core Data, and is left out", line: node.line, element: node.name, entity: entity, property: property
        )
    }

    private mutating func warn(_ message: String, line: Int?, element: String?, entity: String? = nil, property: String? = nil) {
        warnings.append(ModelWarning(message, entity: entity, property: property, file: file, line: line, element: element))
    }

    // MARK: Elements

    private mutating func entity(_ node: XMLNode, emptyComposites: Set<String>) throws(ModelError) -> Entity {
        let name = try required("name", node)
        var entity = Entity(
            name, parent: node.attributes["parentEntity"], abstract: try flag("isAbstract", node) ?? false,
            userInfo: try userInfo(node), renamingIdentifier: node.attributes["renamingIdentifier"],
            elementID: node.attributes["elementID"])
        for child in node.children {
            switch child.name {
            case "attribute":
                let attribute = try attribute(child, entity: name)
                if case .composite(let type) = attribute.type, emptyComposites.contains(type) {
                    warnEmptyComposite(type, child, entity: name, property: attribute.name)
                } else {
                    entity.attributes.append(attribute)
                }
            case "relationship": entity.relationships.append(try relationship(child, entity: name))
            case "fetchIndex":
                if let index = try fetchIndex(child, entity: name) { entity.fetchIndexes.append(index) }
            case "uniquenessConstraints":
                for constraint in child.children(named: "uniquenessConstraint") {
                    entity.uniquenessConstraints.append(try values("value", of: constraint.children(named: "constraint")))
                }
            case "fetchedProperty":
                warn(
                    "fetched property \(child.attributes["name"] ?? "") is not loaded: Cairn has no fetched properties (fetch with its predicate instead)",
                    line: child.line, element: child.name, entity: name, property: child.attributes["name"])
            default: continue
            }
        }
        return entity
    }

    private mutating func attribute(_ node: XMLNode, entity: String) throws(ModelError) -> Attribute {
        let name = try required("name", node)
        let transient = try flag("transient", node) ?? false
        // A transient attribute may leave its type undefined (Xcode then writes none).
        let typeName = transient ? node.attributes["attributeType"] ?? "Undefined" : try required("attributeType", node)
        let type: AttributeType
        if typeName == "Undefined" && transient {
            type = .undefined
        } else if typeName == "Composite" {
            type = .composite(node.attributes["composite"] ?? "")
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
        switch XcodeDefaultValue.read(
            text: node.attributes["defaultValueString"], interval: node.attributes["defaultDateTimeInterval"], type: type, typeName: typeName)
        {
        case .none: break
        case .value(let value): defaultValue = value
        case .converted(let value, let note):
            defaultValue = value
            warn(note, line: node.line, element: node.name, entity: entity, property: name)
        case .dropped(let note): warn(note, line: node.line, element: node.name, entity: entity, property: name)
        }
        warnOfWhatIsNotKept(node, entity: entity, property: name)
        return Attribute(
            name, type, optional: try flag("optional", node) ?? false, default: defaultValue,
            indexed: try flag("indexed", node) ?? false, transient: transient,
            userInfo: try userInfo(node), renamingIdentifier: node.attributes["renamingIdentifier"],
            elementID: node.attributes["elementID"], customClassName: node.attributes["customClassName"])
    }

    /// Validation rules and derivations describe values Core Data checks or computes; Cairn
    /// stores what it is given, so an attribute with either is named.
    private mutating func warnOfWhatIsNotKept(_ node: XMLNode, entity: String, property: String) {
        let rules = ["minValueString", "maxValueString", "minDateTimeInterval", "maxDateTimeInterval", "regularExpressionString"]
            .filter { node.attributes[$0] != nil }
        if !rules.isEmpty {
            warn(
                "validation rules (\(rules.joined(separator: ", "))) are not checked: Cairn saves values outside them", line: node.line,
                element: node.name, entity: entity, property: property)
        }
        if node.attributes["derived"] == "YES" {
            warn(
                "a derived attribute (\(node.attributes["derivationExpression"] ?? "")) is stored as an ordinary one: Cairn does not compute it",
                line: node.line, element: node.name, entity: entity, property: property)
        }
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

    /// A fetch index; nil for an R-tree index, which Cairn does not keep (fetches find the same
    /// objects without it), with a warning.
    private mutating func fetchIndex(_ node: XMLNode, entity: String) throws(ModelError) -> FetchIndex? {
        let name = try required("name", node)
        var elements: [FetchIndex.Element] = []
        for element in node.children(named: "fetchIndexElement") {
            if element.attributes["type"] == "RTree" {
                warn(
                    "fetch index \(name) is an R-tree index, which Cairn does not keep: it is left out (fetches find the same objects without it)",
                    line: node.line, element: node.name, entity: entity)
                return nil
            }
            if let type = element.attributes["type"], type != "Binary" {
                throw failure(
                    "fetch index element of type \(type) is not supported (only Binary and RTree)", element,
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
    /// Loads a model from the `contents` XML of an Xcode model (`.xcdatamodel`), as Core Data
    /// loads it; what it loads otherwise than written is in ``warnings``.
    ///
    /// - Parameters:
    ///   - data: The bytes of the `contents` file.
    ///   - file: the path to name in errors and warnings.
    /// - Throws: ``ModelError`` with the line and element at fault.
    public init(xcodeModelXML data: Data, file: String? = nil) throws(ModelError) {
        var reader = XcodeModelReader(file: file)
        self = try reader.read(data)
    }
}
