import Foundation

extension Store {
    /// The store's identity: fixed when the store was created, random for an in-memory store.
    public var identifier: UUID { log?.storeID ?? memoryIdentifier }

    /// An object ID's URI, `cairn://<store identifier>/<Entity>/p<key>`, stable across reopening.
    public func uri(for id: ObjectID) -> String {
        let entity = model.descriptions.indices.contains(id.entity) ? model.descriptions[id.entity].name : "entity\(id.entity)"
        return "cairn://\(identifier.uuidString)/\(entity)/p\(id.key)"
    }

    /// The object ID a URI of ``uri(for:)`` names; nil when the URI is malformed, names another
    /// store, or an entity the model lacks.
    public func objectID(forURI uri: String) -> ObjectID? {
        let prefix = "cairn://"
        guard uri.hasPrefix(prefix) else { return nil }
        let parts = uri.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, UUID(uuidString: String(parts[0])) == identifier,
            let entity = model.entity(named: String(parts[1])),
            parts[2].first == "p", let key = UInt64(parts[2].dropFirst()), key > 0,
            String(key) == String(parts[2].dropFirst())
        else { return nil }
        return ObjectID(entity: entity.index, key: key)
    }
}
