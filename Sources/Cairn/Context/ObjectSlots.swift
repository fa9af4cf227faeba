import CairnSupport

/// A context's pending objects of one kind, each with its value, in the order they were added:
/// the new objects with all their values (``InsertedObjects``), the changed ones with their
/// changes (``UpdatedObjects``).
///
/// The values are kept in slots of an array, in the order the objects were added; lookups by
/// ID go through a dictionary of slots (an ID and an index per object, a fraction of the values'
/// size). A context changing a hundred thousand objects
/// then writes each one's value once, at the end of the array, where a dictionary of values
/// would write it to a random place of a table several times its size (a cache miss per
/// object, and again at each growth); a save reads them in the same order. An import sets every
/// attribute of a new object one call at a time, and its ``ManagedObject`` remembers the slot:
/// a `setValue` writes there without hashing its ID (``InsertedObjects/setValue(_:at:slot:of:)``).
/// A save takes the list in ID order (``inIDOrder``): the order they were added when, as
/// usual, they were added by increasing ID (keys come from the store's counter, and an update
/// walks objects in order), sorted otherwise.
///
/// An object removed leaves an empty slot; the slots are packed once they are half empty, and
/// objects whose slot moved then take the lookup by ID.
struct ObjectSlots<Value: Sendable>: Sendable {
    /// The object of each slot, in the order they were added (a removed one stays until the
    /// slots are packed). Internal, not private, only so that the tests can damage it and see
    /// ``checkInvariants()`` fail.
    var ids: [ObjectID] = []
    /// The value of each slot; nil for a slot emptied by a removal.
    private var values: [Value?] = []
    private var slots: [ObjectID: Int] = [:]
    /// Whether every object added had a greater ID than those before it.
    private var isInIDOrder = true

    /// An empty list.
    init() {}

    /// The number of objects.
    var count: Int { slots.count }
    var isEmpty: Bool { slots.isEmpty }

    /// The slot the next object added takes.
    var nextSlot: Int { ids.count }

    /// The value of an object, or nil when it is not in the list; setting nil removes it.
    subscript(id: ObjectID) -> Value? {
        get { slots[id].flatMap { values[$0] } }
        set {
            if let slot = slots[id] {
                guard let newValue else { remove(slot); return }
                values[slot] = newValue
            } else if let newValue {
                add(id, newValue)
            }
        }
    }

    /// Whether the object is in the list.
    func contains(_ id: ObjectID) -> Bool { slots[id] != nil }

    /// Adds an object that is not in the list, in the next slot.
    mutating func add(_ id: ObjectID, _ value: consuming Value) {
        if let last = ids.last, !(last < id) { isInIDOrder = false }
        slots[id] = ids.count
        ids.append(id)
        values.append(consume value)
        checkAfterMutation { () throws(InvariantViolation) in try checkInvariants(slot: ids.count - 1) }
    }

    /// Changes the value of an object in place, adding it with `make()` first when it is not
    /// in the list (one lookup).
    mutating func change(_ id: ObjectID, orAdd make: () -> Value, _ body: (inout Value) -> Void) {
        if let slot = slots[id] {
            change(slot: slot, body)
        } else {
            var value = make()
            body(&value)
            add(id, consume value)
        }
    }

    /// Changes the value in `slot` in place (nothing when the slot is empty).
    private mutating func change(slot: Int, _ body: (inout Value) -> Void) {
        // The value is moved out and back, so that it is the only reference to its storage.
        guard var value = values[slot].take() else { return }
        body(&value)
        values[slot] = value
    }

    /// The slot of an object in the list.
    func slot(of id: ObjectID) -> Int? { slots[id] }

    /// Whether `slot` holds `id`'s value.
    func holds(_ id: ObjectID, slot: Int) -> Bool {
        slot >= 0 && slot < ids.count && ids[slot] == id && values[slot] != nil
    }

    /// Removes an object; returns its value (nil when it was not in the list).
    @discardableResult
    mutating func removeValue(forKey id: ObjectID) -> Value? {
        guard let slot = slots[id] else { return nil }
        defer { remove(slot) }
        return values[slot]
    }

    private mutating func remove(_ slot: Int) {
        slots[ids[slot]] = nil
        values[slot] = nil
        guard slots.count * 2 < ids.count else { return }
        // Half the slots are empty: pack them (objects whose slot moves find theirs by ID).
        var packed = ObjectSlots()
        for (id, value) in self { packed.add(id, value) }
        packed.isInIDOrder = isInIDOrder
        self = packed
        checkAfterMutation { () throws(InvariantViolation) in try checkInvariants() }
    }

    /// The objects with their values in ascending ID order (the order of a change record).
    var inIDOrder: [(key: ObjectID, value: Value)] {
        var all: [(key: ObjectID, value: Value)] = []
        all.reserveCapacity(count)
        forEachInIDOrder { all.append(($0, $1)) }
        return all
    }

    /// Calls `body` with each object and its value in ascending ID order.
    func forEachInIDOrder(_ body: (ObjectID, Value) throws -> Void) rethrows {
        try forEachSlotInIDOrder { id, slot in
            if let value = values[slot] { try body(id, value) }
        }
    }

    /// Calls `body` with each object and its slot in ascending ID order: in slot order when
    /// they were added in ID order, else sorted by ID (the values are not copied to be
    /// sorted). The caller reads what it needs of each value in place (``subscript(slot:)``):
    /// a copy of a value holding references retains each of them.
    func forEachSlotInIDOrder(_ body: (ObjectID, Int) throws -> Void) rethrows {
        if isInIDOrder {
            for slot in ids.indices where values[slot] != nil { try body(ids[slot], slot) }
            return
        }
        var order = slots.map { (id: $0.key, slot: $0.value) }
        order.sort { $0.id < $1.id }
        for (id, slot) in order { try body(id, slot) }
    }

    /// The value in `slot` (nil: an empty slot, or none).
    subscript(slot slot: Int) -> Value? {
        values.indices.contains(slot) ? values[slot] : nil
    }

    /// The IDs of the objects, in the order they were added (their values are not read).
    var keys: [ObjectID] { ids.indices.compactMap { values[$0] == nil ? nil : ids[$0] } }

    /// Checks every rule of the list: one value per slot; each object's slot holds it and its
    /// value; the filled slots are those the lookup by ID knows, at least half of them; while
    /// `isInIDOrder`, IDs ascend in slot order.
    func checkInvariants() throws(InvariantViolation) {
        try require(ids.count == values.count, "ObjectSlots", "\(ids.count) IDs for \(values.count) values")
        try require(
            values.count(where: { $0 != nil }) == slots.count, "ObjectSlots", "the lookup knows \(slots.count) objects, the slots hold more or fewer")
        try require(slots.count * 2 >= ids.count, "ObjectSlots", "\(slots.count) objects in \(ids.count) slots: not packed")
        for (id, slot) in slots {
            try require(ids.indices.contains(slot) && ids[slot] == id && values[slot] != nil, "ObjectSlots", "object \(id) is not in its slot \(slot)")
        }
        if isInIDOrder {
            for (before, after) in zip(ids, ids.dropFirst()) {
                try require(before < after, "ObjectSlots", "IDs \(before) and \(after) are out of order")
            }
        }
    }

    /// Checks the rules of one slot just added (the whole list while it is small).
    private func checkInvariants(slot: Int) throws(InvariantViolation) {
        if ids.count <= Tuning.wholeCheckLimit { return try checkInvariants() }
        try require(ids.count == values.count && slots[ids[slot]] == slot, "ObjectSlots", "object \(ids[slot]) is not in its slot \(slot)")
        if isInIDOrder, slot > 0 { try require(ids[slot - 1] < ids[slot], "ObjectSlots", "IDs \(ids[slot - 1]) and \(ids[slot]) are out of order") }
    }
}

extension ObjectSlots: Sequence {
    /// The objects with their values, in the order they were added.
    struct Iterator: IteratorProtocol {
        fileprivate let ids: [ObjectID]
        fileprivate let values: [Value?]
        fileprivate var slot = 0

        mutating func next() -> (key: ObjectID, value: Value)? {
            while slot < ids.count {
                defer { slot += 1 }
                if let value = values[slot] { return (ids[slot], value) }
            }
            return nil
        }
    }

    func makeIterator() -> Iterator { Iterator(ids: ids, values: values) }
    var underestimatedCount: Int { count }
}

/// The objects a context inserted and has not saved yet, with all their values.
typealias InsertedObjects = ObjectSlots<[PropertyValue]>

extension ObjectSlots where Value == [PropertyValue] {
    /// Sets value `position` of the object in `slot`, in place; false when `slot` no longer
    /// holds `id` (saved, removed, or moved by a packing: the caller then looks it up by ID).
    mutating func setValue(_ value: PropertyValue, at position: Int, slot: Int, of id: ObjectID) -> Bool {
        guard holds(id, slot: slot) else { return false }
        change(slot: slot) { $0[position] = value }
        return true
    }

    /// Sets value `position` of an object in the list, in place; false when it is not there.
    mutating func setValue(_ value: PropertyValue, at position: Int, of id: ObjectID) -> Bool {
        guard let slot = slot(of: id) else { return false }
        change(slot: slot) { $0[position] = value }
        return true
    }
}

/// The existing objects a context changed and has not saved yet, with their changes.
typealias UpdatedObjects = ObjectSlots<PendingUpdate>
