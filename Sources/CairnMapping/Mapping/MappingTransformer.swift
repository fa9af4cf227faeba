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

/// The registry of ``MappingTransformer``s, by name.
public enum MappingTransformers {
    private struct Closures: MappingTransformer {
        let read: @Sendable (JSONValue) throws -> Value
        let write: @Sendable (Value) throws -> JSONValue
        func value(from json: JSONValue) throws -> Value { try read(json) }
        func json(from value: Value) throws -> JSONValue { try write(value) }
    }

    private static let registry = Protected<[String: any MappingTransformer]>([:])

    /// Registers (or replaces) a transformer under `name`.
    public static func register(_ transformer: any MappingTransformer, name: String) {
        registry.withLock { $0[name] = transformer }
    }

    /// Registers (or replaces) a transformer made of two closures under `name`.
    public static func register(
        name: String, import read: @escaping @Sendable (JSONValue) throws -> Value, export write: @escaping @Sendable (Value) throws -> JSONValue
    ) {
        register(Closures(read: read, write: write), name: name)
    }

    /// The transformer registered under `name`.
    public static func transformer(named name: String) -> (any MappingTransformer)? {
        registry.withLock { $0[name] }
    }
}
