import CairnLog
import CairnSupport

/// Turns values of a type the store does not know into bytes for a `transformable` attribute,
/// and back (Core Data's value transformers).
///
/// ```swift
/// struct RGB: Sendable { var r, g, b: UInt8 }
/// struct RGBTransformer: AttributeTransformer {
///     func bytes(from value: RGB) throws -> [UInt8] { [value.r, value.g, value.b] }
///     func value(from bytes: [UInt8]) throws -> RGB {
///         guard bytes.count == 3 else { throw MyError.badColor }
///         return RGB(r: bytes[0], g: bytes[1], b: bytes[2])
///     }
/// }
/// AttributeTransformers.register(RGBTransformer(), name: "RGB")   // before use
/// try shelf.setTransformedValue(RGB(r: 1, g: 2, b: 3), forKey: "color")
/// let color: RGB? = try shelf.transformedValue(forKey: "color")
/// ```
public protocol AttributeTransformer: Sendable {
    /// The type it transforms.
    associatedtype Transformed
    /// The bytes to store for a value.
    func bytes(from value: Transformed) throws -> [UInt8]
    /// The value stored bytes stand for.
    func value(from bytes: [UInt8]) throws -> Transformed
}

/// The registry of transformers, by the names models give them.
public enum AttributeTransformers {
    struct Erased: Sendable {
        let encode: @Sendable (Any) throws -> [UInt8]?
        let decode: @Sendable ([UInt8]) throws -> Any
    }

    static let registry = Protected<[String: Erased]>([:])

    /// Registers (or replaces) the transformer for attributes of type `.transformable(name)`.
    public static func register<T: AttributeTransformer>(_ transformer: T, name: String) {
        let erased = Erased(
            encode: { value in try (value as? T.Transformed).map(transformer.bytes(from:)) },
            decode: { bytes in try transformer.value(from: bytes) })
        registry.withLock { $0[name] = erased }
    }

    static func transformer(named name: String, entity: String, property: String) throws -> Erased {
        guard let transformer = registry.withLock({ $0[name] }) else {
            throw StoreError(.unknownName, "no transformer is registered under the name \(name)", entity: entity, property: property)
        }
        return transformer
    }
}

extension ManagedObject {
    private func transformerName(_ key: String) throws -> String {
        guard let position = entity.attributePosition(key), case .transformable(let name) = entity.attributes[position].type else {
            throw StoreError(.typeMismatch, "\(entity.name).\(key) is not a transformable attribute", entity: entity.name, property: key)
        }
        return name
    }

    /// A transformable attribute's value, through its registered transformer.
    public func transformedValue<V>(forKey key: String, as type: V.Type = V.self) throws -> V? {
        let transformer = try AttributeTransformers.transformer(named: try transformerName(key), entity: entity.name, property: key)
        guard case .binary(let bytes) = try value(forKey: key, as: Value.self) else { return nil }
        guard let value = try transformer.decode(bytes) as? V else {
            throw StoreError(.typeMismatch, "\(entity.name).\(key) does not hold a \(V.self)", entity: entity.name, property: key)
        }
        return value
    }

    /// Sets a transformable attribute through its registered transformer (nil clears it).
    public func setTransformedValue<V>(_ value: V?, forKey key: String) throws {
        guard let value else { return try setValue(.null, forKey: key) }
        let transformer = try AttributeTransformers.transformer(named: try transformerName(key), entity: entity.name, property: key)
        guard let bytes = try transformer.encode(value) else {
            throw StoreError(.typeMismatch, "the transformer of \(entity.name).\(key) does not take a \(V.self)", entity: entity.name, property: key)
        }
        try setValue(.binary(bytes), forKey: key)
    }
}
