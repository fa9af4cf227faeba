import CairnLog
import CairnSupport
import Foundation

/// A Cairn store: a model, the committed objects, and the contexts that read and change them.
///
/// ```swift
/// let store = try Store(at: "/var/lib/app/library.store", model: model)
/// let author = try store.viewContext.insert("Author")
/// try author.setValue("Ada Lovelace", forKey: "name")
/// try await store.viewContext.save()
/// ```
///
/// Every save appends one change record to the store's log; opening replays the log into an
/// immutable snapshot. Readers never block on a save and never see half of one. `Store` is
/// `Sendable`; contexts are too, and guard their state with a lock (see ``ObjectContext``).
public final class Store: Sendable {
    /// The app's model.
    public let model: Model
    /// The store's directory; nil for an in-memory store.
    public let directory: String?
    /// The options it was opened with.
    public let options: StoreOptions
    /// The store's log (nil in memory); a following store's is replaced when it opens the log
    /// again after a compaction in the writer's process replaced what it was to read next.
    var log: Log? { currentLog.withLock { $0 } }
    let currentLog: Protected<Log?>
    /// A following store's follower (``init(followingAt:options:)``).
    let follower = Protected<StoreFollower?>(nil)
    /// Held through one step of following (``followWriter()``): a step read from the log and
    /// applied whole before the next reads.
    let followingStep = Protected(())
    /// The published (durable, visible) snapshot and the failure, if any.
    let published: Protected<StoreSnapshot>
    /// Counts the snapshots published (the end of every context's ``ViewVersion`` chain).
    let viewVersion = ViewVersion(next: nil)
    /// Serializes the accept-and-submit step of saves; holds the state saves are checked against.
    let commits: Protected<CommitState>
    /// Save observers called on the saving task (``observeSavesSynchronously(_:)``).
    let observers = Protected<[UUID: @Sendable (SaveSummary) -> Void]>([:])
    /// Save observations' feeds (``observeSaves(of:bufferLimit:_:)``, ``saves(of:bufferLimit:)``),
    /// fed in LSN order under `commits`.
    let saveFeeds = Protected<[ObjectIdentifier: SaveFeed]>([:])
    private let mainContext = Protected<ObjectContext?>(nil)
    /// The next object key: its own lock, so that inserting never waits behind a save's I/O.
    private let keys: Protected<UInt64>
    let memoryIdentifier = UUID()
    /// Every model the store was written with, oldest first (the last is ``model``): what a
    /// base keeps of the log's model and migration records.
    let modelHistory: [Model]
    /// The models the log's records are written in, from the base on, each with the LSN it
    /// starts at (``OpenedLog/recordedModels``): what history decodes records with.
    let recordedModels: [RecordedModel]
    /// Held while the history consumers' file is read, changed and written; holds the horizon
    /// a running compaction installs (zero: none), below which no consumer may register.
    let historyConsumerFile = Protected<LSN>(.zero)
    /// The running compaction, the status and the automatic thresholds' byte counts.
    let compaction: Protected<CompactionState>
    let compactionObservers = Protected<[UUID: @Sendable (CompactionEvent) -> Void]>([:])
    /// CairnModels' bindings of typed classes to this store's entities, made once each.
    package let typedBindings = Protected<[TypedBindingKey: any Sendable & AnyObject]>([:])
    /// CairnModels' save observation that tells typed objects of the view context about saves.
    package let typedObservation = Protected<SaveObservation?>(nil)

    /// Opens (or creates) the store in `directory`.
    ///
    /// - Throws: ``StoreError`` (``StoreError/Code/modelMismatch`` with the differences when the
    ///   stored model is not `model` and the policy is `.fail`), or a `LogError` from the log.
    public convenience init(at directory: String, model: Model, options: StoreOptions = StoreOptions()) throws {
        let opened = try Self.openLog(directory: directory, model: model, options: options)
        self.init(model: model, directory: directory, options: options, opened: opened)
    }

    /// Opens the store in `directory` with the model it was last written with (as of
    /// ``StoreOptions/asOf`` when set), read from its log in the same pass that replays it:
    /// for tools that read any store, as `cairn` does, without a model of their own. Nothing is
    /// checked against an app's model or migrated; ``model`` is the stored one.
    ///
    /// (``storedModel(at:)`` followed by ``init(at:model:options:)-(String,_,_)`` reads the log twice.)
    ///
    /// - Throws: `LogError.Code.notFound` when the directory holds no store (none is
    ///   created); ``StoreError/Code/notObjectGraph`` when its log holds no model record yet or
    ///   does not start with one; otherwise as ``init(at:model:options:)-(String,_,_)``.
    public convenience init(at directory: String, options: StoreOptions = StoreOptions()) throws {
        let opened = try Self.openLog(directory: directory, model: nil, options: options)
        self.init(model: opened.snapshot.model, directory: directory, options: options, opened: opened)
    }

    /// Opens (or creates) the store in the directory at a file URL.
    ///
    /// - Throws: ``StoreError/Code/invalidLocation`` for a URL that is not a file URL; otherwise
    ///   as the initializer that takes a path.
    public convenience init(at url: URL, model: Model, options: StoreOptions = StoreOptions()) throws {
        guard url.isFileURL else {
            throw StoreError(.invalidLocation, "a store lives in a directory: \(url.absoluteString) is not a file URL")
        }
        try self.init(at: url.path, model: model, options: options)
    }

    /// Opens (or creates) the store in `directory` without holding up the calling task: the
    /// replay of a large log takes seconds, and runs on a thread of its own, not on one of the
    /// threads Swift's tasks share.
    ///
    /// ```swift
    /// let store = try await Store.open(at: path, model: model)
    /// ```
    public static func open(at directory: String, model: Model, options: StoreOptions = StoreOptions()) async throws -> Store {
        try await onOwnThread(named: "cairn-open") { try Store(at: directory, model: model, options: options) }
    }

    /// An empty store that lives in memory only.
    public convenience init(inMemory model: Model) {
        self.init(model: model, directory: nil, options: StoreOptions(), opened: nil)
    }

    private init(model: Model, directory: String?, options: StoreOptions, opened: OpenedLog?) {
        let snapshot = opened?.snapshot ?? StoreSnapshot(model: model)
        self.model = model
        self.modelHistory = opened?.history ?? [model]
        self.recordedModels = opened?.recordedModels ?? []
        self.directory = directory
        self.options = options
        self.currentLog = Protected(opened?.log)
        self.published = Protected(snapshot)
        self.commits = Protected(CommitState(accepted: snapshot))
        self.keys = Protected(snapshot.nextKey)
        self.compaction = Protected(CompactionState(baseBytes: opened?.baseBytes ?? 0, logBytes: opened?.logBytes ?? 0))
    }

    /// The main context: reads the latest committed state and follows every save.
    public var viewContext: ObjectContext {
        mainContext.withLock { context in
            if let context { return context }
            let created = ObjectContext(store: self, parent: nil, name: "view", followsStore: true)
            context = created
            return created
        }
    }

    /// A new context for work in the background, on the snapshot of now.
    public func newBackgroundContext(name: String = "background") -> ObjectContext {
        ObjectContext(store: self, parent: nil, name: name, followsStore: false)
    }

    /// Runs `body` with a new background context (Core Data's `performBackgroundTask`).
    ///
    /// The context, and every object of it, lives only while `body` runs: return object IDs
    /// (or plain values), not objects, and read them in another context with
    /// ``ObjectContext/objects(with:)``. An object returned from here answers that its context
    /// is gone.
    public func performBackgroundTask<T: Sendable>(_ body: @Sendable (ObjectContext) async throws -> T) async rethrows -> T {
        try await body(newBackgroundContext())
    }

    /// The LSN of the last save visible to readers.
    public var lastSaveLSN: LSN { published.withLock { $0.lsn } }

    /// The number of committed objects of an entity (its sub-entities included).
    public func count(of entityName: String) throws -> Int {
        let entity = try model.require(entityName)
        return published.withLock { $0.count(entity: entity.index) }
    }

    /// Finishes pending saves, stops a running compaction (the store stays as it was before
    /// it) and closes the log, releasing the store's lock. Later saves throw.
    ///
    /// Call it when done with a store: the view context and the store refer to each other, so a
    /// store that is dropped without `close()` keeps its log (and lock) open until the process ends.
    public func close() async throws {
        // (Saves accepted before the close are still told: the last of them to be published
        // ends the feeds, or this does when none is in flight.)
        commits.withLock { state in
            state.closed = true
            endFeedsIfClosed(state)
        }
        mainContext.withLock { $0 = nil }
        // (Its watch's descriptors go with it.)
        await follower.withLock { follower in
            defer { follower = nil }
            return follower
        }?.stop()
        await waitForCompaction(stopping: true)
        try await log?.close()
    }

    /// What opening the store's log found and did: a torn tail saved and cut (or, read-only,
    /// ignored), left-over files removed, a fallback manifest. Nil for an in-memory store.
    public var recoveryReport: RecoveryReport? { log?.recoveryReport }

    /// Ends the save feeds once the store is closed and no accepted save waits to be told (or
    /// the log failed: none will be). Called under `commits`.
    func endFeedsIfClosed(_ state: CommitState) {
        guard state.closed, state.inFlight.isEmpty || state.failure != nil else { return }
        for feed in saveFeeds.withLock({ Array($0.values) }) { feed.finish() }
    }

    /// The current published snapshot.
    var snapshot: StoreSnapshot { published.withLock { $0 } }

    /// Hands out `count` consecutive object keys.
    func reserveKeys(_ count: Int) throws -> Range<UInt64> {
        try keys.withLock { next in
            guard count >= 0, UInt64(count) < ObjectID.keyLimit - next else { throw StoreError(.closed, "the store has used up its object keys") }
            defer { next += UInt64(count) }
            return next..<(next + UInt64(count))
        }
    }
}

/// The state saves are checked and applied against, ahead of what readers see.
struct CommitState: Sendable {
    /// Every accepted save applied, durable or not yet.
    var accepted: StoreSnapshot
    /// Accepted saves not yet durable, in LSN order, with the snapshot each produces.
    var inFlight: [(lsn: LSN, snapshot: StoreSnapshot, save: EncodedSave)] = []
    /// The failure that stops all later saves.
    var failure: (any Error)?
    var closed = false

    init(accepted: StoreSnapshot) {
        self.accepted = accepted
    }
}

extension Model {
    /// The entity named `name`, or an error naming it.
    func require(_ name: String) throws -> EntityDescription {
        guard let entity = entity(named: name) else {
            throw StoreError(.unknownName, "the model has no entity \(name)", entity: name)
        }
        return entity
    }
}
