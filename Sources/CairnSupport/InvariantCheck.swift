/// A broken rule of a structure, found by its `checkInvariants()`: which structure, which rule.
@usableFromInline
package struct InvariantViolation: Error, CustomStringConvertible, Sendable {
    /// The structure whose rule is broken.
    package var structure: String
    /// The rule, and how it is broken.
    package var rule: String

    package init(_ structure: String, _ rule: String) {
        self.structure = structure
        self.rule = rule
    }

    @usableFromInline
    package var description: String { "\(structure): \(rule)" }
}

/// Throws an ``InvariantViolation`` of `structure` unless `condition` holds.
@inline(__always)
package func require(_ condition: Bool, _ structure: @autoclosure () -> String, _ rule: @autoclosure () -> String) throws(InvariantViolation) {
    if !condition { throw InvariantViolation(structure(), rule()) }
}

/// Whether the build checks structures' invariants after their mutations: set by building
/// with `CAIRN_INTERNAL_CHECKS=1` in the environment (the test command does), off otherwise.
#if CAIRN_INTERNAL_CHECKS
    package let internalChecksEnabled = true
#else
    package let internalChecksEnabled = false
#endif

/// Runs `check` after a mutation when internal checks are compiled in, and stops the process
/// with the broken rule when it throws; compiled to nothing otherwise. A broken invariant is a
/// bug in Cairn, never a consequence of input. Inlinable, so that a release build's callers
/// keep no call and no closure (the check itself is compiled in or out with this module).
@inlinable
package func checkAfterMutation(_ check: () throws(InvariantViolation) -> Void) {
    #if CAIRN_INTERNAL_CHECKS
        do { try check() } catch { preconditionFailure("invariant broken: \(error)") }
    #endif
}
