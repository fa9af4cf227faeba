import CairnLog
import CairnSupport
import Foundation

/// Applies change records to a snapshot on a second thread (one of ``WorkerThreads/replay``) while the opening thread reads,
/// decompresses and decodes the next frames, so that replay uses both cores.
///
/// Records are applied in the order they are submitted. The first failure stops the work and is
/// rethrown by the next ``submit(_:)`` or by ``finish()``.
final class SnapshotBuilder: @unchecked Sendable {
    // Safety: every stored property is guarded by `condition`, except `snapshot`, which only the
    // applying thread touches until it sets `exited` under the lock; `finish()` reads it after.
    // Until the first `.start`, `snapshot` is the one given (nil when the model is not known
    // before the log is read: every other item then fails).
    enum Item {
        case changes(RowChangeSet, LSN)
        case advance(LSN)
        /// Start over, empty, with this model (the log's first record).
        case start(Model, LSN)
        /// Migrate everything so far to the plan's destination model.
        case migrate(MigrationPlan, LSN)
        /// Chunks of objects a base holds, as of its LSN.
        case load([LoadedChunk], LSN)
        /// Keys below this one are taken (a base's next key).
        case reserveKeys(below: UInt64)
    }

    private let condition = NSCondition()
    private var queue: [Item] = []
    private var finished = false
    private var exited = false
    private var failure: (any Error)?
    private var snapshot: StoreSnapshot?
    /// How many records may wait: bounds the memory that decoding ahead can take.
    private let limit = 16

    /// A builder starting from `snapshot`, or (nil) from the snapshot of the first `.start`.
    init(_ snapshot: StoreSnapshot?) {
        self.snapshot = snapshot
        self.snapshot?.startBulkIndexing()
        // A reused thread: the snapshot's memory then comes from the arena of the thread that
        // built the last one, memory a closed store freed (``WorkerThreads``).
        WorkerThreads.replay.run { [self] in run() }
    }

    /// Queues a record (waits while the queue is full).
    func submit(_ item: Item) throws {
        condition.lock()
        defer { condition.unlock() }
        while queue.count >= limit && failure == nil { condition.wait() }
        if let failure { throw failure }
        queue.append(item)
        condition.broadcast()
    }

    /// Waits until every queued record is applied and returns the snapshot (nil when the
    /// builder started without one and was given no `.start`).
    func finish() throws -> StoreSnapshot? {
        condition.lock()
        defer { condition.unlock() }
        finished = true
        condition.broadcast()
        while !exited { condition.wait() }
        if let failure { throw failure }
        return snapshot
    }

    private func run() {
        while true {
            condition.lock()
            while queue.isEmpty && !finished && failure == nil { condition.wait() }
            if (queue.isEmpty && finished) || failure != nil {
                // A failed replay's snapshot, half applied, is dropped: no index to finish.
                if failure == nil { snapshot?.finishBulkIndexing() }
                exited = true
                condition.broadcast()
                condition.unlock()
                return
            }
            let items = queue
            queue.removeAll(keepingCapacity: true)
            condition.broadcast()
            condition.unlock()
            do {
                for item in items {
                    if case .start(let model, let lsn) = item {
                        var started = StoreSnapshot(model: model)
                        started.startBulkIndexing()
                        started.advance(to: lsn)
                        snapshot = started
                        continue
                    }
                    // Taken out while it changes, so that it stays uniquely referenced.
                    guard var current = snapshot.take() else {
                        throw StoreError(.corruptRecord, "a record of objects before the store's model record")
                    }
                    defer { snapshot = current }
                    switch item {
                    case .changes(let changes, let lsn): try current.apply(changes, at: lsn)
                    case .advance(let lsn): current.advance(to: lsn)
                    case .load(let chunks, let lsn): for chunk in chunks { try current.load(chunk, at: lsn) }
                    case .reserveKeys(let key): current.reserveKeys(below: key)
                    case .start: break
                    case .migrate(let plan, let lsn):
                        current.finishBulkIndexing()
                        current = try plan.migrate(current, at: lsn)
                        current.startBulkIndexing()
                    }
                }
            } catch {
                condition.lock()
                failure = error
                condition.broadcast()
                condition.unlock()
            }
        }
    }
}
