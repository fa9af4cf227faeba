import HashTreeCollections

/// Objects by the hash of one attribute's value (``IndexKey``): answers `==` and `IN`.
/// Persistent, so snapshots share it.
struct HashIndex: Sendable {
    /// The objects whose value has one hash: usually one, as a set when there are many.
    enum Postings: Sendable {
        case one(ObjectID)
        case many(TreeSet<ObjectID>)
    }

    private var entries: TreeDictionary<TrieKey, Postings> = [:]

    mutating func insert(_ id: ObjectID, hash value: UInt64) {
        let hash = TrieKey(value)
        switch entries[hash] {
        case nil: entries[hash] = .one(id)
        case .one(let other)?: entries[hash] = other == id ? .one(id) : .many([other, id])
        case .many(var set)?:
            entries[hash] = nil      // leave the set uniquely referenced while it changes
            set.insert(id)
            entries[hash] = .many(set)
        }
    }

    mutating func remove(_ id: ObjectID, hash value: UInt64) {
        let hash = TrieKey(value)
        switch entries[hash] {
        case .one(id)?: entries[hash] = nil
        case .many(var set)?:
            entries[hash] = nil
            set.remove(id)
            if set.count == 1, let last = set.first { entries[hash] = .one(last) } else if !set.isEmpty { entries[hash] = .many(set) }
        default: break
        }
    }

    /// The objects filed under a hash (a superset of those equal to the value).
    func objects(hash: UInt64) -> [ObjectID] {
        switch entries[TrieKey(hash)] {
        case nil: []
        case .one(let id)?: [id]
        case .many(let set)?: Array(set)
        }
    }
}
