import CairnSupport
import Foundation

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

    /// What one key leads to (a class: found once per key read, and a struct would be copied).
    final class Entry: Sendable {
        let targets: [Target]
        let child: KeyTree?
        /// How many things read the key's value: its targets, and its child for an object.
        let consumers: Int
        /// The one target of a key that has one and no child (most keys): read without walking
        /// an array.
        let only: Target?

        init(targets: [Target], child: KeyTree?) {
            self.targets = targets
            self.child = child
            consumers = targets.count + (child == nil ? 0 : 1)
            only = consumers == 1 ? targets.first : nil
        }
    }

    let entries: [String: Entry]
    /// The keys as bytes, each filed with its entry's index in `slots`, so that a key is found
    /// from its bytes in the input without making a String.
    private let table: ByteKeyTable
    private let slots: [Entry]
    /// Per slot, its entry's only target (nil: several, or a child): read per member without
    /// touching the entry object (no reference count changes on the hot path).
    private let onlyTargets: [Target?]

    init(_ entries: [String: Entry]) {
        self.entries = entries
        var table = ByteKeyTable(capacity: entries.count)
        var slots: [Entry] = []
        for (key, entry) in entries {
            Array(key.utf8).withUnsafeBytes { table.insert($0, slots.count) }
            slots.append(entry)
        }
        self.table = table
        self.slots = slots
        onlyTargets = slots.map(\.only)
    }

    /// The entry of the key whose (unescaped) UTF-8 bytes these are.
    func entry(_ bytes: UnsafeRawBufferPointer) -> Entry? {
        table.value(bytes).map { slots[$0] }
    }

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

extension KeyTree {
    /// The next member of the object the scanner is in whose key the tree maps: its entry, its
    /// key as a path step, and the first token of its value (unmapped members are skipped); nil
    /// at the object's `}`.
    func nextMember(_ scanner: inout JSONScanner) throws -> (entry: Entry, key: JSONPath.Step, value: JSONScanner.Token)? {
        while let token = try scanner.next() {
            guard case .key(let keyText) = token else { return nil }  // `}`
            let keyBytes = scanner.bytes.piece(keyText.range)
            guard let valueToken = try scanner.next() else { return nil }
            guard let found = keyText.hasEscapes ? entries[scanner.string(keyText)] : entry(keyBytes) else {
                try scanner.skip(valueToken)
                continue
            }
            return (found, .text(keyBytes, escaped: keyText.hasEscapes), valueToken)
        }
        return nil
    }

    /// What ``nextMember(_:)`` gives, for a key with one target (most keys) given as the
    /// target alone, without its entry: the flat reader's path.
    enum Member {
        /// A key with one target and no child.
        case only(Target)
        /// Any other key.
        case entry(Entry)
    }

    /// The next member of the object whose `{` was read: what its key leads to, the key, and
    /// its value's first token; nil at the `}`. Members whose keys the tree lacks are skipped.
    func nextMemberTarget(_ scanner: inout JSONScanner) throws -> (member: Member, key: JSONPath.Step, value: JSONScanner.Token)? {
        while let token = try scanner.next() {
            guard case .key(let keyText) = token else { return nil }  // `}`
            let keyBytes = scanner.bytes.piece(keyText.range)
            guard let valueToken = try scanner.next() else { return nil }
            let member: Member
            if keyText.hasEscapes {
                guard let found = entries[scanner.string(keyText)] else {
                    try scanner.skip(valueToken)
                    continue
                }
                member = found.only.map(Member.only) ?? .entry(found)
            } else {
                guard let slot = table.value(keyBytes) else {
                    try scanner.skip(valueToken)
                    continue
                }
                member = onlyTargets[slot].map(Member.only) ?? .entry(slots[slot])
            }
            return (member, .text(keyBytes, escaped: keyText.hasEscapes), valueToken)
        }
        return nil
    }
}
