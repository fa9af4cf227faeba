/// A place in fetched results: a section and an item in it (UIKit's `IndexPath(item:section:)`).
public struct FetchedIndexPath: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The section's index.
    public var section: Int
    /// The item's index in its section.
    public var item: Int

    /// The place of item `item` of section `section`.
    public init(item: Int, section: Int) {
        self.item = item
        self.section = section
    }

    /// Orders by section, then by item.
    public static func < (a: FetchedIndexPath, b: FetchedIndexPath) -> Bool { (a.section, a.item) < (b.section, b.item) }

    /// The path as `[section, item]`.
    public var description: String { "[\(section), \(item)]" }
}

/// One object's place in fetched results.
public struct FetchedItem: Sendable, Hashable {
    /// The object.
    public var id: ObjectID
    /// Its place (old or new: as the list holding it says).
    public var place: FetchedIndexPath
}

/// What one save changed in fetched results, as a table or collection view applies it (Core
/// Data's fetched results controller's delegate calls, gathered): sections and items deleted at
/// their old places, inserted at their new ones, moved from old to new, and updated in place.
///
/// To apply it by hand (``apply(to:)`` does): remove the deleted items and the moved items from
/// their old places, then the deleted sections (old indexes); insert the inserted sections (new
/// indexes), then the inserted items and the moved items at their new places, in ascending
/// order. Updated items stay where they are (their old places) and show new values. The items
/// of a deleted section are listed among the deleted items, those of an inserted one among the
/// inserted items.
public struct FetchedChanges: Sendable, Equatable {
    /// Sections gone, by their old index, ascending.
    public var deletedSections: [Int] = []
    /// Sections new, by their new index, ascending.
    public var insertedSections: [Int] = []
    /// Items gone, at their old places, ascending.
    public var deleted: [FetchedItem] = []
    /// Items new, at their new places, ascending.
    public var inserted: [FetchedItem] = []
    /// Items that moved (their values may have changed too), by old place.
    public var moved: [Move] = []
    /// Items whose values changed and that kept their place, at their old places, ascending.
    public var updated: [FetchedItem] = []

    /// One item's move.
    public struct Move: Sendable, Hashable {
        /// The object.
        public var id: ObjectID
        /// Its old place.
        public var from: FetchedIndexPath
        /// Its new place.
        public var to: FetchedIndexPath
    }

    /// Whether nothing changed.
    public var isEmpty: Bool {
        deletedSections.isEmpty && insertedSections.isEmpty && deleted.isEmpty && inserted.isEmpty && moved.isEmpty && updated.isEmpty
    }

    /// The sections of IDs that `old` becomes under these changes (what a table view shows after
    /// it applies them); nil when they do not apply to `old` (a place out of range, or another
    /// object at a deleted or moved item's place).
    public func apply(to old: [[ObjectID]]) -> [[ObjectID]]? {
        var sections = old.map { $0.map { Optional($0) } }
        for (id, place) in deleted.map({ ($0.id, $0.place) }) + moved.map({ ($0.id, $0.from) }) {
            guard sections.indices.contains(place.section), sections[place.section].indices.contains(place.item),
                sections[place.section][place.item] == id
            else { return nil }
            sections[place.section][place.item] = nil
        }
        var remaining = sections.map { $0.compactMap { $0 } }
        for section in deletedSections.sorted(by: >) {
            guard remaining.indices.contains(section) else { return nil }
            remaining.remove(at: section)
        }
        for section in insertedSections.sorted() {
            guard section >= 0, section <= remaining.count else { return nil }
            remaining.insert([], at: section)
        }
        let arriving = (inserted.map { ($0.place, $0.id) } + moved.map { ($0.to, $0.id) }).sorted { $0.0 < $1.0 }
        for (place, id) in arriving {
            guard remaining.indices.contains(place.section), place.item >= 0, place.item <= remaining[place.section].count else { return nil }
            remaining[place.section].insert(id, at: place.item)
        }
        return remaining
    }
}
