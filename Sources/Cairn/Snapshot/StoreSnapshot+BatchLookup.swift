import CairnSupport

extension StoreSnapshot {
    /// ``holder(of:for:)`` for each of `values`, in their order, for a constraint of one
    /// attribute (all nil for another): a batch of lookups by unique key.
    ///
    /// The values go through in groups of ``Tuning/batchLookupGroup``, and each group through
    /// stages: the uniqueness index's buckets of all its keys, then the chunks, slots and rows
    /// of the objects filed there (``ObjectTable/touchRows(_:)``), then each key's check
    /// against its holder's row. A lookup alone waits for one cache miss after another (bucket,
    /// chunk, slot, row); in a group, the misses of a stage overlap.
    func holders(of values: [Value], for constraint: UniquenessConstraint) -> [ObjectID?] {
        guard constraint.positions.count == 1 else { return values.map { _ in nil } }
        let position = constraint.positions[0]
        let family = model.descriptions[constraint.owner].family
        let objects = objects
        let index = uniqueIndex
        var found: [ObjectID?] = []
        found.reserveCapacity(values.count)
        var keys = EncodedKeys()
        var hashes: [UInt64] = []
        for groupStart in stride(from: 0, to: values.count, by: Tuning.batchLookupGroup) {
            let group = values[groupStart..<min(values.count, groupStart + Tuning.batchLookupGroup)]
            keys.removeAll()
            hashes.removeAll(keepingCapacity: true)
            for value in group {
                keys.append(value)
                hashes.append(keys.withKey(keys.count - 1) { KeyHasher.hash(of: $0, for: constraint) })
            }
            let holdings = hashes.withUnsafeBufferPointer { index.holdings($0, at: lsn) }
            objects.touchRows(holdings.compactMap { if case .one(let id) = $0 { id } else { nil } })
            for (offset, holding) in holdings.enumerated() {
                switch holding {
                case .none:
                    found.append(nil)
                case .one(let id):
                    let holds = keys.withKey(offset) { key in objects.withRowBytes(id) { RowBytes.same($0.value(position), key) } }
                    found.append(family.contains(id.entity) && holds == true ? id : nil)
                case .several:
                    found.append(holder(of: group[groupStart + offset], for: constraint))
                }
            }
        }
        return found
    }
}

/// The encoded bytes of a few values, one after the other in one array (a batch lookup's
/// group of keys, encoded once for their hashes and again for the checks against rows).
private struct EncodedKeys {
    private var bytes: [UInt8] = []
    private var ends: [Int] = []

    var count: Int { ends.count }

    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
    }

    mutating func append(_ value: Value) {
        ValueEncoding.withEncoded(value) { bytes.append(contentsOf: $0) }
        ends.append(bytes.count)
    }

    /// Calls `body` with the bytes of key `index`.
    func withKey<R>(_ index: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        let start = index == 0 ? 0 : ends[index - 1]
        return bytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[start..<ends[index]])) }
    }
}
