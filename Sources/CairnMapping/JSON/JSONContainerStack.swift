import CairnSupport

/// The open arrays and objects of a JSON scan, innermost last: one bit each (set for an object),
/// the first 64 in one word and any deeper in an array, so that reading a token at the depths
/// real input has touches no array (and no reference count).
///
/// Its stored properties are internal so that a test can damage them (`InvariantCheckTests`);
/// only its methods change them.
struct JSONContainerStack: Equatable {
    /// How many are open.
    var count = 0
    /// Bit `i`: whether container `i` (0: the outermost) is an object, for `i` below 64; the
    /// bits from `count` up are clear.
    var shallow: UInt64 = 0
    /// Containers 64 and deeper.
    var deep: [Bool] = []

    /// Whether none is open.
    var isEmpty: Bool { count == 0 }

    /// Whether the innermost is an object (false when none is open).
    var innermostIsObject: Bool {
        guard count > 0 else { return false }
        return count <= 64 ? (shallow >> UInt64(count - 1)) & 1 == 1 : deep[count - 65]
    }

    /// Opens a container.
    mutating func push(isObject: Bool) {
        if count < 64 {
            if isObject { shallow |= 1 << UInt64(count) }
        } else {
            deep.append(isObject)
        }
        count += 1
        checkAfterMutation { () throws(InvariantViolation) in try checkInvariants() }
    }

    /// Closes the innermost container, if one is open; whether it was an object.
    @discardableResult
    mutating func pop() -> Bool {
        guard count > 0 else { return false }
        let wasObject = innermostIsObject
        count -= 1
        if count < 64 {
            shallow &= ~(1 << UInt64(count))
        } else {
            deep.removeLast()
        }
        checkAfterMutation { () throws(InvariantViolation) in try checkInvariants() }
        return wasObject
    }

    /// The rules the stack keeps: the containers past the first 64 in `deep`, one each, and
    /// no bit set in `shallow` at or past `count` (so that equal stacks compare equal).
    func checkInvariants() throws(InvariantViolation) {
        try require(count >= 0 && deep.count == max(0, count - 64), "JSONContainerStack", "\(deep.count) deep containers for \(count) open")
        try require(count >= 64 || shallow >> UInt64(count) == 0, "JSONContainerStack", "a bit set past the \(count) open containers")
    }
}
