/// The JSON keys of one entity's mapping as a tree: a key leads to the properties it fills and,
/// for key paths (`pricing.retail_price`), to the keys inside its object.
final class KeyTree: Sendable {
    /// What a key fills.
    enum Target: Sendable {
        /// The attribute at this index of the entity's resolved attributes; `rank` is the key
        /// path's place among the attribute's fallbacks (lower wins).
        case attribute(Int, rank: Int)
        /// The relationship at this index of the entity's resolved relationships.
        case relationship(Int, rank: Int)
    }

    struct Entry: Sendable {
        var targets: [Target] = []
        var child: KeyTree?
    }

    let entries: [String: Entry]

    init(_ entries: [String: Entry]) { self.entries = entries }

    /// The tree of an entity's mapping.
    convenience init(_ entity: ResolvedEntity) {
        var paths: [([String], Target)] = []
        for (index, attribute) in entity.attributes.enumerated() {
            for (rank, path) in attribute.keyPaths.enumerated() { paths.append((path, .attribute(index, rank: rank))) }
        }
        for (index, relationship) in entity.relationships.enumerated() {
            for (rank, path) in relationship.keyPaths.enumerated() { paths.append((path, .relationship(index, rank: rank))) }
        }
        self.init(Self.build(paths[...]).entries)
    }

    private static func build(_ paths: ArraySlice<([String], Target)>) -> KeyTree {
        var targets: [String: [Target]] = [:]
        var deeper: [String: [([String], Target)]] = [:]
        var order: [String] = []
        for (path, target) in paths {
            guard let first = path.first else { continue }
            if targets[first] == nil && deeper[first] == nil { order.append(first) }
            if path.count == 1 {
                targets[first, default: []].append(target)
            } else {
                deeper[first, default: []].append((Array(path.dropFirst()), target))
            }
        }
        var entries: [String: Entry] = [:]
        for key in order {
            entries[key] = Entry(targets: targets[key] ?? [], child: deeper[key].map { build($0[...]) })
        }
        return KeyTree(entries)
    }
}
