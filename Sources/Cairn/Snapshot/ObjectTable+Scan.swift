import CairnSupport
import Foundation
import Synchronization

/// Sees the objects of a scan that pass its filter, on one thread (``ObjectTable/visit(_:_:)``).
/// A value type, so that the state it updates for every row needs no dynamic exclusivity check.
protocol RowVisitor: SendableMetatype {
    associatedtype Result: Sendable
    /// What an object must pass to be seen (nil: every object is): the table decides it, on a
    /// chunk's columns where it can (``ChunkColumn``), on the rows otherwise.
    var filter: ScanFilter? { get }
    /// Sees one object that passed; `row` is valid only during the call (``BorrowedRow/owned()``
    /// keeps it).
    mutating func visit(_ id: ObjectID, _ row: BorrowedRow)
    /// Sees the objects of one chunk that passed, `matches` (not empty). By default, each one's
    /// row through ``visit(_:_:)``; a visitor that reads a few attributes reads their columns.
    mutating func visitMatches(_ matches: SlotMask, in chunk: ChunkScan)
    /// What it saw since the last call; it then starts again, empty.
    mutating func takeResult() -> Result
}

extension RowVisitor {
    mutating func visitMatches(_ matches: SlotMask, in chunk: ChunkScan) {
        chunk.forEachRow(in: matches) { _, id, row in visit(id, row) }
    }
}

/// Collects the objects that pass a filter, with their rows.
private struct MatchCollector: RowVisitor {
    let filter: ScanFilter?
    private var result: [(ObjectID, Row)] = []

    init(_ filter: ScanFilter?) { self.filter = filter }

    mutating func visit(_ id: ObjectID, _ row: BorrowedRow) { result.append((id, row.owned())) }

    mutating func takeResult() -> [(ObjectID, Row)] {
        defer { result = [] }
        return result
    }
}

/// A count of the chunks two threads have claimed between them.
private final class ClaimCounter: Sendable {
    private let claimed = Atomic<Int>(0)

    /// Claims one more; false once `limit` are claimed.
    func claim(below limit: Int) -> Bool {
        claimed.wrappingAdd(1, ordering: .relaxed).oldValue < limit
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

    /// Shows every object of `entities` to two visitors, the calling thread's and one on
    /// another of `threads` (one alone when the objects are few), and returns each one's
    /// result, taken once at its end: the first's, then the second's. The first takes chunks
    /// from the table's start and the second from its end until they meet, so each sees one
    /// stretch of keys and neither waits for the other. For work whose per-thread results are
    /// joined at the end (a bulk index build), where ``visit(_:_:)`` hands results back a
    /// batch at a time.
    func visitFromBothEnds<Visitor: RowVisitor>(
        _ entities: Set<Int>, on threads: WorkerThreads, _ make: @escaping @Sendable () -> Visitor
    ) -> [Visitor.Result] {
        let total = entities.reduce(0) { $0 + (counts.indices.contains($1) ? counts[$1] : 0) }
        guard total > 0 else { return [] }
        let parts = chunks.all
        let wanted = counts.indices.map(entities.contains)
        // Each chunk is claimed once, by whichever end counts it first.
        let claimed = ClaimCounter()
        let visitStretch = { @Sendable (fromStart: Bool) -> Visitor.Result in
            var visitor = make()
            let memo = RowMemo.allocate()
            defer { memo.deallocate() }
            var taken = 0
            while claimed.claim(below: parts.count) {
                let (number, chunk) = parts[fromStart ? taken : parts.count - 1 - taken]
                chunk.visit(number << Tuning.objectChunkShift, wanted, memo, &visitor)
                taken += 1
            }
            return visitor.takeResult()
        }
        guard total >= Tuning.parallelScanObjects else { return [visitStretch(true)] }
        let second = ConcurrentResult(on: threads) { () throws(Never) in visitStretch(false) }
        let first = visitStretch(true)
        return [first, second.value()]
    }

    /// The objects of `entities` (with their rows) that pass the filter `makeFilter` makes (one
    /// for each thread); see ``visit(_:_:)``.
    func matching(_ entities: Set<Int>, _ makeFilter: @Sendable () -> ScanFilter?) -> [(ObjectID, Row)] {
        visit(entities) { MatchCollector(makeFilter()) }.flatMap { $0 }
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
