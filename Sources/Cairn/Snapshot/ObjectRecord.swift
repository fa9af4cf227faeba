import CairnLog

/// An object's committed state: one value per property, and the LSN of the save that last
/// changed it (used to detect conflicting saves).
struct ObjectRecord: Sendable, Equatable {
    var values: [PropertyValue]
    var version: LSN
}

/// A key of a uniqueness index: the constraint and the values of its attributes.
struct UniqueKey: Hashable, Sendable {
    var owner: Int
    var number: Int
    var values: [Value]
}
