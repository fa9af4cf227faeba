/// What the JSON mapper (`CairnMapping`) needs of a context beyond the public API: values by
/// position, lookups by unique key that see unsaved changes, raw writes of checked values.
extension ObjectContext {
    /// An object's values as this context sees them (attributes, then relationships, by
    /// position); nil when it does not exist here.
    package func propertyValues(of id: ObjectID) -> [PropertyValue]? {
        values(of: id)
    }

    /// The object of `entity`'s family whose attributes at `positions` hold `values`, as this
    /// context sees it, found through the uniqueness index of a constraint on exactly those
    /// attributes. `.some(nil)`: no object holds them. `nil`: no constraint covers exactly these
    /// attributes, or a value cannot be looked up by its bytes; the caller must search otherwise.
    package func uniqueHolder(_ entity: EntityDescription, positions: [Int], values: [Value]) -> ObjectID?? {
        guard values.allSatisfy({ $0 != .null && $0.isByteCanonical }), let constraint = entity.uniqueness(coveringExactly: positions)
        else { return nil }
        // The key's values in the constraint's order.
        var ordered: [Value] = []
        for position in constraint.positions {
            guard let index = positions.firstIndex(of: position), values[index].fits(entity.attributes[position].type) else { return nil }
            ordered.append(values[index])
        }
        let key = UniqueKey(owner: constraint.owner, number: constraint.number, values: ordered)
        let snapshot = baseSnapshot
        var candidates = hasPendingChangesInChain ? pendingHolders(of: key) : []
        if let holder = snapshot.holder(of: key) { candidates.insert(holder) }
        // A candidate counts when this context still sees it holding the key.
        let holders = candidates.filter { id in
            guard entity.family.contains(id.entity), let view = view(of: id, in: snapshot) else { return false }
            return zip(positions, values).allSatisfy { position, value in
                if case .attribute(let current) = view[position] { return current == value }
                return false
            }
        }
        return .some(holders.min())
    }

    /// Sets attribute `position` of an object to `value`, which the caller has checked fits the
    /// attribute's type (no conversion, no inverse to keep).
    package func setAttribute(_ id: ObjectID, _ position: Int, _ value: Value) throws {
        try setRaw(id, position, .attribute(value))
    }

    /// An object's values as saved in the store this context reads (nil: not saved there).
    package func committedValues(of id: ObjectID) -> [PropertyValue]? {
        baseRecord(id)?.values
    }

    /// Copies an object's stored values, in the store's encoding, into `bytes` (replacing what it
    /// held), with where each value starts and the row's end in `starts`: what export reads
    /// without decoding a value it can write from its bytes. False (nothing copied) when this
    /// context or a parent has unsaved changes (export then reads values the usual way) or the
    /// object does not exist.
    package func copyStoredValues(of id: ObjectID, into bytes: inout [UInt8], starts: inout [Int]) -> Bool {
        guard !hasPendingChangesInChain else { return false }
        let copied = baseSnapshot.objects.withRowBytes(id) { row -> Bool in
            bytes.removeAll(keepingCapacity: true)
            starts.removeAll(keepingCapacity: true)
            // One walk of the row (each value's size read from its tag, clamped to the row, as
            // reading value by value would clamp it), then its bytes copied at once.
            let all = row.bytes
            var offset = 0
            for _ in 0..<row.count {
                starts.append(offset)
                if let base = all.baseAddress, offset < all.count { offset += min(ValueEncoding.skip(base, offset, all.count), all.count - offset) }
            }
            starts.append(offset)
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: all[0..<offset]))
            return true
        }
        return copied ?? false
    }

    /// Deletes an object by ID (delete rules apply).
    package func deleteObject(_ id: ObjectID) throws {
        try delete(id)
    }

    /// What a save would refuse in an object's values as this context sees them (a required
    /// value missing, a relationship holding too few or too many objects), as the save words
    /// it and checks it: a new object whole, a saved one a root context changed at the values
    /// it changed; nil when nothing, or when the object does not exist here.
    package func saveProblem(of id: ObjectID) -> StoreError? {
        guard let view = view(of: id) else { return nil }
        if parent == nil, !isInserted(id) {
            guard let changed = state.withLock({ $0.updated[id]?.values }) else { return nil }
            return changeProblem(id, changed)
        }
        return problem(id, view)
    }

    /// The objects this context inserted or changed and has not deleted, in ID order: what its
    /// save checks.
    package var changedObjectIDs: [ObjectID] {
        state.withLock { state in
            Set(state.inserted.keys).union(state.updated.keys).subtracting(state.deleted).subtracting(state.discarded).sorted()
        }
    }
}

extension Value {
    /// Whether a store holds this value and `other` as the same bytes: how uniqueness, the batch
    /// upsert and the JSON mapper compare values (`1.50` and `1.5` differ; so do a string and its
    /// decomposed form).
    package func isStoredIdentically(to other: Value) -> Bool {
        ValueEncoding.encoded(self) == ValueEncoding.encoded(other)
    }

    /// The stored bytes of several values, end to end: a key that compares as the store does.
    package static func storedKey(_ values: [Value]) -> [UInt8] {
        var bytes: [UInt8] = []
        for value in values { bytes += ValueEncoding.encoded(value) }
        return bytes
    }
}
