import CairnLog
import CairnSupport
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
    }

    /// Fetches `request` in `store` and follows its saves.
    ///
    /// - Parameters:
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
        // published before is in the fetch, and its event is skipped).
        // (Every save, so that the results' LSN follows the store's; paused until the controller
        // is made: what comes meanwhile waits in the feed.)
        let holder = WeakController()
        feed = SaveFeed(
            wanted: nil, limit: Store.defaultSaveBuffer, after: store.lastSaveLSN, wantsStates: true, paused: true,
            onEnd: { holder.controller?.end() }
        ) { entry in
            holder.controller?.follow(entry)
        }
        store.register(feed)
        let snapshot = store.snapshot
        let list = OrderedIDList(try Self.fetchAll(query, fetcher, at: snapshot))
        var state = State(
            snapshot: snapshot, list: list, sections: [], pages: 1,
            results: FetchedResults(lsn: snapshot.lsn, sections: [], list: list, window: 0..<0))
        self.state = Protected(state)
        if sectionKey != nil && !windowed { state.sections = wholeSections(list, snapshot) }
        state.results = results(state)
        self.state.withLock { $0 = state }
        holder.controller = self
        feed.resume()
    }

    deinit {
        feed.cancel()
        store.unregister(feed)
    }

    /// The results as of the last save the controller followed.
    public var results: FetchedResults { state.withLock { $0.results } }

    /// Calls `handler` with every update from now on, in LSN order, one call at a time, on the
    /// controller's thread. Keep the returned observation while you want them.
    public func observe(_ handler: @escaping @Sendable (FetchedResultsUpdate) -> Void) -> SaveObservation {
        let token = UUID()
        state.withLock { $0.listeners[token] = handler }
        return SaveObservation { [weak self] in _ = self?.state.withLock { $0.listeners.removeValue(forKey: token) } }
    }

    /// Shows one more page (with paging; otherwise does nothing), telling listeners what it added.
    public func loadMore() {
        guard pageSize != nil else { return }
        let (update, listeners) = state.withLock { state -> (FetchedResultsUpdate, [@Sendable (FetchedResultsUpdate) -> Void]) in
            let old = state.results
            state.pages += 1
            state.results = results(state)
            return (windowUpdate(from: old, to: state.results, changed: []), Array(state.listeners.values))
        }
        for listener in listeners { listener(update) }
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

    /// Takes one save (or word of saves missed) from the feed, on its thread.
    func follow(_ entry: SaveFeed.Entry) {
        let outcome = state.withLock { state -> (FetchedResultsUpdate, [@Sendable (FetchedResultsUpdate) -> Void])? in
            let update: FetchedResultsUpdate?
            switch entry {
            case .save(let save):
                guard save.lsn > state.snapshot.lsn, let after = save.snapshot else { return nil }
                update = apply(save, reaching: after, to: &state)
            case .missed(let missed):
                guard missed.through > state.snapshot.lsn else { return nil }
                update = refetch(at: store.snapshot, changed: nil, to: &state)
            }
            guard let update, !update.changes.isEmpty || update.results.lsn != state.results.lsn else { return nil }
            return (update, Array(state.listeners.values))
        }
        guard let (update, listeners) = outcome else { return }
        for listener in listeners { listener(update) }
    }

    /// Applies one save, whose state is `after`, to the results.
    private func apply(_ save: SaveSummary, reaching after: StoreSnapshot, to state: inout State) -> FetchedResultsUpdate? {
        let changed = save.inserted + save.updated.map(\.id) + save.deleted
        let before = state.snapshot
        // A change that cannot be traced, or one to many of the results: fetched again.
        guard let affected = dependencies.affected(by: changed, before: before, after: after),
            affected.count <= max(1_000, state.list.count / 8),
            let (list, diff) = updated(state.list, affected, before: before, after: after)
        else {
            return refetch(at: after, changed: Set(changed), to: &state)
        }
        let old = state.results
        state.snapshot = after
        guard !affected.isEmpty else {
            // Nothing the results read changed: they are the same, at a later LSN.
            state.results = FetchedResults(lsn: after.lsn, sections: old.sections, list: old.list, window: old.window)
            return nil
        }
        state.list = list
        if sectionKey != nil && !windowed { state.sections = sectionsAfter(state.sections, diff, before: before, after: after) }
        state.results = results(state)
        if windowed { return windowUpdate(from: old, to: state.results, changed: affected) }
        return update(state.results, diff, oldSections: old.sections)
    }

    /// Fetches again at `snapshot` and tells what changed between the results shown and the new
    /// ones (after missed saves, a change the dependencies cannot trace, or a save that changes
    /// many of the results).
    private func refetch(at snapshot: StoreSnapshot, changed: Set<ObjectID>?, to state: inout State) -> FetchedResultsUpdate? {
        guard let ids = try? Self.fetchAll(query, fetcher, at: snapshot) else { return nil }
        let old = state.results
        state.list = OrderedIDList(ids)
        state.snapshot = snapshot
        if sectionKey != nil && !windowed { state.sections = wholeSections(state.list, snapshot) }
        state.results = results(state)
        return windowUpdate(from: old, to: state.results, changed: changed)
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
        var removed: [(id: ObjectID, old: Int)] = []
        for id in ids where matches(id, in: before) {
            guard let key = order.key(id, in: before) else { continue }
            let place = list.place { order.key($0, in: before).map { order.precedes($0, key) } ?? false }
            guard list.id(at: place) == id else { return nil }
            removed.append((id, list.index(of: place)))
        }
        for (id, _) in removed.sorted(by: { $0.old > $1.old }) {
            guard let key = order.key(id, in: before) else { continue }
            list.remove(at: list.place { order.key($0, in: before).map { order.precedes($0, key) } ?? false })
        }
        var added: [(ObjectID, ResultOrder.Key)] = []
        for id in ids where matches(id, in: after) {
            guard let key = order.key(id, in: after) else { continue }
            list.insert(id, at: list.place { order.key($0, in: after).map { order.precedes($0, key) } ?? false })
            added.append((id, key))
        }
        let inserted = added.map { id, key in (id: id, new: list.index(of: list.place { order.key($0, in: after).map { order.precedes($0, key) } ?? false })) }
        var diff = ResultDiff()
        let removedIDs = Dictionary(uniqueKeysWithValues: removed.map { ($0.id, $0.old) })
        let insertedIDs = Dictionary(uniqueKeysWithValues: inserted.map { ($0.id, $0.new) })
        let oldPlaces = removed.map(\.old).sorted(), newPlaces = inserted.map(\.new).sorted()
        func countBelow(_ sorted: [Int], _ index: Int) -> Int {
            var low = 0, high = sorted.count
            while low < high {
                let middle = (low + high) / 2
                if sorted[middle] < index { low = middle + 1 } else { high = middle }
            }
            return low
        }
        for (id, old) in removed where insertedIDs[id] == nil { diff.deleted.append((id, old)) }
        for (id, new) in inserted where removedIDs[id] == nil { diff.inserted.append((id, new)) }
        for (id, old) in removed {
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

    private func wholeSections(_ list: OrderedIDList, _ snapshot: StoreSnapshot) -> [FetchedSection] { sections(of: list.ids, in: snapshot) }

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

    /// The part of the order the results show.
    private func window(_ state: State) -> Range<Int> {
        let start = min(max(0, request.fetchOffset), state.list.count)
        var length = state.list.count - start
        if let limit = request.fetchLimit { length = min(length, max(0, limit)) }
        if let pageSize { length = min(length, pageSize.multipliedReportingOverflow(by: state.pages).partialValue) }
        return start..<(start + length)
    }

    /// The results `state` shows.
    private func results(_ state: State) -> FetchedResults {
        let window = window(state)
        let sections: [FetchedSection]
        if sectionKey == nil {
            sections = [FetchedSection(value: .null, count: window.count)]
        } else if windowed {
            sections = self.sections(of: state.list.ids(window), in: state.snapshot)
        } else {
            sections = state.sections
        }
        return FetchedResults(lsn: state.snapshot.lsn, sections: sections, list: state.list, window: window)
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

/// The controller a feed's handler reaches, held weakly (the store holds the feed).
private final class WeakController: @unchecked Sendable {
    // Safety: set once, in the controller's init, before the feed can deliver anything that
    // reads it (the feed's first delivery comes from a save after the registration, which
    // happens-after the write through the feed's lock).
    weak var controller: FetchedResultsController?
}
