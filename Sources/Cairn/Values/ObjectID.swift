import Foundation

/// The permanent identity of an object in a store: its entity and a number the store gave it.
///
/// Stable across reopening. ``Store/uri(for:)`` gives a text form that round-trips through
/// ``Store/objectID(forURI:)``.
public struct ObjectID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The index of the object's entity in its model (``Model/entities`` sorted by name).
    public let entity: Int
    /// The number the store gave the object; unique in the store.
    public let key: UInt64

    /// Keys are below this: they come from a counter that starts at 1, and half the range is
    /// more than any store can use while keeping the counter far from overflowing. Replay and
    /// base loading refuse any other key.
    static let keyLimit = UInt64.max >> 1

    init(entity: Int, key: UInt64) {
        self.entity = entity
        self.key = key
    }

    /// Hashes the entity index and the number.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(key)
        hasher.combine(entity)
    }

    /// Sets and dictionaries of object IDs (a context's pending changes, identity map…) place
    /// them by this: a multiply–xor–shift mix of the key, the entity and the collection's seed,
    /// several times cheaper than SipHash. Keys come from the store's counter, not from input.
    public func _rawHashValue(seed: Int) -> Int {
        Int(truncatingIfNeeded: avalanche(key ^ UInt64(truncatingIfNeeded: seed) ^ (UInt64(truncatingIfNeeded: entity) &* 0x9E37_79B9_7F4A_7C15)))
    }

    /// Orders by entity index, then by number: within an entity, the order of creation.
    public static func < (lhs: ObjectID, rhs: ObjectID) -> Bool {
        (lhs.entity, lhs.key) < (rhs.entity, rhs.key)
    }

    /// The entity index and the number, as `3:12` (``Store/uri(for:)`` names the entity).
    public var description: String { "\(entity):\(key)" }

    /// IDs in ascending order: as given when they already are (an index's list of one entity),
    /// by their bare keys when they share one entity, else by entity and key.
    static func ordered(_ ids: [ObjectID]) -> [ObjectID] {
        guard let first = ids.first, !zip(ids, ids.dropFirst()).allSatisfy({ $0 < $1 }) else { return ids }
        guard ids.allSatisfy({ $0.entity == first.entity }) else { return ids.sorted() }
        return ids.map(\.key).sorted().map { ObjectID(entity: first.entity, key: $0) }
    }
}
