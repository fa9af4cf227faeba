/// A compiled predicate flattened for scans of committed rows: its nodes in prefix order and
/// its comparisons as plain values, in memory the filter owns, so that testing a row touches no
/// reference count. A comparison the row's bytes cannot decide (non-ASCII text, a key path
/// across a relationship…) is evaluated by its ``CompiledComparison``.
final class RowFilter: @unchecked Sendable {
    // Safety: the buffers are written in `init` and only read afterwards.
    private struct Node {
        enum Kind: UInt8 { case comparison, and, or, not, constant, general }
        var kind: Kind
        /// `.and`/`.or`: the number of operands; `.comparison`: its index; `.constant`: 0 or 1.
        var value: Int32
        /// The number of nodes of this node's subtree, itself included.
        var size: Int32
    }

    private let nodes: UnsafeMutableBufferPointer<Node>
    private let fastForms: UnsafeMutableBufferPointer<RowComparison?>
    /// Every comparison, for the general evaluation; also keeps the fast forms' memory alive.
    private let comparisons: [CompiledComparison]
    /// Parts evaluated on decoded values only (a `SUBQUERY`), by index.
    private let generals: [CompiledPredicate]
    /// The positions the fast forms read, in order: the columns a scan can decide on.
    private let columnPositions: [Int]

    init(_ predicate: CompiledPredicate) {
        var nodes: [Node] = []
        var comparisons: [CompiledComparison] = []
        var generals: [CompiledPredicate] = []
        func flatten(_ predicate: CompiledPredicate) {
            let at = nodes.count
            switch predicate {
            case .comparison(let comparison):
                nodes.append(Node(kind: .comparison, value: Int32(comparisons.count), size: 1))
                comparisons.append(comparison)
            case .and(let parts), .or(let parts):
                let isAnd = if case .and = predicate { true } else { false }
                nodes.append(Node(kind: isAnd ? .and : .or, value: Int32(parts.count), size: 1))
                parts.forEach(flatten)
            case .not(let part):
                nodes.append(Node(kind: .not, value: 0, size: 1))
                flatten(part)
            case .constant(let flag):
                nodes.append(Node(kind: .constant, value: flag ? 1 : 0, size: 1))
            case .someMatch:
                nodes.append(Node(kind: .general, value: Int32(generals.count), size: 1))
                generals.append(predicate)
            }
            nodes[at].size = Int32(nodes.count - at)
        }
        flatten(predicate)
        self.nodes = .allocate(capacity: nodes.count)
        _ = self.nodes.initialize(from: nodes)
        fastForms = .allocate(capacity: comparisons.count)
        _ = fastForms.initialize(from: comparisons.map(\.rowComparison))
        self.comparisons = comparisons
        self.generals = generals
        columnPositions = fastForms.compactMap { $0?.position }
    }

    deinit {
        nodes.deallocate()
        fastForms.deallocate()
    }

    /// The filter decided for the objects of the wanted entities (by entity index) in a chunk,
    /// from the chunk's columns: the slots that pass, and those the columns cannot decide (to be
    /// tested on their rows, ``evaluate(_:_:_:)``). Nil when no comparison reads a column.
    func evaluate(columnsOf chunk: ObjectChunk, wanted: [Bool]) -> (passing: SlotMask, undecided: SlotMask)? {
        guard let first = columnPositions.first else { return nil }
        let column = chunk.column(first)
        let slots = chunk.slots(of: wanted, column: column)
        guard !slots.isEmpty else { return (.none, .none) }
        // The common filter, one comparison: decided on the column already found.
        if nodes.count == 1, let fast = fastForms[0], let column {
            let (holds, undecided) = fast.evaluate(column, slots)
            return (holds, undecided)
        }
        return evaluate(0, chunk, slots)
    }

    /// Node `index` decided on columns for `slots`: those it holds for, and those undecided (the
    /// rest of `slots` it does not hold for). Three-valued: an `AND` is false as soon as one
    /// operand is, true when all are, undecided otherwise; an `OR` the other way round.
    private func evaluate(_ index: Int, _ chunk: ObjectChunk, _ slots: SlotMask) -> (SlotMask, SlotMask) {
        let node = nodes[index]
        switch node.kind {
        case .comparison:
            guard let fast = fastForms[Int(node.value)], let column = chunk.column(fast.position) else { return (.none, slots) }
            return fast.evaluate(column, slots)
        case .and, .or:
            let isAnd = node.kind == .and
            // AND: `settled` gathers the slots found false; OR: those found true.
            var settled = SlotMask.none
            var unanimous = slots  // AND: true so far; OR: false so far
            var child = index + 1
            for _ in 0..<Int(node.value) {
                let open = slots & ~settled
                if open.isEmpty { break }
                let (holds, undecided) = evaluate(child, chunk, open)
                let fails = open & ~holds & ~undecided
                if isAnd {
                    settled = settled | fails
                    unanimous = unanimous & holds
                } else {
                    settled = settled | holds
                    unanimous = unanimous & fails
                }
                child += Int(nodes[child].size)
            }
            let passing = isAnd ? unanimous & ~settled : settled
            let failing = isAnd ? settled : unanimous & ~settled
            return (passing, slots & ~passing & ~failing)
        case .not:
            let (holds, undecided) = evaluate(index + 1, chunk, slots)
            return (slots & ~holds & ~undecided, undecided)
        case .constant:
            return (node.value != 0 ? slots : .none, .none)
        case .general:
            return (.none, slots)
        }
    }

    /// Whether the committed object with this row matches.
    func evaluate(_ id: ObjectID, _ row: BorrowedRow, _ reader: ObjectReader) -> Bool {
        // The common predicate, one comparison decided on the row's bytes, without the tree.
        if nodes.count == 1, nodes[0].kind == .comparison, let decided = fastForms[0]?.evaluate(row.bytes) { return decided }
        return evaluate(0, id, row, reader)
    }

    private func evaluate(_ index: Int, _ id: ObjectID, _ row: BorrowedRow, _ reader: ObjectReader) -> Bool {
        let node = nodes[index]
        switch node.kind {
        case .comparison:
            let number = Int(node.value)
            if let decided = fastForms[number]?.evaluate(row.bytes) { return decided }
            return comparisons[number].evaluate(id, ObjectView(base: .row(row.owned()), changes: nil), reader)
        case .and, .or:
            let wanted = node.kind == .or
            var child = index + 1
            for _ in 0..<Int(node.value) {
                if evaluate(child, id, row, reader) == wanted { return wanted }
                child += Int(nodes[child].size)
            }
            return !wanted
        case .not:
            return !evaluate(index + 1, id, row, reader)
        case .constant:
            return node.value != 0
        case .general:
            return generals[Int(node.value)].evaluate(id, ObjectView(base: .row(row.owned()), changes: nil), reader)
        }
    }
}
