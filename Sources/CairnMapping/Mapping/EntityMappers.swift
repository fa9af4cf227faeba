import CairnSupport

/// The registry of entity mappers, by name: each picks, from a record's JSON, the entity its
/// object belongs to (the entity imported, or one of its sub-entities), as Groot's
/// `entityMapperName` annotation names one.
///
/// ```swift
/// EntityMappers.register(name: "Abstract") { json in
///     switch json["type"] { case .string("A"): "ConcreteA"; case .string("B"): "ConcreteB"; default: nil }
/// }
/// ```
public enum EntityMappers {
    /// Picks a record's entity from its JSON: the name of the entity annotated or of one of its
    /// sub-entities; nil for the annotated entity itself.
    public typealias Mapper = @Sendable (JSONValue) throws -> String?

    private static let registry = Protected<[String: Mapper]>([:])

    /// Registers (or replaces) a mapper under `name`.
    public static func register(name: String, _ mapper: @escaping Mapper) {
        registry.withLock { $0[name] = mapper }
    }

    /// Removes the mapper registered under `name`.
    public static func unregister(name: String) {
        registry.withLock { $0[name] = nil }
    }

    /// The mapper registered under `name`.
    public static func mapper(named name: String) -> Mapper? {
        registry.withLock { $0[name] }
    }
}
