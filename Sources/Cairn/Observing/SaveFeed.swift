import CairnLog
import CairnSupport
import DequeModule
import Dispatch
import Foundation

/// One published save as the store hands it to its observers: the IDs as the save's record
/// lists them, turned into a ``SaveNotification`` only by an observer that reads it (and only
/// with the entities it asked for).
package final class SaveSummary: Sendable {
    package let lsn: LSN
    package let transaction: TransactionInfo
    package let inserted: [ObjectID]
    /// Updated objects, each with the positions of the properties it changed.
    package let updated: [(id: ObjectID, positions: [Int])]
    package let deleted: [ObjectID]
    /// The store's entities (for the names of changed properties).
    let entities: [EntityDescription]
    /// The state the save produced (for fetched results, which update from it).
    let snapshot: StoreSnapshot?

    init(lsn: LSN, save: EncodedSave, entities: [EntityDescription], snapshot: StoreSnapshot?) {
        self.lsn = lsn
        self.snapshot = snapshot
        transaction = save.transaction
        inserted = save.inserted
        updated = save.updated
        deleted = save.deleted
        self.entities = entities
    }

    /// The same save with the state it produced.
    func with(_ snapshot: StoreSnapshot) -> SaveSummary {
        SaveSummary(
            lsn: lsn, save: EncodedSave(bytes: [], inserted: inserted, updated: updated, deleted: deleted, transaction: transaction), entities: entities,
            snapshot: snapshot)
    }

    /// Whether the save touches an object of an entity `wanted` holds (by entity index).
    func touches(_ wanted: [Bool]) -> Bool {
        func wants(_ id: ObjectID) -> Bool { id.entity < wanted.count && wanted[id.entity] }
        return inserted.contains(where: wants) || updated.contains { wants($0.id) } || deleted.contains(where: wants)
    }

    /// The name of the property at `position` (attributes, then relationships).
    private static func name(of position: Int, in entity: EntityDescription) -> String? {
        if entity.attributes.indices.contains(position) { return entity.attributes[position].name }
        let relationship = position - entity.attributes.count
        return entity.relationships.indices.contains(relationship) ? entity.relationships[relationship].name : nil
    }

    /// The notification, with only the objects of the entities `wanted` holds (nil: all).
    func notification(_ wanted: [Bool]?) -> SaveNotification {
        func wants(_ id: ObjectID) -> Bool { wanted.map { id.entity < $0.count && $0[id.entity] } ?? true }
        var properties: [ObjectID: Set<String>] = [:]
        properties.reserveCapacity(updated.count)
        for (id, positions) in updated where wants(id) {
            let entity = entities[id.entity]
            // (An object listed twice, as an upsert may list it: the names of both.)
            properties[id, default: []].formUnion(positions.compactMap { Self.name(of: $0, in: entity) })
        }
        return SaveNotification(
            lsn: lsn, timestamp: transaction.date, contextName: transaction.contextName, author: transaction.author,
            inserted: Set(inserted.filter(wants)), updated: Set(properties.keys), deleted: Set(deleted.filter(wants)),
            updatedProperties: properties)
    }
}

/// One observer's queue of saves: bounded, so that an observer that falls behind never holds
/// up a save or grows without end. When a save arrives at a full buffer, everything buffered and
/// the new save become one ``SaveEvent/missed(_:)`` (saves since the last one handed out); saves
/// after it queue as before.
///
/// Saves are put in under the store's `commits` lock, in LSN order (the feed's lock is taken
/// inside it and nothing else inside the feed's); they are handed out in that order, one at a
/// time: to a handler on a thread of its own (``startDelivery(_:)``), or to an async iterator
/// (``next()``).
package final class SaveFeed: Sendable {
    /// A queued save, or saves dropped.
    enum Entry {
        case save(SaveSummary)
        case missed(SavesMissed)

        var count: Int {
            switch self {
            case .save: 1
            case .missed(let missed): missed.count
            }
        }
    }

    struct State {
        var buffer = Deque<Entry>()
        /// The LSN of the last save handed out (or the store's when the feed started).
        var handedOut: LSN
        /// An async iterator waiting for the next entry.
        var waiting: CheckedContinuation<Entry?, Never>?
        /// Ended: nothing more is put in; what is buffered is still handed out (unless cancelled).
        var finished = false
        /// Cancelled: nothing more is handed out.
        var cancelled = false
        /// A handler's delivery is running.
        var delivering = false
        /// Entries are kept, not handed to the handler, until ``resume()``.
        var paused = false
    }

    /// The entities wanted, by index (nil: all).
    let wanted: [Bool]?
    /// The most entries buffered.
    let limit: Int
    /// Whether the saves it gets carry the state each produced (fetched results update from it).
    let wantsStates: Bool
    let state: Protected<State>
    /// The handler, for a feed delivered to one.
    private let handler: (@Sendable (Entry) -> Void)?
    /// Called once when the feed is finished (the store closed).
    private let onEnd: (@Sendable () -> Void)?

    init(
        wanted: [Bool]?, limit: Int, after lsn: LSN, wantsStates: Bool = false, paused: Bool = false, onEnd: (@Sendable () -> Void)? = nil,
        handler: (@Sendable (Entry) -> Void)?
    ) {
        self.onEnd = onEnd
        self.wanted = wanted
        self.limit = max(1, limit)
        self.wantsStates = wantsStates
        self.handler = handler
        state = Protected(State(handedOut: lsn, paused: paused))
    }

    /// Starts handing entries to the handler (of a feed made paused), those kept meanwhile first.
    func resume() {
        let deliver = state.withLock { state -> Bool in
            state.paused = false
            guard handler != nil, !state.delivering, !state.buffer.isEmpty else { return false }
            state.delivering = true
            return true
        }
        if deliver { DispatchQueue.global().async { self.deliver() } }
    }

    /// Queues a published save (under the store's `commits` lock, in LSN order).
    func put(_ save: SaveSummary) {
        if let wanted, !save.touches(wanted) { return }
        enqueue(count: 1, through: save.lsn) { _ in .save(save) }
    }

    /// Queues word that `count` saves up to `through` were not told one by one (a following
    /// store that opened its log again: ``Store/init(followingAt:options:)``), after the saves
    /// already queued; nothing when `count` is 0.
    func putMissed(through: LSN, count: Int) {
        guard count > 0 else { return }
        enqueue(count: count, through: through) { after in .missed(SavesMissed(since: after, through: through, count: count)) }
    }

    /// Hands the entry `make` makes (standing for `count` saves up to `through`; given the LSN
    /// of the entry it comes after) to a waiting iterator, or queues it: at a full buffer,
    /// everything buffered and it become one ``SaveEvent/missed(_:)``.
    private func enqueue(count: Int, through: LSN, _ make: (_ after: LSN) -> Entry) {
        let (resume, handed, deliver) = state.withLock { state -> (CheckedContinuation<Entry?, Never>?, Entry?, Bool) in
            guard !state.finished && !state.cancelled else { return (nil, nil, false) }
            let entry = make(state.buffer.last?.lsn ?? state.handedOut)
            if let waiting = state.waiting {
                state.waiting = nil
                state.handedOut = through
                return (waiting, entry, false)
            }
            if state.buffer.count >= limit {
                let dropped = state.buffer.reduce(count) { $0 + $1.count }
                state.buffer = [.missed(SavesMissed(since: state.handedOut, through: through, count: dropped))]
            } else {
                state.buffer.append(entry)
            }
            guard handler != nil, !state.delivering, !state.paused else { return (nil, nil, false) }
            state.delivering = true
            return (nil, nil, true)
        }
        // (Resumed outside the lock: the iterator's task runs on at once.)
        if let resume, let handed { resume.resume(returning: handed) }
        if deliver { DispatchQueue.global().async { self.deliver() } }
    }

    /// Hands the buffered entries to the handler, one at a time, until none is left.
    private func deliver() {
        while let entry = take(endingDelivery: true) {
            handler?(entry)
        }
    }

    /// The next buffered entry (nil: none, or cancelled); with `endingDelivery`, an empty buffer
    /// ends the handler's delivery (the next save starts another).
    private func take(endingDelivery: Bool) -> Entry? {
        state.withLock { state in
            guard !state.cancelled, let entry = state.buffer.popFirst() else {
                if endingDelivery { state.delivering = false }
                return nil
            }
            state.handedOut = entry.lsn
            return entry
        }
    }

    /// The public form of an entry, with only the objects of the entities `wanted` holds (nil: all).
    static func event(_ entry: Entry, _ wanted: [Bool]?) -> SaveEvent {
        switch entry {
        case .save(let save): .saved(save.notification(wanted))
        case .missed(let missed): .missed(missed)
        }
    }

    /// The next entry, waiting for one (nil: the feed ended, or the task was cancelled).
    func next() async -> Entry? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Entry?, Never>) in
                let ready = state.withLock { state -> Entry?? in
                    if !state.cancelled, let entry = state.buffer.popFirst() {
                        state.handedOut = entry.lsn
                        return .some(entry)
                    }
                    // (A second consumer waiting at once ends: one consumer a feed.)
                    if state.finished || state.cancelled || Task.isCancelled || state.waiting != nil { return .some(nil) }
                    state.waiting = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            cancel()
        }
    }

    /// Ends the feed: buffered entries are still handed out, then nothing.
    func finish() { end(cancelling: false) }

    /// Ends the feed at once: nothing more is handed out.
    func cancel() { end(cancelling: true) }

    private func end(cancelling: Bool) {
        let (waiting, first) = state.withLock { state -> (CheckedContinuation<Entry?, Never>?, Bool) in
            let first = !state.finished
            state.finished = true
            if cancelling {
                state.cancelled = true
                state.buffer.removeAll()
            }
            defer { state.waiting = nil }
            return (state.waiting, first)
        }
        waiting?.resume(returning: nil)
        if first && !cancelling { onEnd?() }
    }
}

extension SaveFeed.Entry {
    /// The LSN of the last save the entry covers.
    var lsn: LSN {
        switch self {
        case .save(let save): save.lsn
        case .missed(let missed): missed.through
        }
    }
}
