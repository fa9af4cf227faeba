import CairnLog
import CairnSupport
import Foundation

extension Store {
    /// The buffer of a save observation unless it names another: this many saves wait for an
    /// observer that falls behind before they become one ``SaveEvent/missed(_:)``.
    public static let defaultSaveBuffer = 1024

    /// Calls `handler` with every save made from now on, in LSN order, one call at a time, on a
    /// thread of the observation's own (never on the saving task: a slow handler never holds up
    /// a save). Each save is told once it is durable and published.
    ///
    /// - Parameters:
    ///   - entities: Only saves that touch objects of these entities (or their sub-entities),
    ///     each listing only those objects; nil: every save, whole.
    ///   - bufferLimit: How many saves may wait for the handler. When one more arrives, the
    ///     waiting saves and it are dropped for one ``SaveEvent/missed(_:)``: refetch.
    ///   - handler: Called with each ``SaveEvent``.
    /// - Returns: The observation: keep it while you want saves; ``SaveObservation/cancel()``
    ///   (or letting it go) stops them.
    /// - Throws: ``StoreError/Code/unknownName`` for an entity the model does not have.
    public func observeSaves(
        of entities: [String]? = nil, bufferLimit: Int = Store.defaultSaveBuffer, _ handler: @escaping @Sendable (SaveEvent) -> Void
    ) throws -> SaveObservation {
        let wanted = try wantedEntities(entities)
        let feed = SaveFeed(wanted: wanted, limit: bufferLimit, after: lastSaveLSN) { entry in handler(SaveFeed.event(entry, wanted)) }
        register(feed)
        return SaveObservation { [weak self] in
            feed.cancel()
            self?.unregister(feed)
        }
    }

    /// Every save made from now on, in LSN order, as an async sequence (for one consumer): the
    /// same events as ``observeSaves(of:bufferLimit:_:)``. It ends when the store closes or the
    /// iterating task is cancelled; letting the sequence and its iterator go stops it too.
    ///
    /// ```swift
    /// for await event in try store.saves(of: ["Book"]) {
    ///     switch event {
    ///     case .saved(let save): print(save.lsn, save.author ?? "-", save.inserted.count)
    ///     case .missed: refetch()
    ///     }
    /// }
    /// ```
    ///
    /// - Throws: ``StoreError/Code/unknownName`` for an entity the model does not have.
    public func saves(of entities: [String]? = nil, bufferLimit: Int = Store.defaultSaveBuffer) throws -> SaveEvents {
        let feed = SaveFeed(wanted: try wantedEntities(entities), limit: bufferLimit, after: lastSaveLSN, handler: nil)
        register(feed)
        if commits.withLock({ $0.closed && ($0.inFlight.isEmpty || $0.failure != nil) }) { feed.finish() }
        return SaveEvents(SaveEvents.Registration(feed: feed, store: self))
    }

    /// Calls `handler` on the saving task after every save (package code that must act before
    /// the save returns: typed objects' observation, tests).
    package func observeSavesSynchronously(_ handler: @escaping @Sendable (SaveSummary) -> Void) -> SaveObservation {
        let token = UUID()
        observers.withLock { $0[token] = handler }
        return SaveObservation { [weak self] in _ = self?.observers.withLock { $0.removeValue(forKey: token) } }
    }

    /// The entity indexes `names` and their sub-entities stand for (nil: all).
    private func wantedEntities(_ names: [String]?) throws -> [Bool]? {
        guard let names else { return nil }
        var wanted = [Bool](repeating: false, count: model.descriptions.count)
        for name in names {
            for entity in try model.require(name).family { wanted[entity] = true }
        }
        return wanted
    }

    func register(_ feed: SaveFeed) {
        saveFeeds.withLock { $0[ObjectIdentifier(feed)] = feed }
    }

    func unregister(_ feed: SaveFeed) {
        saveFeeds.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(feed)) }
    }
}

/// The saves of a store as an async sequence (``Store/saves(of:bufferLimit:)``).
public struct SaveEvents: AsyncSequence, Sendable {
    /// Each element is one save, or saves missed.
    public typealias Element = SaveEvent
    /// The sequence never throws.
    public typealias Failure = Never

    /// The feed's registration with its store, ended when the sequence and its iterators are gone.
    final class Registration: Sendable {
        let feed: SaveFeed
        weak let store: Store?
        init(feed: SaveFeed, store: Store) {
            self.feed = feed
            self.store = store
        }
        deinit {
            feed.cancel()
            store?.unregister(feed)
        }
    }

    let registration: Registration

    init(_ registration: Registration) { self.registration = registration }

    /// The iterator: its `next()` waits for the next save.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let registration: Registration

        /// The next event; nil once the store closed or the task was cancelled.
        public mutating func next() async -> SaveEvent? {
            guard let entry = await registration.feed.next() else { return nil }
            return SaveFeed.event(entry, registration.feed.wanted)
        }

        /// The next event (nil: ended), for a caller on any actor.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> SaveEvent? {
            guard let entry = await registration.feed.next() else { return nil }
            return SaveFeed.event(entry, registration.feed.wanted)
        }
    }

    /// An iterator over the saves.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(registration: registration) }
}
