import CairnSupport

/// Object IDs in an order that the list does not know (a comparison is given to each search), in
/// chunks of at most ``chunkLimit``: an insert or a removal moves at most one chunk's IDs, and a
/// copy (a results snapshot) shares the chunks it does not change. Finding a place costs about
/// log₂(count) comparisons; an index, one pass over the chunks' counts.
struct OrderedIDList: Sendable, Equatable {
    /// The most IDs a chunk holds; a full chunk splits in two.
    static let chunkLimit = 512

    /// A place in the list: a chunk and an offset in it.
    struct Place: Equatable {
        var chunk: Int
        var offset: Int
    }

    private(set) var chunks: [[ObjectID]] = []
    private(set) var count = 0

    /// A list of `ids`, already in order.
    init(_ ids: [ObjectID] = []) {
        count = ids.count
        chunks = stride(from: 0, to: ids.count, by: Self.chunkLimit / 2).map { Array(ids[$0..<min(ids.count, $0 + Self.chunkLimit / 2)]) }
    }

    /// Every ID, in order.
    var ids: [ObjectID] {
        var all: [ObjectID] = []
        all.reserveCapacity(count)
        for chunk in chunks { all += chunk }
        return all
    }

    /// The IDs at `range` of the order.
    func ids(_ range: Range<Int>) -> [ObjectID] {
        var result: [ObjectID] = []
        result.reserveCapacity(range.count)
        var start = 0
        for chunk in chunks {
            let end = start + chunk.count
            if end > range.lowerBound && start < range.upperBound {
                result += chunk[max(0, range.lowerBound - start)..<min(chunk.count, range.upperBound - start)]
            }
            if end >= range.upperBound { break }
            start = end
        }
        return result
    }

    /// The first place whose ID does not come before the one `precedes` compares with (the
    /// place an ID goes, or is, when the list is in that order); `precedes(id)` says whether
    /// `id` comes before it.
    func place(where precedes: (ObjectID) -> Bool) -> Place {
        // The last chunk whose first ID comes before; the place is in it, or at the next's start.
        var low = 0, high = chunks.count
        while low < high {
            let middle = (low + high) / 2
            if precedes(chunks[middle][0]) { low = middle + 1 } else { high = middle }
        }
        guard low > 0 else { return Place(chunk: 0, offset: 0) }
        let chunk = chunks[low - 1]
        var first = 1, last = chunk.count
        while first < last {
            let middle = (first + last) / 2
            if precedes(chunk[middle]) { first = middle + 1 } else { last = middle }
        }
        return first == chunk.count && low < chunks.count ? Place(chunk: low, offset: 0) : Place(chunk: low - 1, offset: first)
    }

    /// The ID at `place`, if there is one.
    func id(at place: Place) -> ObjectID? {
        chunks.indices.contains(place.chunk) && chunks[place.chunk].indices.contains(place.offset) ? chunks[place.chunk][place.offset] : nil
    }

    /// The index of `place` in the order.
    func index(of place: Place) -> Int {
        var index = place.offset
        for chunk in chunks[..<min(place.chunk, chunks.count)] { index += chunk.count }
        return index
    }

    /// Inserts `id` at `place`.
    mutating func insert(_ id: ObjectID, at place: Place) {
        count += 1
        guard !chunks.isEmpty else {
            chunks = [[id]]
            return
        }
        chunks[place.chunk].insert(id, at: place.offset)
        if chunks[place.chunk].count > Self.chunkLimit {
            let second = Array(chunks[place.chunk][(Self.chunkLimit / 2)...])
            chunks[place.chunk].removeSubrange((Self.chunkLimit / 2)...)
            chunks.insert(second, at: place.chunk + 1)
        }
    }

    /// Removes the ID at `place`.
    mutating func remove(at place: Place) {
        guard id(at: place) != nil else { return }
        count -= 1
        chunks[place.chunk].remove(at: place.offset)
        if chunks[place.chunk].isEmpty { chunks.remove(at: place.chunk) }
    }

    /// Checks that no chunk is empty or over the limit and that the count is the chunks'.
    func checkInvariants() throws(InvariantViolation) {
        try require(!chunks.contains { $0.isEmpty || $0.count > Self.chunkLimit }, "OrderedIDList", "a chunk is empty or over \(Self.chunkLimit) IDs")
        try require(chunks.reduce(0) { $0 + $1.count } == count, "OrderedIDList", "the count is not the chunks' IDs")
    }
}
