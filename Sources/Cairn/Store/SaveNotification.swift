import CairnLog

/// Posted after every save that reached the store: what it inserted, updated and deleted.
public struct SaveNotification: Sendable {
    /// The LSN of the save's log frame (0 for an in-memory store's first save, and so on).
    public var lsn: LSN
    /// Objects the save inserted.
    public var inserted: Set<ObjectID>
    /// Objects it updated.
    public var updated: Set<ObjectID>
    /// Objects it deleted.
    public var deleted: Set<ObjectID>
}

/// Keeps a save observer registered; call ``cancel()`` (or let it go) to stop.
public final class SaveObservation: Sendable {
    private let stop: @Sendable () -> Void
    init(stop: @escaping @Sendable () -> Void) { self.stop = stop }
    /// Stops the observation.
    public func cancel() { stop() }
    deinit { stop() }
}
