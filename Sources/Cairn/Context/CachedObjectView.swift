/// A copy of what an object's context reads for it, its values decoded, kept by the one who
/// reads it (a typed object, which stays in its context's isolation) and used for as long as
/// the context's ``ViewVersion`` says that nothing the context reads has changed: a read then
/// takes no lock, looks nothing up and decodes nothing. (Core Data's row cache, per object.)
@usableFromInline
package struct CachedObjectView {
    /// The version the values were read at; nil before the first read.
    private var version: UInt64?
    /// The values read then, by position (nil: the object did not exist in its context, or the
    /// context was gone).
    private var values: [PropertyValue]?

    @usableFromInline
    package init() {}

    /// Reads the values of `object` again when its context changed since the last read.
    private mutating func refresh(_ object: ManagedObject) {
        // The version is noted before the read: a change made during it shows as a newer one.
        let now = object.viewVersion.current
        guard version != now else { return }
        values = object.context?.view(of: object.objectID)?.allValues
        version = now
    }

    /// The stored value of attribute `position` of `object` in its context; nil when the
    /// object was deleted or its context is gone.
    @usableFromInline
    package mutating func attributeValue(of object: ManagedObject, at position: Int) -> Value? {
        refresh(object)
        guard let count = values?.count, position >= 0, position < count else { return nil }
        if case .attribute(let value)? = values?[position] { return value }
        return .null
    }

    /// The objects relationship `index` of `object` points to; nil when the object was deleted
    /// or its context is gone.
    package mutating func targets(of object: ManagedObject, relationship index: Int) -> [ObjectID]? {
        refresh(object)
        let position = object.entity.attributes.count + index
        guard let count = values?.count, position >= 0, position < count else { return nil }
        return values?[position].targets
    }
}
