import CairnSupport

/// The objects a context inserted and has not saved yet, with all their values, in the order
/// they were inserted.
///
/// An import sets every attribute of every new object one call at a time, so the values of a
/// new object are kept in a slot of an array, and its ``ManagedObject`` remembers the slot: a
/// `setValue` writes there without hashing its object ID (``setValue(_:at:slot:of:)``). Lookups
/// by ID go through a dictionary of slots. A save takes the list in ID order
/// (``inIDOrder``): the insertion order when, as usual, the context inserted objects of one
/// entity (keys come from the store's counter), sorted otherwise.
///
/// An object removed (deleted before a save) leaves an empty slot; the slots are packed once
/// they are half empty, and objects whose slot moved then take the lookup by ID.
struct InsertedObjects: Sendable {
    /// The object of each slot, in insertion order (a removed one stays until the slots are
    /// packed). Internal, not private, only so that the tests can damage it and see
    /// ``checkInvariants()`` fail.
    var ids: [ObjectID] = []
    /// The values of each slot; nil for a slot emptied by a removal.
    private var values: [[PropertyValue]?] = []
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

    /// The values of an object, or nil when it is not in the list; setting nil removes it.
    subscript(id: ObjectID) -> [PropertyValue]? {
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
    mutating func add(_ id: ObjectID, _ objectValues: [PropertyValue]) {
        if let last = ids.last, !(last < id) { isInIDOrder = false }
        slots[id] = ids.count
        ids.append(id)
        values.append(objectValues)
        checkAfterMutation { () throws(InvariantViolation) in try checkInvariants(slot: ids.count - 1) }
    }

    /// Sets value `position` of the object in `slot`, in place; false when `slot` no longer
    /// holds `id` (saved, removed, or moved by a packing: the caller then looks it up by ID).
    mutating func setValue(_ value: PropertyValue, at position: Int, slot: Int, of id: ObjectID) -> Bool {
        guard slot >= 0, slot < ids.count, ids[slot] == id, values[slot] != nil else { return false }
        values[slot]?[position] = value
        return true
    }

    /// Sets value `position` of an object in the list, in place; false when it is not there.
    mutating func setValue(_ value: PropertyValue, at position: Int, of id: ObjectID) -> Bool {
        guard let slot = slots[id] else { return false }
        values[slot]?[position] = value
        return true
    }

    /// Removes an object; returns its values (nil when it was not in the list).
    @discardableResult
    mutating func removeValue(forKey id: ObjectID) -> [PropertyValue]? {
        guard let slot = slots[id] else { return nil }
        defer { remove(slot) }
        return values[slot]
    }

    private mutating func remove(_ slot: Int) {
        slots[ids[slot]] = nil
        values[slot] = nil
        guard slots.count < ids.count / 2 else { return }
        // Half the slots are empty: pack them (objects whose slot moves find theirs by ID).
        var packed = InsertedObjects()
        for (id, objectValues) in self { packed.add(id, objectValues) }
        packed.isInIDOrder = isInIDOrder
        self = packed
        checkAfterMutation { () throws(InvariantViolation) in try checkInvariants() }
    }

    /// The objects with their values in ascending ID order (the order of a change record).
    var inIDOrder: [(key: ObjectID, value: [PropertyValue])] {
        let all = Array(self)
        return isInIDOrder ? all : all.sorted { $0.key < $1.key }
    }

    /// The IDs of the objects, in insertion order.
    var keys: [ObjectID] { map(\.key) }

    /// Checks every rule of the list: one value list per slot; each object's slot holds it and
    /// its values; the filled slots are those the lookup by ID knows, at least half of them;
    /// while `isInIDOrder`, IDs ascend in slot order.
    func checkInvariants() throws(InvariantViolation) {
        try require(ids.count == values.count, "InsertedObjects", "\(ids.count) IDs for \(values.count) value lists")
        try require(
            values.count(where: { $0 != nil }) == slots.count, "InsertedObjects", "the lookup knows \(slots.count) objects, the slots hold more or fewer")
        try require(slots.count * 2 >= ids.count, "InsertedObjects", "\(slots.count) objects in \(ids.count) slots: not packed")
        for (id, slot) in slots {
            try require(ids.indices.contains(slot) && ids[slot] == id && values[slot] != nil, "InsertedObjects", "object \(id) is not in its slot \(slot)")
        }
        if isInIDOrder {
            for (before, after) in zip(ids, ids.dropFirst()) {
                try require(before < after, "InsertedObjects", "IDs \(before) and \(after) are out of order")
            }
        }
    }

    /// Checks the rules of one slot just added (the whole list while it is small).
    private func checkInvariants(slot: Int) throws(InvariantViolation) {
        if ids.count <= Tuning.wholeCheckLimit { return try checkInvariants() }
        try require(ids.count == values.count && slots[ids[slot]] == slot, "InsertedObjects", "object \(ids[slot]) is not in its slot \(slot)")
        if isInIDOrder, slot > 0 { try require(ids[slot - 1] < ids[slot], "InsertedObjects", "IDs \(ids[slot - 1]) and \(ids[slot]) are out of order") }
    }
}

extension InsertedObjects: Sequence {
    /// The objects with their values, in insertion order.
    struct Iterator: IteratorProtocol {
        fileprivate let ids: [ObjectID]
        fileprivate let values: [[PropertyValue]?]
        fileprivate var slot = 0

        mutating func next() -> (key: ObjectID, value: [PropertyValue])? {
            while slot < ids.count {
                defer { slot += 1 }
                if let objectValues = values[slot] { return (ids[slot], objectValues) }
            }
            return nil
        }
    }

    func makeIterator() -> Iterator { Iterator(ids: ids, values: values) }
    var underestimatedCount: Int { count }
}
