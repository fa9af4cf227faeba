import Cairn
import CairnMapping

/// One object as the JSON object `dump` and `query` print: entity, object ID (URI), attribute
/// values (rendered by ``ValueJSON``, as export writes them with the default mapping),
/// relationship targets as URIs.
enum ObjectJSON {
    static func line(_ object: ManagedObject, store: Store) throws -> String {
        var values: [(key: String, value: JSONValue)] = []
        for attribute in object.entity.attributes where !attribute.isTransient {
            values.append((attribute.name, ValueJSON.json(try object.value(forKey: attribute.name, as: Value.self))))
        }
        var links: [(key: String, value: JSONValue)] = []
        for relationship in object.entity.relationships {
            let targets =
                relationship.isToMany
                ? try object.objects(forKey: relationship.name) : try object.object(forKey: relationship.name).map { [$0] } ?? []
            let uris = targets.map { JSONValue.string(store.uri(for: $0.objectID)) }
            links.append((relationship.name, relationship.isToMany ? .array(uris) : uris.first ?? .null))
        }
        return JSONWriter.text(
            .object([
                ("entity", .string(object.entity.name)), ("id", .string(store.uri(for: object.objectID))),
                ("values", .object(values)), ("relationships", .object(links))
            ]))
    }
}
