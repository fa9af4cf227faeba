import CairnLog

/// A fetch's results at one save, in sections (``FetchedResultsController/results``): what a
/// table view's data source reads. A value: it does not change when later saves do (the next
/// one comes with their ``FetchedResultsUpdate``), and copying it copies no IDs.
public struct FetchedResults: Sendable {
    /// The LSN of the last save the results include.
    public let lsn: LSN
    /// The sections, in order: one (named "") when the results have no section key; one per
    /// value of the section key otherwise (none when nothing matches).
    public let sections: [FetchedSection]
    /// Every match, in order (all of them, or the page the request or paging asks for).
    let list: OrderedIDList
    /// The range of ``list`` shown.
    let window: Range<Int>

    init(lsn: LSN, sections: [FetchedSection], list: OrderedIDList, window: Range<Int>) {
        self.lsn = lsn
        self.sections = sections
        self.list = list
        self.window = window
    }

    /// How many objects the results show.
    public var count: Int { window.count }

    /// The IDs of the objects, in order (the sections' one after the other).
    public var objectIDs: [ObjectID] { list.ids(window) }

    /// The IDs of section `section`'s objects, in order (none for a section that is not there).
    public func objectIDs(inSection section: Int) -> [ObjectID] {
        guard sections.indices.contains(section) else { return [] }
        let start = window.lowerBound + sections[..<section].reduce(0) { $0 + $1.count }
        return list.ids(start..<(start + sections[section].count))
    }

    /// The ID at `place`; nil when the results have no such place.
    public subscript(place: FetchedIndexPath) -> ObjectID? {
        guard sections.indices.contains(place.section), sections[place.section].count > place.item, place.item >= 0 else { return nil }
        let flat = sections[..<place.section].reduce(0) { $0 + $1.count } + place.item
        return list.ids((window.lowerBound + flat)..<(window.lowerBound + flat + 1)).first
    }

    /// The IDs by section (what ``FetchedChanges/apply(to:)`` takes).
    public var sectionedObjectIDs: [[ObjectID]] { sections.indices.map { objectIDs(inSection: $0) } }
}

/// One section of fetched results (Core Data's `NSFetchedResultsSectionInfo`).
public struct FetchedSection: Sendable, Hashable {
    /// Its name: the section key's value as text ("" for nil, and for results without a key).
    public var name: String
    /// The section key's value its objects share, as they are sorted by (folded for a
    /// case-insensitive key); `.null` for results without a section key.
    public var value: Value
    /// How many objects it holds.
    public var count: Int

    init(value: Value, count: Int) {
        self.value = value
        self.count = count
        switch value {
        case .null: name = ""
        case .string(let text): name = text
        case .integer(let number): name = String(number)
        default: name = "\(value)"
        }
    }
}

/// One change of fetched results: the results after a save, and what changed since the ones
/// before it.
public struct FetchedResultsUpdate: Sendable {
    /// The results now.
    public var results: FetchedResults
    /// What changed, as a table view applies it.
    public var changes: FetchedChanges
    /// The same changes on the list of IDs (sections one after the other), for code that keeps
    /// a plain list: `old.applying(difference)` is ``FetchedResults/objectIDs``.
    public var difference: CollectionDifference<ObjectID>
    /// Whether this is an observation's first update: the results as they were when it began,
    /// with no changes (show them whole).
    public var isInitial: Bool

    init(results: FetchedResults, changes: FetchedChanges, difference: CollectionDifference<ObjectID>) {
        self.results = results
        self.changes = changes
        self.difference = difference
        isInitial = false
    }

    /// An observation's first update: `results`, whole.
    init(initial results: FetchedResults) {
        self.results = results
        changes = FetchedChanges()
        difference = ResultDiff.none
        isInitial = true
    }
}
