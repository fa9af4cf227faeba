/// Entries kept in order (``OrderedEntry/precedes(_:_:)``), in runs of at most
/// ``Tuning/orderedChunkLimit`` shared between snapshots: a change copies the one run it touches
/// (when another snapshot shares it) and the list of runs, never every entry. The storage of an
/// ``OrderedIndex``.
struct OrderedRuns<Entry: OrderedEntry>: Sendable {
    final class Run: @unchecked Sendable {
        // Safety: a run is mutated only while uniquely referenced (checked before every
        // change), so a published snapshot's runs never change.
        var entries: [Entry]
        init(_ entries: [Entry]) { self.entries = entries }
    }

    /// The runs, in entry order, none empty. Internal, not private, only so that the tests can
    /// damage it and see ``checkInvariants()`` fail.
    var runs: [Run] = []
    /// How many entries.
    private(set) var count = 0

    /// No entries.
    init() {}

    /// The entries of each run a build or a merge makes: three quarters of
    /// ``Tuning/orderedChunkLimit``, so that later inserts split few of them.
    static var builtRunSize: Int { Tuning.orderedChunkLimit * 3 / 4 }

    /// These entries, sorted here unless they already are, in runs three quarters full, so
    /// that later inserts split few of them.
    init(entries: [Entry]) {
        var sorted = entries
        if zip(sorted, sorted.dropFirst()).contains(where: { !Entry.precedes($0, $1) }) { sorted.sort(by: Entry.precedes) }
        let size = Self.builtRunSize
        runs = stride(from: 0, to: sorted.count, by: size).map { Run(Array(sorted[$0..<min($0 + size, sorted.count)])) }
        count = sorted.count
    }

    /// The entries of two lists, each sorted, merged into runs three quarters full as
    /// ``init(entries:)`` makes them, without a list of them all first (more lists are
    /// gathered and sorted by ``init(entries:)``).
    init(mergingSorted lists: [[Entry]]) {
        guard lists.count == 2 else {
            self.init(entries: lists.count == 1 ? lists[0] : lists.flatMap { $0 })
            return
        }
        self.init()
        let (first, second) = (lists[0], lists[1])
        let size = Self.builtRunSize
        var run: [Entry] = []
        run.reserveCapacity(size)
        var (i, j) = (0, 0)
        while i < first.count || j < second.count {
            if j == second.count || (i < first.count && !Entry.precedes(second[j], first[i])) {
                run.append(first[i])
                i += 1
            } else {
                run.append(second[j])
                j += 1
            }
            if run.count == size {
                runs.append(Run(run))
                run.removeAll(keepingCapacity: true)
            }
        }
        if !run.isEmpty { runs.append(Run(run)) }
        count = first.count + second.count
    }

    /// The runs that entries from `first` to `last` fall among (a sorted list of entries not
    /// filed yet): every run with an entry between them, and the runs either would be filed in.
    private func span(from first: Entry, to last: Entry) -> ClosedRange<Int> {
        runIndex(for: first)...runIndex(for: last)
    }

    /// Whether merging `entries` (sorted, none filed yet) costs less than filing each: they
    /// number at least 1/``Tuning/mergedIndexShare`` of the entries of the runs they fall
    /// among (filing one moves half a run; merging copies each entry of those runs once).
    func mergeRepays(_ entries: [Entry]) -> Bool {
        guard let first = entries.first, let last = entries.last else { return false }
        guard !runs.isEmpty else { return true }
        let spanned = runs[span(from: first, to: last)].reduce(0) { $0 + $1.entries.count }
        return entries.count >= spanned / Tuning.mergedIndexShare
    }

    /// Files `entries` (sorted, none filed yet): merged with the entries of the runs they fall
    /// among into new runs three quarters full, which replace those; the runs before and after
    /// stay as they are (shared with the snapshots that hold them). Returns the new runs'
    /// positions.
    mutating func merge(sorted entries: [Entry]) -> Range<Int> {
        guard let first = entries.first, let last = entries.last else { return 0..<0 }
        guard !runs.isEmpty else {
            self = OrderedRuns(mergingSorted: [[], entries])
            return runs.indices
        }
        let spanned = span(from: first, to: last)
        let merged = OrderedRuns(mergingSorted: [runs[spanned].flatMap(\.entries), entries])
        runs.replaceSubrange(spanned, with: merged.runs)
        count += entries.count
        return spanned.lowerBound..<(spanned.lowerBound + merged.runs.count)
    }

    /// A position: a run and an entry in it.
    typealias Position = (run: Int, entry: Int)

    /// Files an entry not filed yet; returns where it went.
    @discardableResult
    mutating func insert(_ entry: Entry) -> Position {
        count += 1
        guard !runs.isEmpty else {
            runs = [Run([entry])]
            return (0, 0)
        }
        let index = runIndex(for: entry)
        let run = uniqueRun(index)
        let position = Self.insertionPoint(run.entries, entry)
        run.entries.insert(entry, at: position)
        if run.entries.count > Tuning.orderedChunkLimit {
            let half = run.entries.count / 2
            let upper = Run(Array(run.entries[half...]))
            run.entries.removeSubrange(half...)
            runs.insert(upper, at: index + 1)
            if position >= half { return (index + 1, position - half) }
        }
        return (index, position)
    }

    /// Removes an entry equal to `entry` (same value and key); where it was, or nil when it
    /// was not filed.
    @discardableResult
    mutating func remove(_ entry: Entry) -> Position? {
        guard let (index, position) = find(entry) else { return nil }
        let run = uniqueRun(index)
        run.entries.remove(at: position)
        count -= 1
        if run.entries.isEmpty { runs.remove(at: index) }
        return (index, position)
    }

    /// Whether an entry equal to `entry` is filed (two binary searches).
    func contains(_ entry: Entry) -> Bool { find(entry) != nil }

    private func find(_ entry: Entry) -> Position? {
        guard !runs.isEmpty else { return nil }
        let index = runIndex(for: entry)
        let entries = runs[index].entries
        let position = Self.insertionPoint(entries, entry)
        guard position < entries.count, entries[position].key == entry.key, !Entry.precedes(entry, entries[position]) else { return nil }
        return (index, position)
    }

    /// The first position whose entry satisfies `isAtOrPast` (which must be false for a prefix
    /// of the entries and true for the rest); `(runs.count, 0)` when none does.
    func firstPosition(_ isAtOrPast: (Entry) -> Bool) -> Position {
        var low = 0, high = runs.count
        while low < high {
            let middle = (low + high) / 2
            if let last = runs[middle].entries.last, !isAtOrPast(last) { low = middle + 1 } else { high = middle }
        }
        guard low < runs.count else { return (runs.count, 0) }
        let entries = runs[low].entries
        var first = 0, last = entries.count
        while first < last {
            let middle = (first + last) / 2
            if isAtOrPast(entries[middle]) { last = middle } else { first = middle + 1 }
        }
        return (low, first)
    }

    /// The keys of the entries from `start` up to (not including) `end`, in entry order.
    func keys(from start: Position, to end: Position) -> [UInt64] {
        var result: [UInt64] = []
        var (index, position) = start
        while (index, position) < end, index < runs.count {
            let entries = runs[index].entries
            let stop = index == end.run ? min(end.entry, entries.count) : entries.count
            if position < stop { result += entries[position..<stop].lazy.map(\.key) }
            index += 1
            position = 0
        }
        return result
    }

    /// How many entries lie from `start` up to (not including) `end`, without reading them.
    func count(from start: Position, to end: Position) -> Int {
        guard start < end else { return 0 }
        if start.run == end.run { return end.entry - start.entry }
        var total = runs[start.run].entries.count - start.entry + (end.run < runs.count ? end.entry : 0)
        for index in (start.run + 1)..<min(end.run, runs.count) { total += runs[index].entries.count }
        return total
    }

    /// The run an entry belongs in: the first whose last entry is not before it (the last run
    /// when every entry is before it).
    private func runIndex(for entry: Entry) -> Int {
        var low = 0, high = runs.count
        while low < high {
            let middle = (low + high) / 2
            if let last = runs[middle].entries.last, Entry.precedes(last, entry) { low = middle + 1 } else { high = middle }
        }
        return min(low, max(runs.count - 1, 0))
    }

    private mutating func uniqueRun(_ index: Int) -> Run {
        if !isKnownUniquelyReferenced(&runs[index]) { runs[index] = Run(runs[index].entries) }
        return runs[index]
    }

    private static func insertionPoint(_ entries: [Entry], _ entry: Entry) -> Int {
        var low = 0, high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if Entry.precedes(entries[middle], entry) { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
