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
            // A rename of the attribute or of the element (Xcode writes its Renaming ID as
            // elementID) renames the stored element: its identifier is the path under the old
            // names, which migration matches with the old version's element.
            let renamed = [renamingIdentifier, elementID, element.renamingIdentifier, element.elementID].contains { $0?.isEmpty == false }
            let leaf = Attribute(
                path, element.type, optional: isOptional || element.isOptional, default: element.defaultValue,
                indexed: element.isIndexed, transient: isTransient || element.isTransient, userInfo: element.userInfo,
                renamingIdentifier: renamed ? formerName + "." + element.formerName : nil, customClassName: element.customClassName)
            leaves += try leaf.expanded(composites, entity: entity)
        }
        return leaves
    }
}

extension Attribute {
    /// The name the attribute had in the version it was renamed from: its renaming identifier,
    /// or Xcode's Renaming ID (written as `elementID`), or its name.
    fileprivate var formerName: String {
        [renamingIdentifier, elementID].compactMap { $0 }.first { !$0.isEmpty } ?? name
    }
}

extension Model {
    /// The most composite types a model may have.
    static let maximumCompositeCount = 4096
    /// The most stored elements one composite type may expand to (nested ones included):
    /// composites nest, and a forged model must not make a model of millions of attributes.
    static let maximumCompositeElements = 4096

    /// Checks the composite types: valid, unique names; elements with valid, unique names;
    /// composite elements naming composites of the model, without cycles.
    static func checkComposites(_ composites: [Composite]) throws(ModelError) -> [String: Composite] {
        guard composites.count <= maximumCompositeCount else {
            throw ModelError(.invalidFormat, "the model has \(composites.count) composites; at most \(maximumCompositeCount) are allowed")
        }
        var byName: [String: Composite] = [:]
        for composite in composites {
            guard isValidName(composite.name) else {
                throw ModelError(.invalidName, "composite name \(shown(composite.name)) is not valid", property: clipped(composite.name))
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
                        .duplicateName, "composite \(composite.name): element name \(shown(element.name)) is not valid or not unique",
                        property: composite.name + "." + clipped(element.name))
                }
                if element.type == .undefined && !element.isTransient {
                    throw ModelError(
                        .unsupportedType, "composite \(composite.name): an undefined element must be transient",
                        property: composite.name + "." + element.name)
                }
            }
        }
        // Depth first, each composite once: its stored element count, memoized.
        var counts: [String: Int] = [:]
        func count(_ name: String, _ visiting: [String]) throws(ModelError) -> Int {
            if let known = counts[name] { return known }
            guard !visiting.contains(name) else {
                throw ModelError(.invalidFormat, "composite \(name) contains itself (\((visiting + [name]).joined(separator: " → ")))", property: name)
            }
            var total = 0
            for element in byName[name]?.elements ?? [] {
                guard case .composite(let inner) = element.type else {
                    total += 1
                    continue
                }
                guard byName[inner] != nil else {
                    throw ModelError(
                        .unsupportedType, "composite \(name): element \(element.name) is of composite type \(inner), which is not in the model",
                        property: name + "." + element.name)
                }
                total += try count(inner, visiting + [name])
                guard total <= maximumCompositeElements else {
                    throw ModelError(
                        .invalidFormat, "composite \(name) expands to more than \(maximumCompositeElements) stored elements", property: name)
                }
            }
            counts[name] = total
            return total
        }
        for composite in composites { _ = try count(composite.name, []) }
        return byName
    }
}
