import CairnLog
import Foundation

/// What one save did, told once it is durable and published (the view context already reads
/// it): the objects it inserted, updated (with the properties that changed) and deleted, and who
/// made it (Core Data's `NSManagedObjectContextDidSave` with its transaction's author).
///
/// A notification of an observation filtered by entities (``Store/observeSaves(of:bufferLimit:_:)``)
/// lists only the objects of those entities (their sub-entities' included).
public struct SaveNotification: Sendable {
    /// The LSN of the save's log frame (0 for an in-memory store's first save, and so on).
    public var lsn: LSN
    /// When the save was made (its change record's time: the saving process's clock).
    public var timestamp: Date
    /// The name of the context that saved (``ObjectContext/name``); nil for a save made without
    /// one (``Store/batchInsert(_:columns:rows:)``, a store-level import).
    public var contextName: String?
    /// The author the saving context named (``ObjectContext/transactionAuthor``), if any.
    public var author: String?
    /// Objects the save inserted.
    public var inserted: Set<ObjectID>
    /// Objects it updated.
    public var updated: Set<ObjectID>
    /// Objects it deleted.
    public var deleted: Set<ObjectID>
    /// The names of the properties each updated object changed (an inverse relationship the
    /// context kept in step included).
    public var updatedProperties: [ObjectID: Set<String>]
}

/// What a save observation delivers: a save, or word that saves were dropped because the
/// observer fell behind.
public enum SaveEvent: Sendable {
    /// One save.
    case saved(SaveNotification)
    /// The observer fell behind by more saves than its buffer holds: the saves after
    /// ``SavesMissed/since`` up to ``SavesMissed/through`` were dropped. What it shows may be
    /// stale: refetch.
    case missed(SavesMissed)
}

/// Saves an observer did not get because it fell behind (``SaveEvent/missed(_:)``).
public struct SavesMissed: Sendable, Equatable {
    /// The LSN of the last save the observer was given (or the store's last save when it started
    /// observing): anything saved after it may have changed.
    public var since: LSN
    /// The LSN of the last save dropped.
    public var through: LSN
    /// How many saves were dropped (of those the observation asked for).
    public var count: Int
}

/// Keeps a save observer registered; call ``cancel()`` (or let it go) to stop.
public final class SaveObservation: Sendable {
    private let stop: @Sendable () -> Void
    init(stop: @escaping @Sendable () -> Void) { self.stop = stop }
    /// Stops the observation: the handler is not called again, but for a call under way (or
    /// starting) as this runs.
    public func cancel() { stop() }
    deinit { stop() }
}
