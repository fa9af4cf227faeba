import CairnSupport

/// A copy of what an object's context reads for it, kept by the one who reads it (a typed
/// object, which stays in its context's isolation) and used for as long as the context's
/// ``ViewVersion`` says that nothing the context reads has changed: a read then takes no lock
/// and looks nothing up. (Core Data's row cache, per object.)
///
/// A row of up to ``decodedRowLimit`` bytes is kept decoded, so that reading its properties one
/// after the other decodes each value once; a longer one (a large text or binary value) is kept
/// as it is stored and each read decodes the value it asks for.
@usableFromInline
package struct CachedObjectView {
    /// The longest stored row kept decoded.
    static let decodedRowLimit = 1024

    /// The version the values were read at; `UInt64.max` before the first read (a sum of
    /// counts never reaches it).
    private var version = UInt64.max
    /// The values read then, by position, decoded (a short row, or a new object's values).
    private var values: [PropertyValue]?
    /// Or the view read then (a long row; boxed, so that a typed object does not carry a
    /// view's room inline). Both nil: the object did not exist in its context, or the context
    /// was gone.
    private var long: LongRow?

    /// A long row's view.
    private final class LongRow {
        let view: ObjectView
        init(_ view: ObjectView) { self.view = view }
    }

    @usableFromInline
    package init() {}

    /// Reads the values of `object` again when its context changed since the last read.
    private mutating func refresh(_ object: ManagedObject) {
        // The version is noted before the read: a change made during it shows as a newer one.
        let now = object.viewVersion.current
        guard version != now else {
            checkAfterMutation { () throws(InvariantViolation) in try checkInvariants(object, at: now) }
            return
        }
        let read = object.context?.view(of: object.objectID)
        if let read, read.storedLength > Self.decodedRowLimit {
            (values, long) = (nil, LongRow(read.detached))
        } else {
            (values, long) = (read?.allValues, nil)
        }
        version = now
    }

    /// Checks the rule the cache rests on: at the same version, the context reads the same
    /// values (every change to what it reads bumps its ``ViewVersion``). A change made while the
    /// check reads shows as a newer version, and the check then has nothing to compare.
    private func checkInvariants(_ object: ManagedObject, at now: UInt64) throws(InvariantViolation) {
        // (A context being let go of reads as gone before its deinit bumps its version.)
        guard let context = object.context else { return }
        let fresh = context.view(of: object.objectID)?.allValues
        guard object.viewVersion.current == now else { return }
        try require(
            fresh == (values ?? long?.view.allValues), "CachedObjectView",
            "\(object.entity.name) \(object.objectID): the values kept at view version \(now) differ from what its context reads at that version")
    }

    /// Value `position` as read at the last refresh; nil when the object did not exist.
    private func value(at position: Int) -> PropertyValue? {
        guard position >= 0 else { return nil }
        if let count = values?.count { return position < count ? values?[position] : nil }
        guard let view = long?.view, position < view.count else { return nil }
        return view[position]
    }

    /// The stored value of attribute `position` of `object` in its context; nil when the
    /// object was deleted or its context is gone.
    @usableFromInline
    package mutating func attributeValue(of object: ManagedObject, at position: Int) -> Value? {
        refresh(object)
        guard let value = value(at: position) else { return nil }
        if case .attribute(let stored) = value { return stored }
        return .null
    }

    /// The stored values of attributes `positions` of `object` in its context, read at one
    /// version (a composite's elements: none from before a change and another from after);
    /// nil when the object was deleted or its context is gone.
    package mutating func attributeValues(of object: ManagedObject, at positions: [Int]) -> [Value]? {
        refresh(object)
        var stored: [Value] = []
        stored.reserveCapacity(positions.count)
        for position in positions {
            guard let value = value(at: position) else { return nil }
            if case .attribute(let attribute) = value { stored.append(attribute) } else { stored.append(.null) }
        }
        return stored
    }

    /// The objects relationship `index` of `object` points to; nil when the object was deleted
    /// or its context is gone.
    package mutating func targets(of object: ManagedObject, relationship index: Int) -> [ObjectID]? {
        refresh(object)
        return value(at: object.entity.attributes.count + index)?.targets
    }
}
