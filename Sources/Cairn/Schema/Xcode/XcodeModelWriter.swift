import Foundation

/// Writes a ``Model`` as the `contents` XML of an Xcode model, in the shape Xcode writes it.
struct XcodeModelWriter {
    private var lines: [String] = []

    static func write(_ model: Model) throws(ModelError) -> Data {
        try checkRepresentable(model)
        var writer = XcodeModelWriter()
        writer.lines.append(#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>"#)
        writer.lines.append(
            #"<model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">"#
        )
        for entity in model.entities { writer.entity(entity) }
        for composite in model.composites {
            writer.open("composite", [("name", composite.name)], depth: 1)
            for element in composite.elements { writer.attribute(element) }
            writer.close("composite", depth: 1)
        }
        for (name, members) in model.configurations.sorted(by: { $0.key < $1.key }) {
            writer.open("configuration", [("name", name)], depth: 1, empty: members.isEmpty)
            guard !members.isEmpty else { continue }
            for member in members { writer.open("memberEntity", [("name", member)], depth: 2, empty: true) }
            writer.close("configuration", depth: 1)
        }
        writer.userInfo(model.userInfo, depth: 1)
        writer.lines.append("</model>")
        return Data((writer.lines.joined(separator: "\n") + "\n").utf8)
    }

    private mutating func entity(_ entity: Entity) {
        let fields: [(String, String?)] = [
            ("name", entity.name), ("representedClassName", entity.name), ("isAbstract", entity.isAbstract ? "YES" : nil),
            ("parentEntity", entity.parent), ("renamingIdentifier", entity.renamingIdentifier),
            ("elementID", entity.elementID), ("syncable", "YES")
        ]
        open("entity", fields, depth: 1)
        for attribute in entity.attributes { self.attribute(attribute) }
        for relationship in entity.relationships { self.relationship(relationship) }
        for index in entity.fetchIndexes {
            open("fetchIndex", [("name", index.name)], depth: 2)
            for element in index.elements {
                open(
                    "fetchIndexElement",
                    [
                        ("property", element.attribute), ("type", "Binary"),
                        ("order", element.ascending ? "ascending" : "descending")
                    ], depth: 3, empty: true)
            }
            close("fetchIndex", depth: 2)
        }
        if !entity.uniquenessConstraints.isEmpty {
            open("uniquenessConstraints", [], depth: 2)
            for constraint in entity.uniquenessConstraints {
                open("uniquenessConstraint", [], depth: 3)
                for name in constraint { open("constraint", [("value", name)], depth: 4, empty: true) }
                close("uniquenessConstraint", depth: 3)
            }
            close("uniquenessConstraints", depth: 2)
        }
        userInfo(entity.userInfo, depth: 2)
        close("entity", depth: 1)
    }

    private mutating func attribute(_ attribute: Attribute) {
        var transformer: String?
        var composite: String?
        if case .transformable(let name) = attribute.type { transformer = name }
        if case .composite(let name) = attribute.type { composite = name }
        let fields: [(String, String?)] = [
            ("name", attribute.name), ("optional", attribute.isOptional ? "YES" : nil),
            ("transient", attribute.isTransient ? "YES" : nil), ("indexed", attribute.isIndexed ? "YES" : nil),
            // Xcode writes no type for an undefined (transient) attribute.
            ("attributeType", attribute.type == .undefined ? nil : XcodeAttributeType.name(of: attribute.type)),
            ("composite", composite),
            // Xcode keeps a date's default as seconds since 2001 in its own attribute.
            ("defaultValueString", attribute.type == .date ? nil : attribute.defaultValue.map(XcodeAttributeType.text)),
            ("defaultDateTimeInterval", attribute.type == .date ? attribute.defaultValue.map(XcodeAttributeType.text) : nil),
            ("valueTransformerName", transformer), ("customClassName", attribute.customClassName),
            ("renamingIdentifier", attribute.renamingIdentifier), ("elementID", attribute.elementID)
        ]
        element("attribute", fields, userInfo: attribute.userInfo)
    }

    private mutating func relationship(_ relationship: Relationship) {
        let rules: [DeleteRule: String] = [.nullify: "Nullify", .cascade: "Cascade", .deny: "Deny", .noAction: "No Action"]
        let fields: [(String, String?)] = [
            ("name", relationship.name), ("optional", relationship.isOptional ? "YES" : nil),
            ("toMany", relationship.isToMany ? "YES" : nil), ("ordered", relationship.isOrdered ? "YES" : nil),
            ("minCount", relationship.minimumCount.map(String.init)),
            ("maxCount", (relationship.maximumCount ?? (relationship.isToMany ? nil : 1)).map(String.init)),
            ("deletionRule", rules[relationship.deleteRule]), ("destinationEntity", relationship.destination),
            ("inverseName", relationship.inverse), ("inverseEntity", relationship.inverse == nil ? nil : relationship.destination),
            ("renamingIdentifier", relationship.renamingIdentifier), ("elementID", relationship.elementID)
        ]
        element("relationship", fields, userInfo: relationship.userInfo)
    }

    /// A property element: empty, or holding its user info.
    private mutating func element(_ name: String, _ fields: [(String, String?)], userInfo: [String: String]) {
        open(name, fields, depth: 2, empty: userInfo.isEmpty)
        guard !userInfo.isEmpty else { return }
        self.userInfo(userInfo, depth: 3)
        close(name, depth: 2)
    }

    private mutating func userInfo(_ info: [String: String], depth: Int) {
        guard !info.isEmpty else { return }
        open("userInfo", [], depth: depth)
        for (key, value) in info.sorted(by: { $0.key < $1.key }) {
            open("entry", [("key", key), ("value", value)], depth: depth + 1, empty: true)
        }
        close("userInfo", depth: depth)
    }

    private mutating func open(_ name: String, _ fields: [(String, String?)], depth: Int, empty: Bool = false) {
        let attributes = fields.compactMap { key, value in value.map { " \(key)=\"\(Self.escape($0))\"" } }.joined()
        lines.append(String(repeating: "    ", count: depth) + "<\(name)\(attributes)" + (empty ? "/>" : ">"))
    }

    private mutating func close(_ name: String, depth: Int) {
        lines.append(String(repeating: "    ", count: depth) + "</\(name)>")
    }

    /// Whether XML 1.0 can hold the text: no control characters but tab, line feed and carriage
    /// return, no U+FFFE or U+FFFF (not even as character references).
    static func isRepresentable(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { scalar in
            scalar.value >= 0x20 ? scalar.value != 0xFFFE && scalar.value != 0xFFFF : [0x09, 0x0A, 0x0D].contains(scalar.value)
        }
    }

    /// Refuses a model with text XML cannot hold, naming where it is.
    private static func checkRepresentable(_ model: Model) throws(ModelError) {
        func check(_ texts: [String?], entity: String?, property: String?) throws(ModelError) {
            for case let text? in texts where !isRepresentable(text) {
                throw ModelError(.invalidFormat, "\(text.debugDescription) holds a character XML 1.0 cannot represent", entity: entity, property: property)
            }
        }
        func texts(_ info: [String: String]) -> [String?] { info.flatMap { [$0.key, $0.value] } }
        try check(texts(model.userInfo) + model.configurations.keys.map { $0 }, entity: nil, property: nil)
        let compositeElements = model.composites.flatMap { composite in composite.elements.map { (composite.name, $0) } }
        for (composite, element) in compositeElements {
            try check(
                texts(element.userInfo) + [element.renamingIdentifier, element.elementID, element.customClassName],
                entity: nil, property: composite + "." + element.name)
        }
        for entity in model.entities {
            try check(texts(entity.userInfo) + [entity.renamingIdentifier, entity.elementID], entity: entity.name, property: nil)
            for attribute in entity.attributes {
                var transformer: String?
                if case .transformable(let name) = attribute.type { transformer = name }
                try check(
                    texts(attribute.userInfo) + [
                        attribute.renamingIdentifier, attribute.elementID, attribute.customClassName, transformer,
                        attribute.defaultValue.map(XcodeAttributeType.text)
                    ],
                    entity: entity.name, property: attribute.name)
            }
            for relationship in entity.relationships {
                try check(
                    texts(relationship.userInfo) + [relationship.renamingIdentifier, relationship.elementID],
                    entity: entity.name, property: relationship.name)
            }
        }
    }

    private static func escape(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "\n": escaped += "&#10;"
            case "\r": escaped += "&#13;"
            case "\t": escaped += "&#9;"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}

extension Model {
    /// The model as the `contents` XML of an Xcode model (`.xcdatamodel`); loading it with
    /// ``init(xcodeModelXML:file:)`` gives an equal model.
    ///
    /// - Throws: ``ModelError`` naming the entity and property when a text of the model (user
    ///   info, a default, an identifier) holds a character XML 1.0 cannot represent.
    public func xcodeModelXML() throws(ModelError) -> Data {
        try XcodeModelWriter.write(self)
    }
}
