import CairnLog

extension Store {
    /// Commits a root context's changes: resolves conflicts, checks uniqueness, appends the
    /// change record, waits for durability, publishes the new snapshot and notifies observers.
    /// Returns the state the save produced (nil: nothing to save).
    ///
    /// Saves are accepted one at a time, in LSN order, against every save accepted before
    /// (durable or not yet); their syncs are shared by the log's group commit.
    func commit(_ pending: PendingChanges, policy: MergePolicy, author: String?, contextName: String) async throws -> StoreSnapshot? {
        try await commitRecord { accepted in
            let changes = try resolve(pending, policy: policy, against: accepted)
            guard !changes.isEmpty else { return nil }
            let transaction = TransactionInfo.now(
                author: author, contextName: contextName, tombstones: TransactionInfo.tombstones(of: changes.deletes, in: accepted, model: model))
            return EncodedSave(
                bytes: StoreRecord.changes(changes, transaction).encoded(), inserted: changes.inserts.map(\.id),
                updated: changes.updates.map { ($0.id, $0.changes.map(\.position)) }, deleted: changes.deletes, transaction: transaction)
        }
    }

    /// Commits the change record `make` encodes against the state every accepted save produced
    /// (nil: nothing to save). The record is read back and applied to that state as replay
    /// will apply it, checked for uniqueness, appended to the log, and once it is as durable as
    /// the store's durability mode says, its state is published and observers notified.
    /// Returns the state the record produced.
    func commitRecord(_ make: (StoreSnapshot) throws -> EncodedSave?) async throws -> StoreSnapshot? {
        let accepted = try commits.withLock { state -> (LSN, EncodedSave, StoreSnapshot)? in
            if state.closed { throw StoreError(.closed, "the store is closed") }
            if let failure = state.failure { throw failure }
            guard let save = try make(state.accepted) else { return nil }
            if options.readOnly { throw StoreError(.readOnly, "the store was opened read-only") }
            // A large record is compressed on another core while it is applied here.
            let bytes = save.bytes
            let compressed = log.flatMap { log in
                bytes.count >= Tuning.concurrentCompression ? ConcurrentResult { () throws(any Error) in try log.prepare(bytes) } : nil
            }
            // The snapshot is built from the encoded record, exactly as replay will rebuild it.
            guard case .changes(let rows) = try StoreRecord.decode(save.bytes, lsn: state.accepted.lsn.next, model: model) else {
                throw StoreError(.corruptRecord, "an encoded change record did not read back")
            }
            // Applied before the record is submitted, so that a record the snapshot refuses never
            // reaches the log. Every frame of the log is a store record, so the frame gets the
            // next LSN after the snapshot's.
            let expected = state.accepted.lsn.next
            var next = state.accepted
            let clashing = try next.apply(rows, at: expected)
            let lsn: LSN
            do {
                try checkUniqueness(of: clashing, after: next)
                if let log {
                    lsn = try log.submit(try compressed?.value() ?? log.prepare(bytes))
                } else {
                    lsn = expected
                }
            } catch {
                next.abandon(expected)
                throw error
            }
            guard lsn == expected else {
                let failure = StoreError(.corruptRecord, "the log gave LSN \(lsn) to a save expected at \(expected)", lsn: lsn)
                state.failure = failure
                throw failure
            }
            state.accepted = next
            state.inFlight.append((lsn, next, save))
            return (lsn, save, next)
        }
        guard let (lsn, save, built) = accepted else { return nil }
        do {
            try await log?.waitUntilAcknowledged(lsn)
        } catch {
            commits.withLock { state in
                state.failure = error
                endFeedsIfClosed(state)
            }
            throw error
        }
        // Saves become durable in LSN order, but their tasks may resume in any order: the first
        // to resume publishes every save up to its own, and hands them to the observations'
        // feeds, in LSN order, under the same lock (a later save cannot pass them).
        let summary = commits.withLock { state -> SaveSummary? in
            let done = state.inFlight.prefix { $0.lsn <= lsn }
            state.inFlight.removeFirst(done.count)
            let own = publish(done, own: lsn)
            endFeedsIfClosed(state)
            return own
        }
        noteSaved(bytes: save.bytes.count)
        // Observers on the saving task: this save's own, once published.
        let listening = observers.withLock { Array($0.values) }
        if !listening.isEmpty {
            let own = summary ?? SaveSummary(lsn: lsn, save: save, entities: model.descriptions, snapshot: nil)
            for observer in listening { observer(own) }
        }
        return built
    }

    /// Publishes the saves `done` (in LSN order: readers see the last one's state) and hands
    /// each to the save feeds. Returns the summary made for the save at `own`, if any. Called
    /// under `commits`, which keeps the saves in LSN order from one call to the next.
    func publish(_ done: some Collection<(lsn: LSN, snapshot: StoreSnapshot, save: EncodedSave)>, own: LSN?) -> SaveSummary? {
        guard let ready = done.reversed().first?.snapshot else { return nil }
        published.withLock { current in
            if ready.lsn > current.lsn {
                current = ready
                viewVersion.bump()
            }
        }
        let feeds = saveFeeds.withLock { Array($0.values) }
        var ownSummary: SaveSummary?
        // (No observation: no summary made; observers on the saving task make their own.)
        for (doneLSN, doneSnapshot, doneSave) in done where !feeds.isEmpty {
            let summary = SaveSummary(lsn: doneLSN, save: doneSave, entities: model.descriptions, snapshot: nil)
            // (The save's state goes only to the feeds that update from it, fetched results:
            // a notification waiting in a slow observer's buffer keeps no state alive.)
            let withState = feeds.contains(where: \.wantsStates) ? summary.with(doneSnapshot) : summary
            for feed in feeds { feed.put(feed.wantsStates ? withState : summary) }
            if doneLSN == own { ownSummary = summary }
        }
        return ownSummary
    }

    /// Turns pending changes into a change set, resolving conflicts by `policy`.
    private func resolve(_ pending: PendingChanges, policy: MergePolicy, against accepted: StoreSnapshot) throws -> ChangeSet {
        var changes = ChangeSet()
        var conflicts: [ObjectID] = []
        changes.inserts = pending.inserted.inIDOrder.map { id, values in ChangeSet.Insert(id: id, values: storable(values, entity: id.entity)) }
        // The updates are read in object order, the rows of a chunk one after the other.
        let descriptions = model.descriptions
        let updated = pending.updated
        updated.forEachSlotInIDOrder { id, slot in
            guard !pending.deleted.contains(id) && !pending.inserted.contains(id), var properties = updated[slot: slot]?.values else { return }
            let readVersion = updated[slot: slot]?.original?.version
            let entity = descriptions[id.entity]
            guard let latest = accepted.record(id) else {
                // Deleted by another save: the update is dropped, unless it links objects (then
                // dropping one end would leave the other pointing at nothing).
                if policy == .error || linksObjects(entity, properties.positions) { conflicts.append(id) }
                return
            }
            let unchangedSinceRead = readVersion == latest.version
            if readVersion != nil, !unchangedSinceRead, let original = updated[slot: slot]?.original {
                // Changed by another save since the context read it.
                let latestValues = latest.values
                let originalValues = original.values
                // Relationships are not merged property by property: an inverse lives on
                // another object, which its own resolution could not keep in step.
                let storeChanged = latestValues.indices.filter { latestValues[$0] != originalValues[$0] }
                if linksObjects(entity, properties.positions) || linksObjects(entity, storeChanged) {
                    conflicts.append(id)
                    return
                }
                switch policy {
                case .error: conflicts.append(id); return
                case .mergeByPropertyObjectTrump: break
                case .mergeByPropertyStoreTrump: properties = properties.filtered { latestValues[$0.key] == originalValues[$0.key] }
                case .overwrite:
                    for position in latestValues.indices where properties[position] == nil && latestValues[position] != originalValues[position] {
                        properties[position] = originalValues[position]
                    }
                case .rollback: return
                }
            }
            // Only the positions changed are read from the stored row.
            var updates: [PropertyChange] = []
            for (position, value) in properties {
                // What the context compared when it set the value holds while the object is
                // as the context read it (no other save since): its row is then not read.
                let known = unchangedSinceRead ? updated[slot: slot]?.equalsOriginal(at: position) : nil
                if known ?? (latest.value(position) == value) { continue }
                if position < entity.attributes.count && entity.attributes[position].isTransient { continue }
                updates.append(PropertyChange(position: position, value: value))
            }
            if updates.count > 1 { updates.sort { $0.position < $1.position } }
            if !updates.isEmpty { changes.updates.append(.init(id: id, changes: updates)) }
        }
        for id in pending.deleted.sorted() {
            guard let latest = accepted.record(id) else { continue }
            if let original = pending.deletedOriginals[id], latest.version != original.version {
                switch policy {
                case .mergeByPropertyObjectTrump, .overwrite: break
                default:
                    // Dropping a delete would keep the object while its cascades and nullified
                    // inverses (saved with it) go ahead: refuse instead.
                    conflicts.append(id)
                    continue
                }
            }
            changes.deletes.append(id)
        }
        if !conflicts.isEmpty {
            throw StoreError(
                .mergeConflict, "\(conflicts.count) object(s) were changed or deleted by another save since this context read them",
                objects: conflicts.sorted())
        }
        return changes
    }

    /// Whether any of these positions is a relationship with an inverse.
    private func linksObjects(_ entity: EntityDescription, _ positions: some Sequence<Int>) -> Bool {
        positions.contains { position in
            position >= entity.attributes.count && entity.inverses[position - entity.attributes.count] != nil
        }
    }

    /// Values as stored: transient attributes are never saved.
    private func storable(_ values: [PropertyValue], entity index: Int) -> [PropertyValue] {
        var values = values
        for position in model.descriptions[index].transientPositions { values[position] = .attribute(.null) }
        return values
    }

    /// Refuses changes that would give two objects the same values of a uniqueness constraint.
    /// `clashing` are the objects whose new keys share a hash with another object's in `next`,
    /// the state with the changes applied (not yet published): any two objects with equal keys
    /// are among them (the second of the two to be filed saw the first), so each is looked up
    /// among every holder it will have — committed objects, objects of this save, none released
    /// by it — and its values compared with theirs.
    private func checkUniqueness(of clashing: [ObjectID], after next: StoreSnapshot) throws {
        for id in clashing {
            let constraints = model.descriptions[id.entity].uniqueness
            guard let row = next.record(id)?.row else { continue }
            for constraint in constraints {
                guard let hash = StoreSnapshot.keyHash(row, constraint),
                    let holder = row.withBorrowed({ next.otherHolder(of: $0.bytes, hash: hash, for: constraint, except: id) })
                else { continue }
                let owner = model.descriptions[constraint.owner].name
                let shown = zip(constraint.names, constraint.positions).map { name, position in "\(name) = \(row.value(position))" }
                throw StoreError(
                    .uniquenessViolation, "another \(owner) already has \(shown.joined(separator: ", "))",
                    entity: owner, property: constraint.names.joined(separator: ","), objects: [id, holder])
            }
        }
    }
}

/// One save's change record, encoded, with the objects it changes and its transaction header
/// (for the did-save notification).
struct EncodedSave: Sendable {
    var bytes: [UInt8]
    var inserted: [ObjectID]
    /// Updated objects, each with the positions of the properties it changed.
    var updated: [(id: ObjectID, positions: [Int])]
    var deleted: [ObjectID]
    var transaction: TransactionInfo
}
