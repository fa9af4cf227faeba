import CairnSupport
import Cairn

/// Turns the JSON of one attribute into its value on import, and back on export, registered by
/// name (Groot's `JSONTransformerName`, Sync's `sync.valueTransformer`, Modelmatic's transformable
/// attributes, ``AttributeMap/transformer``).
///
/// ```swift
/// MappingTransformers.register(name: "CommaList",
///     import: { json in guard case .string(let text) = json else { throw … }; return .string(text) },
///     export: { value in … })
/// ```
public protocol MappingTransformer: Sendable {
    /// The attribute value a JSON value stands for.
    func value(from json: JSONValue) throws -> Value
    /// The JSON a value is written as.
    func json(from value: Value) throws -> JSONValue
}

/// The registry of ``MappingTransformer``s, by name. The ``BuiltInTransformer``s (`json`,
/// `base64`, `numberFromString`) are found without being registered; one registered under the
/// same name is used instead.
public enum MappingTransformers {
    private struct Closures: MappingTransformer {
        let read: @Sendable (JSONValue) throws -> Value
        let write: @Sendable (Value) throws -> JSONValue
        func value(from json: JSONValue) throws -> Value { try read(json) }
        func json(from value: Value) throws -> JSONValue { try write(value) }
    }

    private static let registry = Protected<[String: any MappingTransformer]>([:])

    /// Registers (or replaces) a transformer under `name` (in place of the built-in of that
    /// name, if any).
    public static func register(_ transformer: any MappingTransformer, name: String) {
        registry.withLock { $0[name] = transformer }
    }

    /// Registers (or replaces) a transformer made of two closures under `name`.
    public static func register(
        name: String, import read: @escaping @Sendable (JSONValue) throws -> Value, export write: @escaping @Sendable (Value) throws -> JSONValue
    ) {
        register(Closures(read: read, write: write), name: name)
    }

    /// The transformer registered under `name`, else the built-in of that name (for the first
    /// attribute type it serves: `json` as text, `base64` as bytes, `numberFromString` as a decimal).
    public static func transformer(named name: String) -> (any MappingTransformer)? {
        if let registered = registry.withLock({ $0[name] }) { return registered }
        return BuiltInTransformer(rawValue: name).flatMap { $0.transformer(for: $0.firstType) }
    }

    /// The transformer that reads and writes attribute `property` of `entity`, of `type`: the
    /// one registered under `name`, else the built-in of that name bound to `type`; nil when
    /// neither is there.
    ///
    /// - Throws: ``MappingError/Code/invalidMapping`` when a built-in is named for a type it
    ///   does not serve.
    static func transformer(
        named name: String, for type: AttributeType, entity: String, property: String
    ) throws(MappingError)
        -> (any MappingTransformer)?
    {
        if let registered = registry.withLock({ $0[name] }) { return registered }
        guard let builtIn = BuiltInTransformer(rawValue: name) else { return nil }
        guard let bound = builtIn.transformer(for: type) else {
            throw MappingError(
                .invalidMapping, "the built-in transformer \(name) takes \(builtIn.types); \(entity).\(property) is \(type)", entity: entity,
                property: property)
        }
        return bound
    }
}
