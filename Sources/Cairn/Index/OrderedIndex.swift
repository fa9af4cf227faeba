import CairnSupport
import Foundation

/// Objects in the order of one attribute's value: answers ranges (`<`, `>=`, `BETWEEN`…) and
/// sorted reads. Persistent: entries live in chunks of at most ``Tuning/orderedChunkLimit`` shared between
/// snapshots and copied only when a save changes them. Nil values are not filed.
struct OrderedIndex: Sendable {
    struct Entry: Sendable {
        var value: Value
        var id: ObjectID
    }

    final class Chunk: @unchecked Sendable {
        // Safety: a chunk is mutated only while uniquely referenced (checked before every
        // change), so a published snapshot's chunks never change.
        var entries: [Entry]
        init(_ entries: [Entry]) { self.entries = entries }
    }

    /// The chunks, in entry order. Internal, not private, only so that the tests can damage it
    /// and see ``checkInvariants()`` fail.
    var chunks: [Chunk] = []
    /// How many entries.
    private(set) var count = 0

    /// An empty index.
    init() {}

    /// An index of `entries` (nil values left out), sorted here unless they already are, in
    /// chunks three quarters full, so that later inserts split few of them. (``precedes(_:_:)``
    /// is a strict order over the values one attribute can hold: one kind, never NaN.)
    init(entries: [Entry]) {
        var sorted = entries.filter { $0.value != .null }
        if zip(sorted, sorted.dropFirst()).contains(where: { !Self.precedes($0, $1) }) { sorted.sort(by: Self.precedes) }
        let size = Tuning.orderedChunkLimit * 3 / 4
        chunks = stride(from: 0, to: sorted.count, by: size).map { Chunk(Array(sorted[$0..<min($0 + size, sorted.count)])) }
        count = sorted.count
        checkAfterMutation { () throws(InvariantViolation) in if count <= Tuning.wholeCheckLimit { try checkInvariants() } }
    }

    /// Entry order: by value, then by object ID.
    static func precedes(_ a: Entry, _ b: Entry) -> Bool {
        switch QueryValue.order(a.value, b.value) ?? .orderedSame {
        case .orderedAscending: true
        case .orderedDescending: false
        case .orderedSame: a.id < b.id
        }
    }

    /// The chunk an entry belongs in: the first whose last entry is not before it.
    private func chunkIndex(for entry: Entry) -> Int {
        var low = 0, high = chunks.count
        while low < high {
            let middle = (low + high) / 2
            if let last = chunks[middle].entries.last, Self.precedes(last, entry) { low = middle + 1 } else { high = middle }
        }
        return min(low, max(chunks.count - 1, 0))
    }

    private mutating func uniqueChunk(_ index: Int) -> Chunk {
        if !isKnownUniquelyReferenced(&chunks[index]) { chunks[index] = Chunk(chunks[index].entries) }
        return chunks[index]
    }

    mutating func insert(_ value: Value, _ id: ObjectID) {
        guard value != .null else { return }
        let entry = Entry(value: QueryValue.normalized(value), id: id)
        count += 1
        guard !chunks.isEmpty else { chunks = [Chunk([entry])]; return }
        let index = chunkIndex(for: entry)
        let chunk = uniqueChunk(index)
        let position = Self.insertionPoint(chunk.entries, entry)
        chunk.entries.insert(entry, at: position)
        if chunk.entries.count > Tuning.orderedChunkLimit {
            let half = chunk.entries.count / 2
            let upper = Chunk(Array(chunk.entries[half...]))
            chunk.entries.removeSubrange(half...)
            chunks.insert(upper, at: index + 1)
        }
        checkAfterMutation { () throws(InvariantViolation) in try checkInvariants(around: index, position: position) }
    }

    mutating func remove(_ value: Value, _ id: ObjectID) {
        guard value != .null, !chunks.isEmpty else { return }
        let entry = Entry(value: QueryValue.normalized(value), id: id)
        let index = chunkIndex(for: entry)
        let position = Self.insertionPoint(chunks[index].entries, entry)
        guard position < chunks[index].entries.count, chunks[index].entries[position].id == id else { return }
        let chunk = uniqueChunk(index)
        chunk.entries.remove(at: position)
        count -= 1
        if chunk.entries.isEmpty { chunks.remove(at: index) }
        checkAfterMutation { () throws(InvariantViolation) in try checkInvariants(around: index, position: position) }
    }

    /// Whether `id` is filed under `value` (two binary searches; a nil value is never filed).
    func contains(_ value: Value, _ id: ObjectID) -> Bool {
        guard value != .null, !chunks.isEmpty else { return false }
        let entry = Entry(value: QueryValue.normalized(value), id: id)
        let entries = chunks[chunkIndex(for: entry)].entries
        let position = Self.insertionPoint(entries, entry)
        return position < entries.count && entries[position].id == id && !Self.precedes(entry, entries[position])
    }

    private static func insertionPoint(_ entries: [Entry], _ entry: Entry) -> Int {
        var low = 0, high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if precedes(entries[middle], entry) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// A bound of a range.
    struct Bound {
        var value: Value
        var inclusive: Bool
    }

    /// The objects whose value lies between the bounds (nil: unbounded), in index order.
    func objects(from lower: Bound?, to upper: Bound?) -> [ObjectID] {
        let (start, end) = span(from: lower, to: upper)
        var result: [ObjectID] = []
        var (chunkIndex, position) = start
        while (chunkIndex, position) < end, chunkIndex < chunks.count {
            let entries = chunks[chunkIndex].entries
            let stop = chunkIndex == end.0 ? min(end.1, entries.count) : entries.count
            if position < stop { result += entries[position..<stop].lazy.map(\.id) }
            chunkIndex += 1
            position = 0
        }
        return result
    }

    /// How many objects have a value between the bounds (without listing them: a few binary
    /// searches and a sum over the chunks in between).
    func count(from lower: Bound?, to upper: Bound?) -> Int {
        let (start, end) = span(from: lower, to: upper)
        guard (start.0, start.1) < (end.0, end.1) else { return 0 }
        if start.0 == end.0 { return end.1 - start.1 }
        var total = chunks[start.0].entries.count - start.1 + (end.0 < chunks.count ? end.1 : 0)
        for index in (start.0 + 1)..<min(end.0, chunks.count) { total += chunks[index].entries.count }
        return total
    }

    /// The (chunk, position) of the first entry in the range and of the first entry past it.
    private func span(from lower: Bound?, to upper: Bound?) -> (start: (Int, Int), end: (Int, Int)) {
        let start =
            lower.map { bound in
                firstPosition { entry in
                    let order = QueryValue.order(entry.value, bound.value) ?? .orderedAscending
                    return order == .orderedDescending || (bound.inclusive && order == .orderedSame)
                }
            } ?? (0, 0)
        // Past the range: beyond the upper bound, or a value that cannot be ordered against it
        // (values of another kind, which never match).
        let end =
            upper.map { bound in
                firstPosition { entry in
                    guard let order = QueryValue.order(entry.value, bound.value) else { return true }
                    return order == .orderedDescending || (!bound.inclusive && order == .orderedSame)
                }
            } ?? (chunks.count, 0)
        return (start, end)
    }

    /// The first (chunk, position) whose entry satisfies `isAtOrPast` (monotonic along the index).
    private func firstPosition(_ isAtOrPast: (Entry) -> Bool) -> (Int, Int) {
        var low = 0, high = chunks.count
        while low < high {
            let middle = (low + high) / 2
            if let last = chunks[middle].entries.last, !isAtOrPast(last) { low = middle + 1 } else { high = middle }
        }
        guard low < chunks.count else { return (chunks.count, 0) }
        let entries = chunks[low].entries
        var first = 0, last = entries.count
        while first < last {
            let middle = (first + last) / 2
            if isAtOrPast(entries[middle]) { last = middle } else { first = middle + 1 }
        }
        return (low, first)
    }
}
