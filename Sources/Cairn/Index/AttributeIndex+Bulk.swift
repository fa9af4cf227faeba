import Foundation

extension AttributeIndex {
    /// The attribute indexes (one per slot of `layout`) of every object of `objects`, built
    /// whole, as a replay ends: each of the two threads gathers the entries of one half of the
    /// table and sorts them (``IndexEntryGatherer``), then each index joins its halves in one
    /// merge, the indexes on both threads at once. One sort of an index's entries costs far
    /// less than filing its objects one at a time.
    static func built(from objects: ObjectTable, layout: IndexLayout) -> [AttributeIndex] {
        guard !layout.slots.isEmpty else { return [] }
        let entities = Set(layout.byEntity.indices.filter { !layout.byEntity[$0].isEmpty })
        let counts = objects.counts
        let shares = objects.visitInStretches(entities) { stretches in
            IndexEntryGatherer(layout: layout, expected: layout.slots.map { counts[$0.entity] / stretches })
        }
        let built = ResultParts<AttributeIndex>(count: layout.slots.count)
        DispatchQueue.concurrentPerform(iterations: layout.slots.count) { slot in
            let ordered = shares.isEmpty ? OrderedIndex(kind: layout.kinds[slot]) : OrderedIndex.Builder.build(joining: shares.map { $0.ordered[slot] })
            let hashed = layout.kinds[slot] == nil ? HashIndex(filings: shares.flatMap { $0.filings[slot] }) : nil
            built.set(slot, AttributeIndex(hashed: hashed, ordered: ordered))
        }
        return built.all()
    }
}

/// Gathers the attribute index entries of the objects a bulk build shows it, one gatherer per
/// thread (``AttributeIndex/built(from:layout:)``); its result is its entries, each index's
/// sorted on the gathering thread.
struct IndexEntryGatherer: RowVisitor {
    let layout: IndexLayout
    /// Per slot: the entries of its ordered index.
    private(set) var ordered: [OrderedIndex.Builder]
    /// Per slot: (value hash, object key) for its hash index (empty for packed slots, which
    /// have none).
    private(set) var filings: [[(hash: UInt64, key: UInt64)]]

    /// A gatherer of the entries of `layout`'s indexes, with room for about `expected` entries
    /// in each (the objects of its entity in the gatherer's share of the table).
    init(layout: IndexLayout, expected: [Int]) {
        self.layout = layout
        ordered = layout.kinds.map { OrderedIndex.Builder(kind: $0) }
        filings = Array(repeating: [], count: layout.slots.count)
        for slot in layout.slots.indices {
            ordered[slot].reserveCapacity(expected[slot])
            if layout.kinds[slot] == nil { filings[slot].reserveCapacity(expected[slot]) }
        }
    }

    /// Every object is gathered.
    var filter: ScanFilter? { nil }

    mutating func visit(_ id: ObjectID, _ row: BorrowedRow) {
        for (position, slot) in layout.byEntity[id.entity] {
            let bytes = row.bytes.value(position)
            if let kind = layout.kinds[slot], let bits = kind.bits(encoded: bytes) {
                ordered[slot].add(bits: bits, of: kind, key: id.key)
                continue
            }
            guard case .attribute(let value) = ValueEncoding.decodeProperty(bytes), value != .null else { continue }
            if layout.kinds[slot] == nil { filings[slot].append((IndexKey.hash(value), id.key)) }
            ordered[slot].add(value, key: id.key)
        }
    }

    /// The entries gathered, each index's sorted; the gatherer starts again, empty.
    mutating func takeResult() -> IndexEntryGatherer {
        var result = self
        for slot in result.ordered.indices { result.ordered[slot].sort() }
        self = IndexEntryGatherer(layout: layout, expected: Array(repeating: 0, count: layout.slots.count))
        return result
    }
}
