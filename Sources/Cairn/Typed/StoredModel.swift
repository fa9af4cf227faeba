/// A plain Swift type kept as objects of an entity: its `Codable` properties are the entity's
/// attributes, matched by name (AsyncCoreData's plain-model design, without mapper blocks).
///
/// A value is the whole object: ``ObjectContext/upsert(_:)`` sets every attribute the type has,
/// so a property that is nil clears the stored value. Attributes the type does not declare are
/// left as they are.
///
/// ```swift
/// struct Author: StoredModel {
///     var name: String
///     var born: Int?
/// }
/// try context.upsert(Author(name: "Ursula K. Le Guin", born: 1929))   // by the entity's uniqueness constraint
/// try await context.save()
/// let authors = try context.fetch(Author.self, sortKeys: [SortKey("name")])
/// ```
///
/// Supported property types: `String`, integers, `Double`, `Float`, `Decimal`, `Bool`, `Date`,
/// `Data`, `[UInt8]`, `UUID`, `URL`, optionals of these, and `RawRepresentable` enums of them.
/// A composite attribute's elements map to properties named by their key path through
/// `CodingKeys` (`case latitude = "location.latitude"`); a nested struct for the whole
/// composite is not supported.
/// Rename or reshape with `CodingKeys` or a hand-written `init(from:)` / `encode(to:)`.
public protocol StoredModel: Codable, Sendable {
    /// The entity the type is stored as. Default: the type's name.
    static var entityName: String { get }
}

extension StoredModel {
    public static var entityName: String { String(describing: Self.self) }
}

extension ObjectContext {
    /// Inserts `value` as a new object, or updates the object that has the same values of the
    /// entity's first uniqueness constraint. The change is saved by the next ``save()``.
    ///
    /// - Returns: the object inserted or updated.
    /// - Throws: ``StoreError`` for a property the entity lacks or a value of the wrong type.
    @discardableResult
    public func upsert<T: StoredModel>(_ value: T) throws -> ManagedObject {
        let entity = try model.require(T.entityName)
        let values = try AttributeEncoder.encode(value, entity: entity)
        // Check every value first, so that a bad one leaves no half-filled object behind.
        for (name, value) in values {
            guard let position = entity.attributePosition(name) else {
                throw StoreError(.unknownName, "\(entity.name) has no attribute \(name)", entity: entity.name, property: name)
            }
            let type = entity.attributes[position].type
            guard value.converted(to: type) != nil else {
                throw StoreError(.typeMismatch, "\(entity.name).\(name): \(value.misfit(type))", entity: entity.name, property: name)
            }
        }
        var object: ManagedObject?
        if let constraint = entity.uniqueness.first {
            let conditions = try constraint.names.map { name -> FetchPredicate in
                guard let value = values[name], value != .null else {
                    throw StoreError(
                        .missingValue, "\(entity.name).\(name) is part of the uniqueness constraint and must be set to upsert",
                        entity: entity.name, property: name)
                }
                return .equal(name, value)
            }
            object = try fetchFirst(FetchRequest(entity.name, predicate: .and(conditions)))
        }
        let target = try object ?? insert(entity.name)
        for (name, value) in values.sorted(by: { $0.key < $1.key }) { try target.setValue(value, forKey: name) }
        return target
    }

    /// The objects of `T`'s entity that match, decoded as `T`.
    public func fetch<T: StoredModel>(
        _ type: T.Type, predicate: FetchPredicate? = nil, sortKeys: [SortKey] = [],
        offset: Int = 0, limit: Int? = nil
    ) throws -> [T] {
        try fetch(FetchRequest(T.entityName, predicate: predicate, sortKeys: sortKeys, fetchOffset: offset, fetchLimit: limit))
            .map { try $0.decode(as: T.self) }
    }
}

extension ManagedObject {
    /// The object's attributes decoded as `T`.
    public func decode<T: StoredModel>(as type: T.Type) throws -> T {
        guard let context else {
            throw StoreError(.invalidObject, "the context of \(entity.name) \(objectID) is gone", entity: entity.name, objects: [objectID])
        }
        guard let view = context.view(of: objectID) else {  // one read of the object, not one per attribute
            throw StoreError(.invalidObject, "\(entity.name) \(objectID) was deleted", entity: entity.name, objects: [objectID])
        }
        var values: [String: Value] = [:]
        for (position, attribute) in entity.attributes.enumerated() {
            if case .attribute(let value) = view[position] { values[attribute.name] = value } else { values[attribute.name] = .null }
        }
        return try AttributeDecoder.decode(T.self, from: values, entity: entity.name)
    }
}
