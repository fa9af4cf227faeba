import Foundation
import Synchronization

/// The check, compiled in with `CAIRN_INTERNAL_CHECKS`, that a typed object is used by one
/// thread at a time.
///
/// An object stays in its context's isolation: reading a property updates what the object keeps
/// of its context's view, so two threads using one object at once race even when both only
/// read. The compiler refuses to send an object to another task (the class is not `Sendable`);
/// what escapes it (`nonisolated(unsafe)`, an `@unchecked Sendable` wrapper, a C callback) is
/// caught here: a thread that finds the object in use by another reports the misuse (to
/// ``ManagedModelProblems``, naming the class and the property) and waits for the other to
/// finish, so that the run goes on without the race.
@usableFromInline
final class ConcurrentUseCheck: @unchecked Sendable {
    // Safety: `depth` is read and written only by the thread that `holder` names.

    /// The thread using the object (0: none).
    private let holder = Atomic<UInt>(0)
    /// How many accesses of that thread are under way (a getter that reads another property of
    /// the same object, through an initializer or a `deinit`).
    private var depth = 0

    @usableFromInline
    init() {}

    /// Marks the start of a use of the object by this thread; reports and waits when another
    /// thread is using it.
    @usableFromInline
    func enter(_ type: Any.Type, _ ordinal: Int, schema: ManagedSchema) {
        let me = UInt(bitPattern: Int(bitPattern: pthread_self()))
        if holder.load(ordering: .acquiring) == me {
            depth += 1
            return
        }
        var reported = false
        while !holder.compareExchange(expected: 0, desired: me, ordering: .acquiring).exchanged {
            if !reported {
                reported = true
                let name = schema.properties.indices.contains(ordinal) ? schema.properties[ordinal].name : "#\(ordinal)"
                ManagedModelProblems.report(
                    "misuse: \(type).\(name) was used by two threads at once: an object stays in its context's isolation "
                        + "(pass its persistentModelID to another task and read the object there with model(for:as:))")
            }
            sched_yield()
        }
        depth = 1
    }

    /// Marks the end of the use ``enter(_:_:schema:)`` began.
    @usableFromInline
    func leave() {
        depth -= 1
        if depth == 0 { holder.store(0, ordering: .releasing) }
    }
}
