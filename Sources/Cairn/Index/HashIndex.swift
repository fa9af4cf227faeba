import HashTreeCollections

/// The objects of one entity by the hash of one attribute's value (``IndexKey``): answers `==`
/// and `IN`. Persistent, so snapshots share it. It files object keys: the entity is its slot's.
struct HashIndex: Sendable {
    /// The objects whose value has one hash: usually one, as a list when there are many.
    enum Postings: Sendable {
        case one(UInt64)
        case many(PostingList)
    }

    private var entries: TreeDictionary<TrieKey, Postings> = [:]

    /// An empty index.
    init() {}

    /// An index of `filings` (each an object key under its value's hash, no pair twice), built
    /// at once: one trie entry made per distinct hash, rather than a lookup and a change per key.
    init(filings: [(hash: UInt64, key: UInt64)]) {
        let sorted = filings.sorted { ($0.hash, $0.key) < ($1.hash, $1.key) }
        var built: [(TrieKey, Postings)] = []
        var start = 0
        while start < sorted.count {
            var end = start + 1
            while end < sorted.count && sorted[end].hash == sorted[start].hash { end += 1 }
            let keys = sorted[start..<end].map(\.key)
            built.append((TrieKey(sorted[start].hash), keys.count == 1 ? .one(keys[0]) : .many(PostingList(sorted: keys))))
            start = end
        }
        entries = TreeDictionary(uniqueKeysWithValues: built)
    }

    mutating func insert(_ id: ObjectID, hash value: UInt64) {
        let hash = TrieKey(value)
        switch entries[hash] {
        case nil: entries[hash] = .one(id.key)
        case .one(let other)?: entries[hash] = other == id.key ? .one(other) : .many(PostingList(sorted: [min(other, id.key), max(other, id.key)]))
        case .many(var list)?:
            entries[hash] = nil  // leave the list uniquely referenced while it changes
            list.insert(id.key)
            entries[hash] = .many(list)
        }
    }

    mutating func remove(_ id: ObjectID, hash value: UInt64) {
        let hash = TrieKey(value)
        switch entries[hash] {
        case .one(id.key)?: entries[hash] = nil
        case .many(var list)?:
            entries[hash] = nil
            list.remove(id.key)
            if list.count == 1, let last = list.first { entries[hash] = .one(last) } else if list.count > 1 { entries[hash] = .many(list) }
        default: break
        }
    }

    /// Appends the objects filed under a hash (a superset of those equal to the value), of the
    /// index's `entity`, in the order of their keys.
    func appendObjects(hash: UInt64, entity: Int, to ids: inout [ObjectID]) {
        switch entries[TrieKey(hash)] {
        case nil: break
        case .one(let key)?: ids.append(ObjectID(entity: entity, key: key))
        case .many(let list)?: list.appendObjects(of: entity, to: &ids)
        }
    }
}
