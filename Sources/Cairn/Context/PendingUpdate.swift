/// An existing object's unsaved changes in a context.
struct PendingUpdate: Sendable {
    /// The changed properties, by position.
    private(set) var values = PropertyChanges()
    /// The committed record the changes were made to: in a root context, a save checks it
    /// against the latest for conflicts (none when nil: a child's changes, whose parent checks
    /// them when it saves, or an object a save found gone).
    private(set) var original: ObjectRecord?
    /// Positions (below 64) whose new value was compared with `original`'s when it was set,
    /// and of those, the ones found equal: a save finding the object still at `original`'s
    /// version then knows which values change without reading its row (read a while after it
    /// was changed, nearly every row of a large save is a cache miss).
    private var compared: UInt64 = 0
    private var equal: UInt64 = 0

    /// Changes made to `original` (nil: none known).
    init(values: PropertyChanges = PropertyChanges(), original: ObjectRecord? = nil) {
        self.values = values
        self.original = original
    }

    /// Sets the value at `position`, comparing it with the original's (read while it is in the
    /// cache, most often: a context sets a value of an object it has just read).
    mutating func set(_ position: Int, _ value: PropertyValue) {
        values[position] = value
        guard position < 64 else { return }
        let bit: UInt64 = 1 << UInt64(position)
        guard let original else {
            compared &= ~bit
            return
        }
        compared |= bit
        if original.value(position) == value { equal |= bit } else { equal &= ~bit }
    }

    /// Adds `newer` changes (a child's, saved into this context), not compared with the original.
    mutating func merge(_ newer: PropertyChanges) {
        values.merge(newer)
        for (position, _) in newer where position < 64 { compared &= ~(1 << UInt64(position)) }
    }

    /// Drops the changes for which `isIncluded` is false (and what was compared of them).
    mutating func keepChanges(where isIncluded: ((key: Int, value: PropertyValue)) -> Bool) {
        let kept = values.filtered(isIncluded)
        for (position, _) in values where position < 64 && kept[position] == nil { compared &= ~(1 << UInt64(position)) }
        values = kept
    }

    /// Whether the value at `position` equals the original's, when that was found as it was
    /// set (nil: not known, read the row).
    func equalsOriginal(at position: Int) -> Bool? {
        guard position < 64, compared & (1 << UInt64(position)) != 0 else { return nil }
        return equal & (1 << UInt64(position)) != 0
    }
}
