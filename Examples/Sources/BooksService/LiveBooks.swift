import CairnModels
import ServiceLifecycle

/// One event of `GET /books/live`: the books the query matches after a save changed them.
public struct LiveBooksEvent: Codable, Sendable, Hashable {
    /// The log position of the save the books are as of.
    public var lsn: UInt64
    /// True for the first event, the books as they were when the stream opened.
    public var initial: Bool
    /// The ISBNs of the books that joined the results (all of them, in the first event), in
    /// ISBN order; a book that only moved is not one of them.
    public var inserted: [String]
    /// How many books left the results (a book that only moved did not).
    public var removed: Int
    /// The books the query matches now, in its order.
    public var books: [BookRecord]
}

extension BookCatalog {
    /// The live results of `query`, followed from now on (a query that does not translate
    /// throws here, before any response is sent).
    public func live(_ query: BookQuery) throws -> LiveBooks {
        LiveBooks(store: store, controller: try FetchedResultsController(query.descriptor, in: store))
    }
}

/// A query's results as they change: a `FetchedResultsController` works out each save from its
/// changes (docs/OBSERVING.md), and the books are read by their IDs, as the store holds them
/// when the event is made, in a context of the task that follows them.
public struct LiveBooks: Sendable {
    let store: Store
    let controller: FetchedResultsController

    /// Calls `send` with the results as they are, then again each time a save changes them,
    /// until the store closes, the task is cancelled, the service shuts down gracefully, or
    /// `send` throws (the client went away).
    public func follow(send: (LiveBooksEvent) async throws -> Void) async throws {
        for await update in controller.updates().cancelOnGracefulShutdown() {
            try await send(event(for: update))
        }
    }

    /// The event of one update: the diff by ISBN, and the books after it.
    private func event(for update: FetchedResultsUpdate) -> LiveBooksEvent {
        let context = store.newBackgroundContext(name: "live")
        let books = update.results.models(Book.self, in: context).map(BookRecord.init)
        var inserted: Set<ObjectID> = []
        var removed = 0
        // A book that only changed its place is a removal and an insertion associated as a move:
        // neither is counted.
        for change in update.difference.inferringMoves() {
            switch change {
            case .insert(_, let id, nil): inserted.insert(id)
            case .remove(_, _, nil): removed += 1
            case .insert, .remove: break
            }
        }
        let isbns = update.isInitial ? books.map(\.isbn) : context.models(inserted).map(\.isbn)
        return LiveBooksEvent(lsn: update.results.lsn.rawValue, initial: update.isInitial, inserted: isbns, removed: removed, books: books)
    }
}

extension ObjectContext {
    /// The books of `ids` this context has.
    fileprivate func models(_ ids: Set<ObjectID>) -> [Book] {
        ids.compactMap { model(for: $0, as: Book.self) }.sorted { $0.isbn < $1.isbn }
    }
}
