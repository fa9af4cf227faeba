import Synchronization

/// Counts the changes that can alter what a context reads: the context's own unsaved changes
/// and snapshot, and, through ``next``, its parent's (and so on up) and the store's published
/// snapshot. The sum along the chain grows whenever any of them changes, so a reader that
/// notes it before reading an object knows its copy is still what the context reads for as
/// long as the sum stays the same (a typed object's cached view, read without the context's
/// lock).
package final class ViewVersion: Sendable {
    private let count = Atomic<UInt64>(0)
    /// The parent context's version, or the store's for a root context (nil for the store's).
    private let next: ViewVersion?

    init(next: ViewVersion?) { self.next = next }

    /// Notes a change (called after the change is made, under the lock that guards it).
    func bump() { count.wrappingAdd(1, ordering: .releasing) }

    /// The sum of the counts along the chain.
    package var current: UInt64 {
        // (Recursion through the `let`, not a loop over a local: no reference counting.)
        count.load(ordering: .acquiring) &+ (next?.current ?? 0)
    }
}
