import CairnSupport

extension AttributeIndex {
    /// The attribute indexes (one per slot of `layout`) of every object of `objects`, built
    /// whole, as a replay ends, on the calling thread and one of ``WorkerThreads/replayHelper``
    /// (kept, so that its memory is reused by the next open): each thread gathers the entries of one stretch
    /// of the table and sorts them (``IndexEntryGatherer``); then each ordered index merges
    /// the two lists straight into its runs, half of the indexes on each thread. One sort of
    /// an index's entries costs far less than filing its objects one at a time.
    static func built(from objects: ObjectTable, layout: IndexLayout) -> [AttributeIndex] {
        guard !layout.slots.isEmpty else { return [] }
        let entities = Set(layout.byEntity.indices.filter { !layout.byEntity[$0].isEmpty })
        let expected = layout.slots.map { objects.counts[$0.entity] / 2 }
        let shares = objects.visitFromBothEnds(entities, on: .replayHelper) { IndexEntryGatherer(layout: layout, expected: expected) }
        let build = { @Sendable (slot: Int) -> AttributeIndex in
            let ordered = shares.isEmpty ? OrderedIndex(kind: layout.kinds[slot]) : OrderedIndex.Builder.build(joining: shares.map { $0.ordered[slot] })
            let hashed = layout.kinds[slot] == nil ? HashIndex(filings: shares.flatMap { $0.filings[slot] }) : nil
            return AttributeIndex(hashed: hashed, ordered: ordered)
        }
        let slots = layout.slots.indices
        guard slots.count > 1 else { return slots.map(build) }
        let odd = ConcurrentResult(on: .replayHelper) { () throws(Never) in slots.filter { $0 % 2 == 1 }.map(build) }
        let even = slots.filter { $0 % 2 == 0 }.map(build)
        let oddBuilt = odd.value()
        return slots.map { $0 % 2 == 0 ? even[$0 / 2] : oddBuilt[$0 / 2] }
    }
}

/// Gathers the attribute index entries of the objects it is shown: one for each thread of a
/// bulk build (``AttributeIndex/built(from:layout:)``), one for a large save's inserts. Its
/// result is its entries, each index's sorted on the gathering thread.
struct IndexEntryGatherer: RowVisitor {
    let layout: IndexLayout
    /// Per slot: the entries of its ordered index.
    private(set) var ordered: [OrderedIndex.Builder]
    /// Per slot: (value hash, object key) for its hash index (empty for packed slots, which
    /// have none).
    private(set) var filings: [[(hash: UInt64, key: UInt64)]]

    /// A gatherer of the entries of `layout`'s indexes, with room for about `expected[slot]`
    /// entries in each slot's (none reserved for slots past its end).
    init(layout: IndexLayout, expected: [Int] = []) {
        self.layout = layout
        ordered = layout.kinds.map { OrderedIndex.Builder(kind: $0) }
        filings = Array(repeating: [], count: layout.slots.count)
        for (slot, count) in zip(layout.slots.indices, expected) {
            ordered[slot].reserveCapacity(count)
            if layout.kinds[slot] == nil { filings[slot].reserveCapacity(count) }
        }
    }

    /// Every object is gathered.
    var filter: ScanFilter? { nil }

    /// Files an object's values of its entity's indexed attributes: a number, date or boolean
    /// read in place from the row (``PackedKind/bits(encoded:)``), any other value decoded.
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

    /// A chunk's rows, read without making its table of value starts (a few values of each
    /// row, read once, do not repay it; the chunk would keep it).
    mutating func visitMatches(_ matches: SlotMask, in chunk: ChunkScan) {
        chunk.chunk.forEachRow(in: matches, firstKey: chunk.firstKey, memo: chunk.memo, makingStarts: false) { _, id, row in visit(id, row) }
    }

    /// The entries gathered, each index's sorted; the gatherer starts again, empty.
    mutating func takeResult() -> IndexEntryGatherer {
        for slot in ordered.indices { ordered[slot].sort() }
        defer { self = IndexEntryGatherer(layout: layout) }
        return self
    }
}
