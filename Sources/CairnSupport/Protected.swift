import Foundation

/// A value behind a lock, shared between threads and tasks.
///
/// It uses a pthread mutex (through `NSLock`) rather than `Synchronization.Mutex`: on Linux the
/// latter's futex-based lock is invisible to the thread sanitizer, which then reports every
/// access it guards as a race, and Cairn's concurrency tests must run clean under
/// `swift test --sanitize=thread`. Uncontended, both cost some tens of nanoseconds.
package final class Protected<Value>: @unchecked Sendable {
    // Safety: `value` is only touched inside `withLock`, which holds `lock` (so the dynamic
    // exclusivity check, a cost at every access, can go).
    @usableFromInline let lock = NSLock()
    @usableFromInline @exclusivity(unchecked) var value: Value

    /// Wraps `value`.
    package init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value. (Inlinable: specialized where it is
    /// called, for the value's and the result's types.)
    @inlinable
    package func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// A copy of the value.
    package var current: Value { withLock { $0 } }
}
