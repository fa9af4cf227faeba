import CairnSupport

/// The keys of the objects a ``HashIndex`` files under one hash, in ascending order, without
/// duplicates. Persistent: the keys live in runs of at most ``Tuning/postingRunLimit`` (arrays shared between
/// snapshots), so that a save that changes the list copies one run and the list of runs, never
/// every key; reading the list is a walk over a few arrays, already in the objects' order.
struct PostingList: Sendable {
    /// The most keys a run holds; a run that grows beyond it splits in two.

    /// Non-empty runs, each ascending, each run's keys all below the next run's. (Internal,
    /// not private, only so that the tests can damage it and see ``checkInvariants()`` fail.)
    var runs: [[UInt64]] = []
    /// How many keys.
    private(set) var count = 0

    /// A list of these keys (ascending, no duplicates).
    init(sorted keys: [UInt64]) {
        runs = stride(from: 0, to: keys.count, by: Tuning.postingRunLimit).map { Array(keys[$0..<min(keys.count, $0 + Tuning.postingRunLimit)]) }
        count = keys.count
    }

    /// The smallest key.
    var first: UInt64? { runs.first?.first }

    /// The run a key belongs in: the first whose last key is not below it (the last run when
    /// every key is below it).
    private func runIndex(for key: UInt64) -> Int {
        var low = 0, high = runs.count
        while low < high {
            let middle = (low + high) / 2
            if let last = runs[middle].last, last < key { low = middle + 1 } else { high = middle }
        }
        return min(low, runs.count - 1)
    }

    /// Where `key` is, or would go, in a run.
    private static func position(of key: UInt64, in run: [UInt64]) -> Int {
        var low = 0, high = run.count
        while low < high {
            let middle = (low + high) / 2
            if run[middle] < key { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Adds a key (nothing when it is there already).
    mutating func insert(_ key: UInt64) {
        guard !runs.isEmpty else { runs = [[key]]; count = 1; return }
        let index = runIndex(for: key)
        let position = Self.position(of: key, in: runs[index])
        guard position == runs[index].count || runs[index][position] != key else { return }
        runs[index].insert(key, at: position)
        count += 1
        if runs[index].count > Tuning.postingRunLimit {
            let upper = Array(runs[index][(Tuning.postingRunLimit / 2)...])
            runs[index].removeSubrange((Tuning.postingRunLimit / 2)...)
            runs.insert(upper, at: index + 1)
        }
        checkAfterMutation { () throws(InvariantViolation) in try checkInvariants(around: index) }
    }

    /// Removes a key (nothing when it is not there).
    mutating func remove(_ key: UInt64) {
        guard !runs.isEmpty else { return }
        let index = runIndex(for: key)
        let position = Self.position(of: key, in: runs[index])
        guard position < runs[index].count, runs[index][position] == key else { return }
        runs[index].remove(at: position)
        count -= 1
        if runs[index].isEmpty { runs.remove(at: index) }
        checkAfterMutation { () throws(InvariantViolation) in try checkInvariants(around: index) }
    }

    /// The keys in ascending order.
    var keys: [UInt64] { Array(runs.joined()) }

    /// Appends the objects of these keys, of one entity, in order.
    func appendObjects(of entity: Int, to ids: inout [ObjectID]) {
        if ids.capacity < ids.count + count { ids.reserveCapacity(max(ids.count + count, 2 * ids.capacity)) }
        for run in runs {
            for key in run { ids.append(ObjectID(entity: entity, key: key)) }
        }
    }

    /// Checks the list's rules: every run non-empty and within ``Tuning/postingRunLimit``, keys ascending
    /// within and across runs, and ``count`` their number.
    func checkInvariants() throws(InvariantViolation) {
        var previous: UInt64?
        var total = 0
        for (index, run) in runs.enumerated() {
            try require(!run.isEmpty && run.count <= Tuning.postingRunLimit, "PostingList", "run \(index) holds \(run.count) keys")
            for key in run {
                if let previous { try require(previous < key, "PostingList", "key \(key) follows \(previous)") }
                previous = key
            }
            total += run.count
        }
        try require(total == count, "PostingList", "count \(count), \(total) keys in the runs")
    }

    /// After a change at run `index`: the whole list while it is small, else the runs around
    /// it (a check per change that stays proportional to the change).
    private func checkInvariants(around index: Int) throws(InvariantViolation) {
        if count <= Tuning.postingRunLimit * 8 { return try checkInvariants() }
        let range = max(0, index - 1)..<min(runs.count, index + 2)
        var previous: UInt64?
        for run in runs[range] {
            try require(!run.isEmpty && run.count <= Tuning.postingRunLimit, "PostingList", "a run holds \(run.count) keys")
            for key in run {
                if let previous { try require(previous < key, "PostingList", "key \(key) follows \(previous)") }
                previous = key
            }
        }
    }
}
