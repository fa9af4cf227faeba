/// The value of one property of an object: an attribute's value, or the object(s) a
/// relationship points to.
public enum PropertyValue: Sendable, Hashable {
    /// An attribute's value.
    case attribute(Value)
    /// The object a to-one relationship points to, or nil.
    case toOne(ObjectID?)
    /// The objects of a to-many relationship (in order for an ordered one; sorted otherwise).
    case toMany([ObjectID])

    /// The objects this value points to.
    package var targets: [ObjectID] {
        switch self {
        case .attribute: []
        case .toOne(let id): id.map { [$0] } ?? []
        case .toMany(let ids): ids
        }
    }
}
