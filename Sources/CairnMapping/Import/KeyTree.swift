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
    /// The keys as bytes, in an open-addressing table (FNV-1a), so that a key is found from its
    /// bytes in the input without making a String. The keys lie end to end in one buffer.
    private let table: [Int32]
    private let keyBytes: [UInt8]
    private let keyStarts: [Int]
    private let slots: [Entry]

    init(_ entries: [String: Entry]) {
        self.entries = entries
        var size = 8
        while size < entries.count * 2 { size *= 2 }
        var table = [Int32](repeating: -1, count: size)
        var keyBytes: [UInt8] = []
        var keyStarts: [Int] = [0]
        var slots: [Entry] = []
        for (key, entry) in entries {
            let bytes = Array(key.utf8)
            var index = bytes.withUnsafeBytes { Self.hash($0) } & (size - 1)
            while table[index] >= 0 { index = (index + 1) & (size - 1) }
            table[index] = Int32(slots.count)
            keyBytes += bytes
            keyStarts.append(keyBytes.count)
            slots.append(entry)
        }
        self.table = table
        self.keyBytes = keyBytes
        self.keyStarts = keyStarts
        self.slots = slots
    }

    private static func hash(_ bytes: UnsafeRawBufferPointer) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return Int(truncatingIfNeeded: hash ^ (hash >> 29))
    }

    /// The entry of the key whose (unescaped) UTF-8 bytes these are.
    func entry(_ bytes: UnsafeRawBufferPointer) -> Entry? {
        let mask = table.count - 1
        var index = Self.hash(bytes) & mask
        return keyBytes.withUnsafeBytes { keys -> Entry? in
            while true {
                let slot = Int(table[index])
                guard slot >= 0 else { return nil }
                let start = keyStarts[slot]
                let length = keyStarts[slot + 1] - start
                if length == bytes.count {
                    if length == 0 { return slots[slot] }
                    if let base = keys.baseAddress, let other = bytes.baseAddress, memcmp(base + start, other, length) == 0 { return slots[slot] }
                }
                index = (index + 1) & mask
            }
        }
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
}
