import Foundation

/// The permanent identity of an object in a store: its entity and a number the store gave it.
///
/// Stable across reopening. ``uri(storeID:)`` gives a text form that round-trips through
/// ``Store/objectID(forURI:)``.
public struct ObjectID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The index of the object's entity in its model (``Model/entities`` sorted by name).
    public let entity: Int
    /// The number the store gave the object; unique in the store.
    public let key: UInt64

    init(entity: Int, key: UInt64) {
        self.entity = entity
        self.key = key
    }

    public static func < (lhs: ObjectID, rhs: ObjectID) -> Bool {
        (lhs.entity, lhs.key) < (rhs.entity, rhs.key)
    }

    public var description: String { "\(entity):\(key)" }
}
