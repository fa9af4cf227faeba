import CairnLog
import CairnSupport
import DequeModule
import Foundation

/// The results of a fetch request, kept up to date as saves change them, with what each save
/// changed as a table view applies it (Core Data's `NSFetchedResultsController`, Vokoder's data
/// sources, GRDB's `ValueObservation`).
///
/// ```swift
/// let books = try FetchedResultsController(
///     FetchRequest("Book", predicate: .compare("year", .greater, 1900), sortKeys: [SortKey("author.name"), SortKey("title")]),
///     in: store, sectionKey: "author.name")
/// show(books.results)                               // sections of object IDs
/// let observation = books.observe { update in
///     tableView.apply(update.changes)               // deletes, inserts, moves, updates
/// }
/// ```
///
/// The results follow the store's saves (a context's unsaved changes are not in them), each
/// save's changes worked out from what it changed, not by fetching again: a save that changes
/// one object of a million-object result moves one ID. A predicate or sort key that reads
/// through relationships (`author.name`) follows changes to the related objects, through the
/// relationships' inverses (without an inverse, a save that changes a related object is
/// answered by fetching again). Updates come one at a time, in LSN order, on a thread of the
/// controller's own; a save never waits for them.
public final class FetchedResultsController: Sendable {
    /// The request (its offset and limit say which part of the order the results show).
    public let request: FetchRequest
    /// The key path whose values group the results in sections (the first sort key's); nil: one
    /// section.
    public let sectionKey: String?
    /// How many objects each page adds (``loadMore()``); nil: no paging.
    public let pageSize: Int?

    let store: Store
    let query: PreparedQuery
    let order: ResultOrder
    let dependencies: ResultDependencies
    /// A context with no changes of its own, for fetching at a given snapshot.
    let fetcher: ObjectContext
    let state: Protected<State>
    /// The controller's registration for the store's saves.
    private let feed: SaveFeed
    /// The async sequences of updates handed out (``updates(bufferLimit:)``), ended with the store.
    let mailboxes = Protected<[UUID: Weak<FetchedResultsUpdates.Mailbox>]>([:])
    /// Whether the store closed: no update comes any more.
    let ended = Protected(false)

    struct State {
        var snapshot: StoreSnapshot
        /// Every match, in order.
        var list: OrderedIDList
        /// The sections of the whole list (results with a section key and no page: kept as
        /// saves change them).
        var sections: [FetchedSection]
        var pages: Int
        var results: FetchedResults
        var listeners: [UUID: @Sendable (FetchedResultsUpdate) -> Void] = [:]
        /// Updates made and not yet told, in order, each with the listeners to tell.
        var outbox = Deque<(FetchedResultsUpdate, [@Sendable (FetchedResultsUpdate) -> Void])>()
        /// Whether a thread is telling the outbox's updates.
        var delivering = false
        /// A fetch failed: the next save fetches again rather than apply its changes.
        var stale = false
    }

    /// Fetches `request` in `store` and follows its saves.
    ///
    /// - Parameters:
    ///   - request: The fetch: entity, predicate, sort keys (at least one), offset and limit.
    ///   - store: The store whose view of saves the results follow.
    ///   - sectionKey: A key path (an attribute, or through to-one relationships) that groups the
    ///     results; it must be the first sort key's, as Core Data requires.
    ///   - pageSize: Show the first `pageSize` objects (after the request's offset, within its
    ///     limit); ``loadMore()`` shows `pageSize` more.
    /// - Throws: ``StoreError`` for a request that does not resolve against the model, a section
    ///   key that is not the first sort key, or a page size below 1.
    public init(_ request: FetchRequest, in store: Store, sectionKey: String? = nil, pageSize: Int? = nil) throws {
        self.request = request
        self.sectionKey = sectionKey
        self.pageSize = pageSize
        self.store = store
        let query = try PreparedQuery(request, model: store.model)
        self.query = query
        order = ResultOrder(query: query)
        if let sectionKey, request.sortKeys.first?.key != sectionKey {
            throw StoreError(
                .invalidArgument,
                "fetched results of \(request.entityName): section key \(sectionKey) must be the first sort key (sort by it first, as Core Data asks)",
                entity: request.entityName, property: sectionKey)
        }
        if let pageSize, pageSize < 1 {
            throw StoreError(.invalidArgument, "fetched results of \(request.entityName): page size \(pageSize) is below 1", entity: request.entityName)
        }
        dependencies = ResultDependencies(query)
        fetcher = store.newBackgroundContext(name: "fetched results of \(request.entityName)")
        // Registered before the first fetch: a save published after it is in the feed (one
        // published before is in the fetch, and its event is skipped). Every save, so that the
        // results' LSN follows the store's; paused until the controller is made (what comes
        // meanwhile waits in the feed).
        let holder = WeakController()
        feed = SaveFeed(
            wanted: nil, limit: Store.defaultSaveBuffer, after: store.lastSaveLSN, wantsStates: true, paused: true,
            onEnd: { holder.controller?.end() }
        ) { entry in
            holder.controller?.follow(entry)
        }
        store.register(feed)
        let snapshot = store.snapshot
        let ids: [ObjectID]
        do {
            ids = try Self.fetchAll(query, fetcher, at: snapshot)
        } catch {
            store.unregister(feed)
            throw error
        }
        let list = OrderedIDList(ids)
        state = Protected(
            State(snapshot: snapshot, list: list, sections: [], pages: 1, results: FetchedResults(lsn: snapshot.lsn, sections: [], list: list, window: 0..<0)))
        let sections = sectionKey != nil && !windowed ? self.sections(of: ids, in: snapshot) : []
        let results = makeResults(list: list, snapshot: snapshot, sections: sections, pages: 1)
        state.withLock { state in (state.sections, state.results) = (sections, results) }
        holder.controller = self
        feed.resume()
        // (A store closed before the controller was made tells it nothing more.)
        if store.commits.withLock({ $0.closed }) { end() }
    }

    deinit {
        feed.cancel()
        store.unregister(feed)
    }

    /// The results as of the last save the controller followed.
    public var results: FetchedResults { state.withLock { $0.results } }

    /// Calls `handler` first with the results as they are now (an update with no changes), then
    /// with every update after them, in order, one call at a time, on the controller's thread
    /// (or, for ``loadMore()``'s, on the thread that asked for the page, when no other update is
    /// being told). Keep the returned observation while you want them.
    public func observe(_ handler: @escaping @Sendable (FetchedResultsUpdate) -> Void) -> SaveObservation {
        let token = UUID()
        let drain = state.withLock { state -> Bool in
            state.listeners[token] = handler
            return enqueue(FetchedResultsUpdate(initial: state.results), to: [handler], in: &state)
        }
        if drain { deliverQueued() }
        return SaveObservation { [weak self] in _ = self?.state.withLock { $0.listeners.removeValue(forKey: token) } }
    }

    /// Shows one more page (with paging; otherwise does nothing), telling listeners what it added.
    public func loadMore() {
        guard pageSize != nil else { return }
        let drain = state.withLock { state -> Bool in
            let old = state.results
            state.pages += 1
            state.results = makeResults(list: state.list, snapshot: state.snapshot, sections: state.sections, pages: state.pages)
            return enqueue(windowUpdate(from: old, to: state.results, changed: []), to: Array(state.listeners.values), in: &state)
        }
        if drain { deliverQueued() }
    }

    // MARK: Telling updates

    /// Queues `update` for `listeners` (under the state lock, so in the order updates are made);
    /// true when the caller is to tell the queued updates (no other thread is).
    private func enqueue(
        _ update: FetchedResultsUpdate, to listeners: [@Sendable (FetchedResultsUpdate) -> Void], in state: inout State
    ) -> Bool {
        guard !listeners.isEmpty, !update.changes.isEmpty || update.isInitial else { return false }
        state.outbox.append((update, listeners))
        guard !state.delivering else { return false }
        state.delivering = true
        return true
    }

    /// Tells the queued updates, one at a time, until none is left.
    private func deliverQueued() {
        typealias Queued = (FetchedResultsUpdate, [@Sendable (FetchedResultsUpdate) -> Void])
        while true {
            let next = state.withLock { state -> Queued? in
                guard let next = state.outbox.popFirst() else {
                    state.delivering = false
                    return nil
                }
                return next
            }
            guard let (update, listeners) = next else { return }
            for listener in listeners { listener(update) }
        }
    }

    // MARK: Following saves

    /// Ends the async sequences of updates (the store closed).
    func end() {
        ended.withLock { $0 = true }
        for mailbox in mailboxes.withLock({ $0.values.compactMap(\.object) }) { mailbox.finish() }
    }

    /// Whether the results show a part of the order (an offset, a limit or pages): their changes
    /// are then worked out from the part shown before and after.
    var windowed: Bool { request.fetchOffset > 0 || request.fetchLimit != nil || pageSize != nil }

    /// What following one save made: the new state, and the diff of the whole list (nil: work the
    /// change set out from the IDs shown).
    private struct Followed {
        var snapshot: StoreSnapshot
        var list: OrderedIDList
        var sections: [FetchedSection]
        var diff: ResultDiff?
        var changed: Set<ObjectID>?
        var stale = false
    }

    /// Takes one save (or word of saves missed) from the feed, on its thread. Only this changes
    /// the list, its state and sections (the feed tells one entry at a time): they are worked out
    /// outside the lock, so that reading the results never waits for a fetch.
    func follow(_ entry: SaveFeed.Entry) {
        let (before, list, sections, stale) = state.withLock { ($0.snapshot, $0.list, $0.sections, $0.stale) }
        let followed: Followed?
        switch entry {
        case .save(let save):
            guard save.lsn > before.lsn, let after = save.snapshot else { return }
            followed = stale ? refetch(at: after, changed: nil, sections) : apply(save, before: before, after: after, list, sections)
        case .missed(let missed):
            guard missed.through > before.lsn else { return }
            followed = refetch(at: store.snapshot, changed: nil, sections)
        }
        guard let followed else { return }
        let drain = state.withLock { state -> Bool in
            let old = state.results
            (state.snapshot, state.list, state.sections, state.stale) = (followed.snapshot, followed.list, followed.sections, followed.stale)
            state.results = makeResults(list: followed.list, snapshot: followed.snapshot, sections: followed.sections, pages: state.pages)
            let update: FetchedResultsUpdate
            if let diff = followed.diff, !windowed {
                update = self.update(state.results, diff, oldSections: old.sections)
            } else {
                update = windowUpdate(from: old, to: state.results, changed: followed.changed)
            }
            return enqueue(update, to: Array(state.listeners.values), in: &state)
        }
        if drain { deliverQueued() }
    }

    /// One save applied to `list` (at `before`), whose state is `after`.
    private func apply(_ save: SaveSummary, before: StoreSnapshot, after: StoreSnapshot, _ list: OrderedIDList, _ sections: [FetchedSection]) -> Followed? {
        // A change that cannot be traced, or one to many of the results: fetched again.
        guard let affected = dependencies.affected(by: save.inserted + save.deleted, updated: save.updated, before: before, after: after) else {
            return refetch(at: after, changed: nil, sections)
        }
        guard !affected.isEmpty else {
            // Nothing the results read changed: the same results, at a later LSN.
            return Followed(snapshot: after, list: list, sections: sections, diff: ResultDiff(), changed: [])
        }
        guard affected.count <= Self.refetchThreshold(list.count), let (newList, diff) = updated(list, affected, before: before, after: after) else {
            return refetch(at: after, changed: affected, sections)
        }
        var newSections = sections
        if sectionKey != nil && !windowed { newSections = sectionsAfter(sections, diff, before: before, after: after) }
        return Followed(snapshot: after, list: newList, sections: newSections, diff: diff, changed: affected)
    }

    /// The most objects a save may change for its changes to be applied one by one (more are
    /// fetched again: a sort costs less than that many binary searches).
    static func refetchThreshold(_ results: Int) -> Int { max(1_000, results / 8) }

    /// The results fetched again at `snapshot` (after missed saves, a change the dependencies
    /// cannot trace, or a save that changes many of the results); `changed`: the objects to show
    /// as updated where they keep their place (nil: all). A failed fetch keeps the list and
    /// marks the results stale: the next save fetches again.
    private func refetch(at snapshot: StoreSnapshot, changed: Set<ObjectID>?, _ sections: [FetchedSection]) -> Followed? {
        guard let ids = try? Self.fetchAll(query, fetcher, at: snapshot) else {
            let (list, old) = state.withLock { ($0.list, $0.snapshot) }
            return Followed(snapshot: old, list: list, sections: sections, diff: ResultDiff(), changed: [], stale: true)
        }
        let list = OrderedIDList(ids)
        let newSections = sectionKey != nil && !windowed ? self.sections(of: ids, in: snapshot) : sections
        return Followed(snapshot: snapshot, list: list, sections: newSections, diff: nil, changed: changed)
    }

    /// `list` with the objects `affected` taken out as `before` placed them and put back as
    /// `after` places them, and what that did; nil when a result is not where `before` places
    /// it (the list does not hold what `before` gives: fetched again).
    private func updated(
        _ list: OrderedIDList, _ affected: Set<ObjectID>, before: StoreSnapshot, after: StoreSnapshot
    ) -> (list: OrderedIDList, diff: ResultDiff)? {
        var list = list
        // (In ID order: the same work whatever order the set holds them in.)
        let ids = affected.sorted()
        var removed: [(id: ObjectID, old: Int, key: ResultOrder.Key)] = []
        for id in ids where matches(id, in: before) {
            guard let key = order.key(id, in: before) else { continue }
            let place = place(of: key, in: list, at: before)
            guard list.id(at: place) == id else { return nil }
            removed.append((id, list.index(of: place), key))
        }
        for (_, _, key) in removed.sorted(by: { $0.old > $1.old }) { list.remove(at: place(of: key, in: list, at: before)) }
        var added: [ResultOrder.Key] = []
        for id in ids where matches(id, in: after) {
            guard let key = order.key(id, in: after) else { continue }
            list.insert(id, at: place(of: key, in: list, at: after))
            added.append(key)
        }
        let inserted = added.map { key in (id: key.id, new: list.index(of: place(of: key, in: list, at: after))) }
        var diff = ResultDiff()
        let removedIDs = Dictionary(uniqueKeysWithValues: removed.map { ($0.id, $0.old) })
        let insertedIDs = Dictionary(uniqueKeysWithValues: inserted.map { ($0.id, $0.new) })
        let oldPlaces = removed.map { $0.old }.sorted(), newPlaces = inserted.map(\.new).sorted()
        func countBelow(_ sorted: [Int], _ index: Int) -> Int {
            var low = 0, high = sorted.count
            while low < high {
                let middle = (low + high) / 2
                if sorted[middle] < index { low = middle + 1 } else { high = middle }
            }
            return low
        }
        for (id, old, _) in removed where insertedIDs[id] == nil { diff.deleted.append((id, old)) }
        for (id, new) in inserted where removedIDs[id] == nil { diff.inserted.append((id, new)) }
        for (id, old, _) in removed {
            guard let new = insertedIDs[id] else { continue }
            let changedSection = sectionKey != nil && !sameSection(id, before: before, after: after)
            diff.kept.append(
                ResultDiff.Kept(
                    id: id, old: old, new: new, gapOld: old - countBelow(oldPlaces, old), gapNew: new - countBelow(newPlaces, new),
                    changedSection: changedSection,
                    changed: true))
        }
        return (list, diff)
    }

    /// The first place of `list` (in the order `snapshot` gives its IDs) whose ID does not come
    /// before `key`: where an ID of that key is, or goes.
    private func place(of key: ResultOrder.Key, in list: OrderedIDList, at snapshot: StoreSnapshot) -> OrderedIDList.Place {
        list.place { order.key($0, in: snapshot).map { order.precedes($0, key) } ?? false }
    }

    /// Whether `id` is one of the results in `snapshot`.
    func matches(_ id: ObjectID, in snapshot: StoreSnapshot) -> Bool {
        guard query.family.contains(id.entity), let record = snapshot.record(id) else { return false }
        return query.predicate?.evaluate(id, ObjectView(base: .row(record.row), changes: nil), ObjectReader.committed(snapshot)) ?? true
    }

    // MARK: Sections

    /// The section value of `id` in `snapshot` (the first sort key's value).
    private func sectionValue(_ id: ObjectID, in snapshot: StoreSnapshot) -> Value {
        order.key(id, in: snapshot)?.values.first ?? .null
    }

    private func sameSection(_ id: ObjectID, before: StoreSnapshot, after: StoreSnapshot) -> Bool {
        ResultOrder.compare(sectionValue(id, in: before), sectionValue(id, in: after)) == .orderedSame
    }

    /// Whether section value `a` comes before `b` in the results' order.
    private func sectionPrecedes(_ a: Value, _ b: Value) -> Bool {
        let result = ResultOrder.compare(a, b)
        guard result != .orderedSame else { return false }
        let ascending = (request.sortKeys.first?.ascending ?? true) != request.reversesOrder
        return (result == .orderedAscending) == ascending
    }

    private func sameValue(_ a: Value, _ b: Value) -> Bool { ResultOrder.compare(a, b) == .orderedSame }

    /// The sections of the IDs `ids` (in order) read from `snapshot`.
    private func sections(of ids: [ObjectID], in snapshot: StoreSnapshot) -> [FetchedSection] {
        guard sectionKey != nil else { return [FetchedSection(value: .null, count: ids.count)] }
        var sections: [FetchedSection] = []
        for id in ids {
            let value = sectionValue(id, in: snapshot)
            if let last = sections.last, sameValue(last.value, value) {
                sections[sections.count - 1].count += 1
            } else {
                sections.append(FetchedSection(value: value, count: 1))
            }
        }
        return sections
    }

    /// `sections` after the items `diff` lists left their old sections and joined their new ones.
    private func sectionsAfter(_ sections: [FetchedSection], _ diff: ResultDiff, before: StoreSnapshot, after: StoreSnapshot) -> [FetchedSection] {
        var sections = sections
        func index(of value: Value) -> (Int, found: Bool) {
            var low = 0, high = sections.count
            while low < high {
                let middle = (low + high) / 2
                if sectionPrecedes(sections[middle].value, value) { low = middle + 1 } else { high = middle }
            }
            return (low, low < sections.count && sameValue(sections[low].value, value))
        }
        for id in diff.deleted.map(\.id) + diff.kept.map(\.id) {
            let (at, found) = index(of: sectionValue(id, in: before))
            guard found else { continue }
            sections[at].count -= 1
            if sections[at].count == 0 { sections.remove(at: at) }
        }
        for id in diff.inserted.map(\.id) + diff.kept.map(\.id) {
            let value = sectionValue(id, in: after)
            let (at, found) = index(of: value)
            if found { sections[at].count += 1 } else { sections.insert(FetchedSection(value: value, count: 1), at: at) }
        }
        return sections
    }

    // MARK: Results and their changes

    /// The part of `list`'s order the results show with `pages` loaded.
    private func window(_ list: OrderedIDList, pages: Int) -> Range<Int> {
        let start = min(max(0, request.fetchOffset), list.count)
        var length = list.count - start
        if let limit = request.fetchLimit { length = min(length, max(0, limit)) }
        if let pageSize {
            let (loaded, overflow) = pageSize.multipliedReportingOverflow(by: pages)
            length = min(length, overflow ? .max : loaded)
        }
        return start..<(start + length)
    }

    /// The results of `list` (at `snapshot`, with the whole list's `sections` when kept) with
    /// `pages` loaded.
    private func makeResults(list: OrderedIDList, snapshot: StoreSnapshot, sections: [FetchedSection], pages: Int) -> FetchedResults {
        let window = window(list, pages: pages)
        let shown: [FetchedSection]
        if sectionKey == nil {
            shown = [FetchedSection(value: .null, count: window.count)]
        } else if windowed {
            shown = self.sections(of: list.ids(window), in: snapshot)
        } else {
            shown = sections
        }
        return FetchedResults(lsn: snapshot.lsn, sections: shown, list: list, window: window)
    }

    /// The update from a diff of the whole list.
    private func update(_ results: FetchedResults, _ diff: ResultDiff, oldSections: [FetchedSection]) -> FetchedResultsUpdate {
        let (changes, difference) = diff.changes(
            oldSections: oldSections, newSections: results.sections, same: sameValue, precedes: sectionPrecedes)
        return FetchedResultsUpdate(results: results, changes: changes, difference: difference)
    }

    /// The update between two results, worked out from the IDs they show (`changed`: the objects
    /// changed, shown as updated when they keep their place; nil: all of them).
    func windowUpdate(from old: FetchedResults, to new: FetchedResults, changed: Set<ObjectID>?) -> FetchedResultsUpdate {
        let oldIDs = old.objectIDs, newIDs = new.objectIDs
        var newIndex: [ObjectID: Int] = [:]
        newIndex.reserveCapacity(newIDs.count)
        for (index, id) in newIDs.enumerated() { newIndex[id] = index }
        var oldIndex: [ObjectID: Int] = [:]
        oldIndex.reserveCapacity(oldIDs.count)
        for (index, id) in oldIDs.enumerated() { oldIndex[id] = index }
        var diff = ResultDiff()
        let oldPlaces = ResultDiff.Places(old.sections), newPlaces = ResultDiff.Places(new.sections)
        for (index, id) in oldIDs.enumerated() {
            guard let newPlace = newIndex[id] else {
                diff.deleted.append((id, index))
                continue
            }
            let changedSection =
                sectionKey != nil
                && !sameValue(old.sections[oldPlaces.place(index).section].value, new.sections[newPlaces.place(newPlace).section].value)
            diff.kept.append(
                ResultDiff.Kept(
                    id: id, old: index, new: newPlace, gapOld: 0, gapNew: 0, changedSection: changedSection, changed: changed?.contains(id) ?? true))
        }
        for (index, id) in newIDs.enumerated() where oldIndex[id] == nil { diff.inserted.append((id, index)) }
        let (changes, difference) = diff.changes(oldSections: old.sections, newSections: new.sections, same: sameValue, precedes: sectionPrecedes)
        return FetchedResultsUpdate(results: new, changes: changes, difference: difference)
    }

    /// Every match of `query` at `snapshot`, in order (no offset or limit).
    static func fetchAll(_ query: PreparedQuery, _ fetcher: ObjectContext, at snapshot: StoreSnapshot) throws -> [ObjectID] {
        var whole = query.request
        whole.fetchOffset = 0
        whole.fetchLimit = nil
        return try fetcher.matchingIDs(whole, in: snapshot)
    }
}

/// The controller a feed's handlers reach, held weakly (the store holds the feed), behind a
/// lock: the store's close may reach it while the controller is being made.
private final class WeakController: Sendable {
    private struct Reference {
        weak var controller: FetchedResultsController?
    }
    private let reference = Protected(Reference())

    var controller: FetchedResultsController? {
        get { reference.withLock { $0.controller } }
        set { reference.withLock { $0.controller = newValue } }
    }
}
