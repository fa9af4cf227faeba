/// Collects the matches of a sorted scan with their sort keys read from the borrowed rows, so
/// that a sort of committed objects keeps no row and walks none twice (``SortColumns``).
struct SortingCollector: RowVisitor {
    /// What one batch of chunks gave: its matches and their keys, or nil when a key's bytes
    /// could not be read directly (the general path then sorts).
    struct Part: Sendable {
        var ids: [ObjectID] = []
        var columns: [SortColumns.ColumnBuffer]
    }

    let filter: ScanFilter?
    private let keys: [SortColumns.DirectColumn]
    private var part: Part
    private var failed = false

    init(filter: ScanFilter?, keys: [SortColumns.DirectColumn]) {
        self.filter = filter
        self.keys = keys
        part = Part(columns: Array(repeating: SortColumns.ColumnBuffer(), count: keys.count))
    }

    mutating func visit(_ id: ObjectID, _ row: BorrowedRow) {
        guard !failed else { return }
        part.ids.append(id)
        for index in keys.indices where !keys[index].append(row.bytes.value(keys[index].position), to: &part.columns[index]) { failed = true }
    }

    /// Reads the keys from the chunk's columns when scans made them, from the rows otherwise: a
    /// sort reads the keys of its matches only, often a few of the objects, for which a column
    /// of every object costs more than it saves.
    mutating func visitMatches(_ matches: SlotMask, in chunk: ChunkScan) {
        guard !failed else { return }
        let columns = keys.map { chunk.existingColumn($0.position) }
        guard columns.allSatisfy({ $0 != nil }) else {
            chunk.forEachRow(in: matches) { _, id, row in visit(id, row) }
            return
        }
        matches.forEach { part.ids.append(chunk.id($0)) }
        for (index, column) in columns.enumerated() {
            guard let column else { continue }
            matches.forEach { slot in if !keys[index].append(column.value(slot), to: &part.columns[index]) { failed = true } }
        }
    }

    mutating func takeResult() -> Part? {
        defer {
            part = Part(columns: Array(repeating: SortColumns.ColumnBuffer(), count: keys.count))
            failed = false
        }
        return failed ? nil : part
    }

    /// The matches of all batches, in order, with their columns; nil when a batch failed.
    static func merge(_ parts: [Part?], keys: [SortColumns.DirectColumn]) -> (ids: [ObjectID], columns: [SortColumns.Column])? {
        var ids: [ObjectID] = []
        var buffers = Array(repeating: SortColumns.ColumnBuffer(), count: keys.count)
        for part in parts {
            guard let part else { return nil }
            ids += part.ids
            for index in keys.indices { buffers[index].append(part.columns[index]) }
        }
        return (ids, zip(keys, buffers).map { $0.column($1) })
    }
}
