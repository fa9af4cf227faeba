import Cairn

/// One object as the JSON object `dump` and `query` print: entity, object ID (URI), attribute
/// values, relationship targets as URIs.
enum ObjectJSON {
    static func line(_ object: ManagedObject, store: Store) throws -> String {
        var values: [(String, String)] = []
        for attribute in object.entity.attributes where !attribute.isTransient {
            values.append((attribute.name, JSONText.value(try object.value(forKey: attribute.name, as: Value.self))))
        }
        var links: [(String, String)] = []
        for relationship in object.entity.relationships {
            let targets =
                relationship.isToMany
                ? try object.objects(forKey: relationship.name) : try object.object(forKey: relationship.name).map { [$0] } ?? []
            let uris = targets.map { JSONText.string(store.uri(for: $0.objectID)) }
            links.append((relationship.name, relationship.isToMany ? "[" + uris.joined(separator: ",") + "]" : uris.first ?? "null"))
        }
        return JSONText.object([
            ("entity", JSONText.string(object.entity.name)), ("id", JSONText.string(store.uri(for: object.objectID))),
            ("values", JSONText.object(values)), ("relationships", JSONText.object(links))
        ])
    }
}
