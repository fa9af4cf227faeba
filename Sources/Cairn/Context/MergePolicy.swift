/// How a save resolves conflicts with saves made since its context's snapshot (an object it
/// changed was changed or deleted by another save in between). Named as in Core Data.
///
/// The policies merge attributes. A conflict that involves a relationship with an inverse (either
/// side changed it), a delete that the policy would drop, or an update that links objects to one
/// another save deleted is always refused with ``StoreError/Code/mergeConflict``: resolving one
/// end of a relationship on its own would leave the other end disagreeing. Refetch and redo such
/// a change.
public enum MergePolicy: Sendable, Hashable {
    /// Fail the save with ``StoreError/Code/mergeConflict`` listing the objects (the default).
    case error
    /// Property by property: the context's changed properties win; the store's other changes stay.
    case mergeByPropertyObjectTrump
    /// Property by property: where both changed a property the store's value wins; the
    /// context's changes to other properties are saved.
    case mergeByPropertyStoreTrump
    /// The context's whole view of each object overwrites the store's.
    case overwrite
    /// The context's changes to conflicting objects are dropped.
    case rollback
}
