import CCairnSupport
import Foundation
import Synchronization

/// Sees the objects of a scan one at a time, on one thread (``ObjectTable/visit(_:_:)``).
/// A value type, so that the state it updates for every row needs no dynamic exclusivity check.
protocol RowVisitor: SendableMetatype {
    associatedtype Result: Sendable
    /// Sees one object; `row` is valid only during the call (``BorrowedRow/owned()`` keeps it).
    mutating func visit(_ id: ObjectID, _ row: BorrowedRow)
    /// What it saw since the last call; it then starts again, empty.
    mutating func takeResult() -> Result
}

/// Collects the objects a test accepts.
private struct MatchCollector: RowVisitor {
    private let test: (ObjectID, BorrowedRow) -> Bool
    private var result: [(ObjectID, Row)] = []

    init(_ test: @escaping (ObjectID, BorrowedRow) -> Bool) { self.test = test }

    mutating func visit(_ id: ObjectID, _ row: BorrowedRow) {
        if test(id, row) { result.append((id, row.owned())) }
    }

    mutating func takeResult() -> [(ObjectID, Row)] {
        defer { result = [] }
        return result
    }
}

/// Per-thread results of a parallel scan.
private final class ResultParts<Part: Sendable>: @unchecked Sendable {
    // Safety: every access holds `lock`.
    private let lock = NSLock()
    private var parts: [Part?]

    init(count: Int) { parts = Array(repeating: nil, count: count) }

    func set(_ index: Int, _ part: Part) {
        lock.lock()
        parts[index] = part
        lock.unlock()
    }

    func all() -> [Part] {
        lock.lock()
        defer { lock.unlock() }
        return parts.compactMap { $0 }
    }
}

extension ObjectChunk {
    /// Shows the objects of the wanted entities (by entity index) to `visitor`, their rows
    /// borrowed from the buffer (no reference counting per object).
    func visit<Visitor: RowVisitor>(_ firstKey: UInt64, _ wanted: [Bool], _ memo: RowMemo, _ visitor: inout Visitor) {
        let entries = entries
        let buffer = buffer
        let spill = overflow
        let starts = scanStarts()
        buffer.withBytes { all in
            let ahead = Tuning.prefetchDistance
            for slot in entries.indices {
                // The row a few slots on starts loading now (rows are read one after the
                // other, each walked from its start: without this, each waits for memory).
                if slot + ahead < entries.count, let next = entries[slot + ahead], case .buffer(let nextStart) = next.place, nextStart < all.count,
                    let base = all.baseAddress
                {
                    cairn_prefetch(base + nextStart)
                    cairn_prefetch(base + min(all.count - 1, nextStart + 64))
                }
                guard let entry = entries[slot], Int(entry.entity) < wanted.count, wanted[Int(entry.entity)] else { continue }
                let id = ObjectID(entity: Int(entry.entity), key: firstKey | UInt64(slot))
                let start: Int
                switch entry.place {
                case .buffer(let at): start = at
                case .overflow(let at):
                    // A row replaced since the buffer was shared: walked from its start.
                    guard let spill else { continue }
                    spill.withBytes { extra in
                        guard at + Int(entry.length) <= extra.count else { return }
                        let bytes = RowBytes(bytes: UnsafeRawBufferPointer(rebasing: extra[at..<(at + Int(entry.length))]), count: Int(entry.count))
                        visitor.visit(id, BorrowedRow(bytes: bytes, storage: spill, start: at))
                    }
                    continue
                case .large:
                    large[slot]?.withBorrowed { visitor.visit(id, $0) }
                    continue
                }
                let end = start + Int(entry.length)
                guard end <= all.count else { continue }
                let rowStarts = starts.entries(slot)
                if rowStarts == nil { memo.reset() }
                let bytes = RowBytes(
                    bytes: UnsafeRawBufferPointer(rebasing: all[start..<end]), count: Int(entry.count),
                    memo: rowStarts == nil ? memo : nil, starts: rowStarts, wideStarts: starts.wide)
                visitor.visit(id, BorrowedRow(bytes: bytes, storage: buffer, start: start))
            }
        }
    }
}

extension ObjectTable {
    /// Shows every object of `entities` to a visitor, on two threads when there are many, and
    /// returns the results of each batch of chunks, in the table's order (so that a sum of
    /// doubles is the same from one run to the next). The threads take batches as they finish
    /// the previous one, so a thread the machine slows down does not hold the other back. Each
    /// thread makes its own visitor with `make`, so that the threads never share the objects a
    /// visitor touches for every row: a reference count changed by two cores at once costs more
    /// than a comparison.
    func visit<Visitor: RowVisitor>(_ entities: Set<Int>, _ make: @Sendable () -> Visitor) -> [Visitor.Result] {
        let total = entities.reduce(0) { $0 + (counts.indices.contains($1) ? counts[$1] : 0) }
        guard total > 0 else { return [] }
        let parts = chunks.all
        let wanted = counts.indices.map(entities.contains)
        let workers = total >= Tuning.parallelScanObjects ? Tuning.parallelScanWorkers : 1
        let batchSize = Tuning.scanBatchChunks
        let batches = (parts.count + batchSize - 1) / batchSize
        let results = ResultParts<Visitor.Result>(count: batches)
        let next = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            var visitor = make()
            let memo = RowMemo.allocate()
            defer { memo.deallocate() }
            while true {
                let batch = next.wrappingAdd(1, ordering: .relaxed).oldValue
                guard batch < batches else { break }
                for index in (batch * batchSize)..<min(parts.count, (batch + 1) * batchSize) {
                    let (number, chunk) = parts[index]
                    chunk.visit(number << Tuning.objectChunkShift, wanted, memo, &visitor)
                }
                results.set(batch, visitor.takeResult())
            }
        }
        return results.all()
    }

    /// The objects of `entities` (with their rows) for which the test holds; see ``visit(_:_:)``.
    func matching(_ entities: Set<Int>, _ makeTest: @Sendable () -> (ObjectID, BorrowedRow) -> Bool) -> [(ObjectID, Row)] {
        visit(entities) { MatchCollector(makeTest()) }.flatMap { $0 }
    }

    /// The IDs of the objects of `entities`, in one pass over the table, in key order; the
    /// first `limit` of them when one is given.
    func ids(_ entities: Set<Int>, limit: Int? = nil) -> [ObjectID] {
        let wanted = counts.indices.map(entities.contains)
        var ids: [ObjectID] = []
        let total = entities.reduce(0) { $0 &+ (counts.indices.contains($1) ? counts[$1] : 0) }
        ids.reserveCapacity(min(limit ?? total, total))
        for (number, chunk) in chunks.all {
            for (slot, entry) in chunk.entries.enumerated() {
                guard let entry, wanted.indices.contains(Int(entry.entity)), wanted[Int(entry.entity)] else { continue }
                if let limit, ids.count >= limit { return ids }
                ids.append(ObjectID(entity: Int(entry.entity), key: number << Tuning.objectChunkShift | UInt64(slot)))
            }
        }
        return ids
    }
}
