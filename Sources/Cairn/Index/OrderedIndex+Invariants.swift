import CairnSupport

// The rules of an ordered index, checked after every change when `CAIRN_INTERNAL_CHECKS` is
// set: around the run the change touched, or the whole index while it is small.

extension OrderedIndex {
    /// Checks every rule of the index: no run empty or past ``Tuning/orderedChunkLimit``;
    /// entries in strictly ascending order (``OrderedEntry/precedes(_:_:)``) within and across
    /// runs; no nil value filed; `count` is the number of entries.
    func checkInvariants() throws(InvariantViolation) {
        try checkRuns { 0..<$0 }
    }

    /// Checks the index after a change that replaced the runs at `replaced`: the count; those
    /// runs whole, and their boundaries with the runs on either side (the whole index while it
    /// is small).
    func checkInvariants(runs replaced: Range<Int>) throws(InvariantViolation) {
        if count <= Tuning.wholeCheckLimit { return try checkInvariants() }
        try checkRuns { max(0, replaced.lowerBound - 1)..<min($0, replaced.upperBound) }
    }

    /// Checks the index after a change at `position`: the count; the sizes and boundaries of
    /// the runs around it; the order of the entries near it (the whole index while it is small).
    func checkInvariants(around position: (run: Int, entry: Int)) throws(InvariantViolation) {
        if count <= Tuning.wholeCheckLimit { return try checkInvariants() }
        try checkRuns(near: position.entry) { max(0, position.run - 1)..<min($0, position.run + 2) }
    }

    /// Checks the count, and the runs `picked` chooses from the number of runs (the order of
    /// the entries near `entry` in each when given, else all of them; no nil value filed).
    private func checkRuns(near entry: Int? = nil, _ picked: (Int) -> Range<Int>) throws(InvariantViolation) {
        switch storage {
        case .packed(_, let runs): try runs.checkRuns(picked(runs.runs.count), near: entry)
        case .values(let runs):
            let range = picked(runs.runs.count)
            try runs.checkRuns(range, near: entry)
            for run in runs.runs[range] {
                for entry in run.entries { try require(entry.value != .null, "OrderedIndex", "object \(entry.key) is filed under nil") }
            }
        }
    }
}

extension OrderedRuns {
    fileprivate func checkRuns(_ range: Range<Int>, near position: Int? = nil) throws(InvariantViolation) {
        let total = runs.reduce(0) { $0 + $1.entries.count }
        try require(total == count, "OrderedIndex", "count is \(count), the runs hold \(total) entries")
        for index in range {
            let all = runs[index].entries
            try require(!all.isEmpty && all.count <= Tuning.orderedChunkLimit, "OrderedIndex", "run \(index) holds \(all.count) entries")
            let entries = position.map { all[max(0, min($0, all.count) - 2)..<min(all.count, $0 + 2)] } ?? all[...]
            for (before, after) in zip(entries, entries.dropFirst()) {
                try require(Entry.precedes(before, after), "OrderedIndex", "run \(index): object \(before.key) does not precede object \(after.key)")
            }
            if index + 1 < runs.count, let last = all.last, let next = runs[index + 1].entries.first {
                try require(Entry.precedes(last, next), "OrderedIndex", "the last entry of run \(index) does not precede the next run's first")
            }
        }
    }
}
