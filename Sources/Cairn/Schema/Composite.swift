/// A named group of attributes that an entity's attribute holds as one value (Core Data's
/// composite attribute): a `location` attribute of composite type `Location` holds a
/// `latitude` and a `longitude`.
///
/// ```swift
/// let model = try Model(composites: [
///     Composite("Location", elements: [Attribute("latitude", .double), Attribute("longitude", .double)])
/// ]) {
///     Entity("Place") {
///         Attribute("name", .string)
///         Attribute("location", .composite("Location"))
///     }
/// }
/// try place.setValue(48.85, forKey: "location.latitude")
/// let location = try place.compositeValue(forKey: "location")   // ["latitude": 48.85, "longitude": …]
/// ```
///
/// Each element is stored, fetched, sorted, indexed and migrated as an attribute of its own,
/// named by its key path (`location.latitude`); predicates and sort keys name elements the same
/// way. An element may itself be of a composite type (`location.point.x`). An element is
/// optional when it or the composite attribute is, transient when either is.
public struct Composite: Sendable, Hashable {
    /// The composite type's name, unique among the model's composites.
    public var name: String
    /// Its elements, in order.
    public var elements: [Attribute]

    /// Describes a composite type.
    public init(_ name: String, elements: [Attribute]) {
        self.name = name
        self.elements = elements
    }
}

extension Attribute {
    /// The stored attributes an attribute stands for: itself, or for a composite attribute one
    /// per element (nested composites expanded), named by key path.
    func expanded(_ composites: [String: Composite], entity: String) throws(ModelError) -> [Attribute] {
        guard case .composite(let typeName) = type else { return [self] }
        guard let composite = composites[typeName] else {
            throw ModelError(.unsupportedType, "composite type \(typeName) is not in the model", entity: entity, property: name)
        }
        guard defaultValue == nil else {
            throw ModelError(.invalidDefault, "a composite attribute takes no default (its elements do)", entity: entity, property: name)
        }
        var leaves: [Attribute] = []
        for element in composite.elements {
            let path = name + "." + element.name
            let renamed = renamingIdentifier != nil || element.renamingIdentifier != nil
            let leaf = Attribute(
                path, element.type, optional: isOptional || element.isOptional, default: element.defaultValue,
                indexed: element.isIndexed, transient: isTransient || element.isTransient, userInfo: element.userInfo,
                renamingIdentifier: renamed ? (renamingIdentifier ?? name) + "." + (element.renamingIdentifier ?? element.name) : nil,
                elementID: elementID.map { $0 + "." + (element.elementID ?? element.name) }, customClassName: element.customClassName)
            leaves += try leaf.expanded(composites, entity: entity)
        }
        return leaves
    }
}

extension Model {
    /// Checks the composite types: valid, unique names; elements with valid, unique names;
    /// composite elements naming composites of the model, without cycles.
    static func checkComposites(_ composites: [Composite]) throws(ModelError) -> [String: Composite] {
        var byName: [String: Composite] = [:]
        for composite in composites {
            guard isValidName(composite.name) else {
                throw ModelError(.invalidName, "composite name \"\(composite.name)\" is not valid", property: composite.name)
            }
            guard byName.updateValue(composite, forKey: composite.name) == nil else {
                throw ModelError(.duplicateName, "two composites are named \(composite.name)", property: composite.name)
            }
            guard !composite.elements.isEmpty else {
                throw ModelError(.invalidFormat, "composite \(composite.name) has no element", property: composite.name)
            }
            var names: Set<String> = []
            for element in composite.elements {
                guard isValidName(element.name), names.insert(element.name).inserted else {
                    throw ModelError(
                        .duplicateName, "composite \(composite.name): element name \"\(element.name)\" is not valid or not unique",
                        property: composite.name + "." + element.name)
                }
            }
        }
        func check(_ name: String, _ visiting: [String]) throws(ModelError) {
            guard !visiting.contains(name) else {
                throw ModelError(.invalidFormat, "composite \(name) contains itself (\((visiting + [name]).joined(separator: " → ")))", property: name)
            }
            for element in byName[name]?.elements ?? [] {
                guard case .composite(let inner) = element.type else { continue }
                guard byName[inner] != nil else {
                    throw ModelError(
                        .unsupportedType, "composite \(name): element \(element.name) is of composite type \(inner), which is not in the model",
                        property: name + "." + element.name)
                }
                try check(inner, visiting + [name])
            }
        }
        for composite in composites { try check(composite.name, []) }
        return byName
    }
}
