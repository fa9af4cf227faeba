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
    /// The next member of the object whose `{` was read: its key's entry, the key, and its
    /// value's first token; nil at the `}`. Members whose keys the tree lacks are skipped.
    func nextMember(_ scanner: inout JSONScanner) throws -> (entry: Entry, key: JSONPath.Step, value: JSONScanner.Token)? {
        guard let (found, key, value) = try nextKnown(&scanner) else { return nil }
        switch found {
        case .slot(let slot): return (slots[slot], key, value)
        case .entry(let entry): return (entry, key, value)
        }
    }

    /// What ``nextMemberTarget(_:)`` gives: for a key with one target (most keys), the target
    /// alone, without its entry (the flat encoder reads most members this way).
    enum Member: Sendable {
        /// A key with one target and no child.
        case only(Target)
        /// Any other key.
        case entry(Entry)
    }

    /// Like ``nextMember(_:)``, with a key of one target given as that target: read without
    /// touching the entry object (no reference count changes per member).
    func nextMemberTarget(_ scanner: inout JSONScanner) throws -> (member: Member, key: JSONPath.Step, value: JSONScanner.Token)? {
        guard let (found, key, value) = try nextKnown(&scanner) else { return nil }
        switch found {
        case .slot(let slot): return (onlyTargets[slot].map(Member.only) ?? .entry(slots[slot]), key, value)
        case .entry(let entry): return (entry.only.map(Member.only) ?? .entry(entry), key, value)
        }
    }

    /// Where a member's key was found: a slot (a key read from its bytes), or an entry (a key
    /// with escapes, decoded).
    private enum Found {
        case slot(Int)
        case entry(Entry)
    }

    /// The next member whose key the tree has (the others are skipped); nil at the `}`.
    private func nextKnown(_ scanner: inout JSONScanner) throws -> (found: Found, key: JSONPath.Step, value: JSONScanner.Token)? {
        while let token = try scanner.next() {
            guard case .key(let keyText) = token else { return nil }  // `}`
            let keyBytes = scanner.bytes.piece(keyText.range)
            guard let valueToken = try scanner.next() else { return nil }
            let found: Found
            if keyText.hasEscapes {
                guard let entry = entries[scanner.string(keyText)] else {
                    try scanner.skip(valueToken)
                    continue
                }
                found = .entry(entry)
            } else {
                guard let slot = table.value(keyBytes) else {
                    try scanner.skip(valueToken)
                    continue
                }
                found = .slot(slot)
            }
            return (found, .text(keyBytes, escaped: keyText.hasEscapes), valueToken)
        }
        return nil
    }
}
