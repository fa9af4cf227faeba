import CairnLog

/// An object's committed state: its values (as a compact ``Row``), and the LSN of the save
/// that last changed it (used to detect conflicting saves).
struct ObjectRecord: Sendable {
    var row: Row
    var version: LSN
    /// The object's entity (by index).
    var entity: Int

    /// Every value, decoded.
    var values: [PropertyValue] { row.values }

    /// One value, decoded.
    func value(_ position: Int) -> PropertyValue { row.value(position) }
}

/// A key of a uniqueness index: the constraint and the values of its attributes.
struct UniqueKey: Hashable, Sendable {
    var owner: Int
    var number: Int
    var values: [Value]
}
