/// Collects the matches of a sorted scan with their sort keys read from the borrowed rows, so
/// that a sort of committed objects keeps no row and walks none twice (``SortColumns``).
struct SortingCollector: RowVisitor {
    /// What one batch of chunks gave: its matches and their keys, or nil when a key's bytes
    /// could not be read directly (the general path then sorts).
    struct Part: Sendable {
        var ids: [ObjectID] = []
        var columns: [SortColumns.ColumnBuffer]
    }

    private let filter: RowFilter?
    private let reader: ObjectReader
    private let keys: [SortColumns.DirectColumn]
    private var part: Part
    private var failed = false

    init(filter: RowFilter?, reader: ObjectReader, keys: [SortColumns.DirectColumn]) {
        self.filter = filter
        self.reader = reader
        self.keys = keys
        part = Part(columns: Array(repeating: SortColumns.ColumnBuffer(), count: keys.count))
    }

    mutating func visit(_ id: ObjectID, _ row: BorrowedRow) {
        guard !failed, filter?.evaluate(id, row, reader) ?? true else { return }
        part.ids.append(id)
        for index in keys.indices where !keys[index].append(row.bytes, to: &part.columns[index]) { failed = true }
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
