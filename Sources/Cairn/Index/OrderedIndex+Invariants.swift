import CairnSupport

// The rules of an ordered index, checked after every change when `CAIRN_INTERNAL_CHECKS` is
// set: around the run the change touched, or the whole index while it is small.

extension OrderedIndex {
    /// Checks every rule of the index: no run empty or past ``Tuning/orderedChunkLimit``;
    /// entries in strictly ascending order (``OrderedEntry/precedes(_:_:)``) within and across
    /// runs; no nil value filed; `count` is the number of entries.
    func checkInvariants() throws(InvariantViolation) {
        switch storage {
        case .packed(_, let runs): try runs.checkRuns(runs.runs.indices)
        case .values(let runs):
            try runs.checkRuns(runs.runs.indices)
            for run in runs.runs {
                for entry in run.entries { try require(entry.value != .null, "OrderedIndex", "object \(entry.key) is filed under nil") }
            }
        }
    }

    /// Checks the index after a change that replaced the runs at `replaced`: the count; those
    /// runs whole, and their boundaries with the runs on either side (the whole index while it
    /// is small).
    func checkInvariants(runs replaced: Range<Int>) throws(InvariantViolation) {
        if count <= Tuning.wholeCheckLimit { return try checkInvariants() }
        switch storage {
        case .packed(_, let runs): try runs.checkRuns(max(0, replaced.lowerBound - 1)..<min(runs.runs.count, replaced.upperBound))
        case .values(let runs):
            let around = max(0, replaced.lowerBound - 1)..<min(runs.runs.count, replaced.upperBound)
            try runs.checkRuns(around)
            for run in runs.runs[around] {
                for entry in run.entries { try require(entry.value != .null, "OrderedIndex", "object \(entry.key) is filed under nil") }
            }
        }
    }

    /// Checks the index after a change at `position`: the count; the sizes and boundaries of
    /// the runs around it; the order of the entries near it (the whole index while it is small).
    func checkInvariants(around position: (run: Int, entry: Int)) throws(InvariantViolation) {
        if count <= Tuning.wholeCheckLimit { return try checkInvariants() }
        switch storage {
        case .packed(_, let runs): try runs.checkRuns(max(0, position.run - 1)..<min(runs.runs.count, position.run + 2), near: position.entry)
        case .values(let runs):
            try runs.checkRuns(max(0, position.run - 1)..<min(runs.runs.count, position.run + 2), near: position.entry)
            for run in runs.runs[max(0, position.run - 1)..<min(runs.runs.count, position.run + 2)] {
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
