/// The changes between two states of fetched results, from what changed in their flat lists
/// (sections one after the other): items gone, items new, and items in both that may have moved.
/// Items not listed kept their order relative to one another (their values did not change).
struct ResultDiff {
    /// An item in both lists.
    struct Kept {
        var id: ObjectID
        var old: Int
        var new: Int
        /// Items not listed before it, in the old and new lists.
        var gapOld: Int
        var gapNew: Int
        /// Whether its section's value differs.
        var changedSection: Bool
        /// Whether the save changed it (or what its predicate or sort keys read).
        var changed: Bool
    }

    var deleted: [(id: ObjectID, old: Int)] = []
    var inserted: [(id: ObjectID, new: Int)] = []
    var kept: [Kept] = []

    /// The change set, the old and new sections given by their values and counts (in order);
    /// `same` tells whether two section values are the same section.
    func changes(
        oldSections: [FetchedSection], newSections: [FetchedSection], same: (Value, Value) -> Bool, precedes: (Value, Value) -> Bool
    ) -> (FetchedChanges, CollectionDifference<ObjectID>) {
        var changes = FetchedChanges()
        // Sections: both lists are in the same order; a merge walk pairs the equal ones.
        var o = 0, n = 0
        while o < oldSections.count || n < newSections.count {
            if o < oldSections.count, n < newSections.count, same(oldSections[o].value, newSections[n].value) {
                o += 1
                n += 1
            } else if n >= newSections.count || (o < oldSections.count && precedes(oldSections[o].value, newSections[n].value)) {
                changes.deletedSections.append(o)
                o += 1
            } else {
                changes.insertedSections.append(n)
                n += 1
            }
        }
        let oldPlaces = Places(oldSections), newPlaces = Places(newSections)
        changes.deleted = deleted.sorted { $0.old < $1.old }.map { FetchedItem(id: $0.id, place: oldPlaces.place($0.old)) }
        changes.inserted = inserted.sorted { $0.new < $1.new }.map { FetchedItem(id: $0.id, place: newPlaces.place($0.new)) }
        // An item stays when its place among the unlisted items and its section are the same,
        // and it keeps its order among the others that stay in its gap; the rest move.
        var staying = Set<ObjectID>()
        var byGap: [Int: [Kept]] = [:]
        for item in kept where item.gapOld == item.gapNew && !item.changedSection { byGap[item.gapOld, default: []].append(item) }
        for group in byGap.values { staying.formUnion(Self.longestIncreasing(group.sorted { $0.old < $1.old }).map(\.id)) }
        for item in kept.sorted(by: { $0.old < $1.old }) {
            if staying.contains(item.id) {
                if item.changed { changes.updated.append(FetchedItem(id: item.id, place: oldPlaces.place(item.old))) }
            } else {
                changes.moved.append(FetchedChanges.Move(id: item.id, from: oldPlaces.place(item.old), to: newPlaces.place(item.new)))
            }
        }
        var steps: [CollectionDifference<ObjectID>.Change] = []
        for item in deleted { steps.append(.remove(offset: item.old, element: item.id, associatedWith: nil)) }
        for item in inserted { steps.append(.insert(offset: item.new, element: item.id, associatedWith: nil)) }
        for move in kept where !staying.contains(move.id) {
            steps.append(.remove(offset: move.old, element: move.id, associatedWith: move.new))
            steps.append(.insert(offset: move.new, element: move.id, associatedWith: move.old))
        }
        // (The steps are made from two lists, so they are consistent; an empty difference
        // stands in should they not be.)
        return (changes, CollectionDifference(steps) ?? Self.none)
    }

    /// A difference that changes nothing.
    static var none: CollectionDifference<ObjectID> {
        [ObjectID]().difference(from: [])
    }

    /// The longest run of `items` (in old order) whose new places increase.
    private static func longestIncreasing(_ items: [Kept]) -> [Kept] {
        var tails: [Int] = []  // index into items of the smallest tail of each length
        var previous = [Int](repeating: -1, count: items.count)
        for (index, item) in items.enumerated() {
            var low = 0, high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if items[tails[middle]].new < item.new { low = middle + 1 } else { high = middle }
            }
            if low > 0 { previous[index] = tails[low - 1] }
            if low == tails.count { tails.append(index) } else { tails[low] = index }
        }
        var result: [Kept] = []
        var index = tails.last ?? -1
        while index >= 0 {
            result.append(items[index])
            index = previous[index]
        }
        return result.reversed()
    }

    /// Index paths of flat indexes, from the sections' counts.
    struct Places {
        /// Each section's first flat index.
        let starts: [Int]

        init(_ sections: [FetchedSection]) {
            var start = 0
            starts = sections.map { section in
                defer { start += section.count }
                return start
            }
        }

        func place(_ flat: Int) -> FetchedIndexPath {
            var low = 0, high = starts.count
            while low < high {
                let middle = (low + high) / 2
                if starts[middle] <= flat { low = middle + 1 } else { high = middle }
            }
            let section = max(0, low - 1)
            return FetchedIndexPath(item: flat - (starts.isEmpty ? 0 : starts[section]), section: section)
        }
    }
}
