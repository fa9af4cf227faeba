import CairnSupport
import Observation

/// Fetched results as an `Observable` object (SwiftData's `@Query`, on Linux): code that reads
/// ``results`` inside `withObservationTracking` (or a view that observes it) is told when a save
/// changes them.
///
/// ```swift
/// let books = try FetchedResultsController(FetchRequest("Book", sortKeys: [SortKey("title")]), in: store).observed()
/// withObservationTracking { render(books.results) } onChange: { scheduleRender() }
/// ```
public final class ObservedResults: Observable, Sendable {
    private let registrar = ObservationRegistrar()
    private let current: Protected<(results: FetchedResults, changes: FetchedChanges?)>
    private let observation: Protected<SaveObservation?> = Protected(nil)
    /// The controller whose results these are.
    public let controller: FetchedResultsController

    init(_ controller: FetchedResultsController) {
        self.controller = controller
        current = Protected((controller.results, nil))
        // (The first update is the results as they are at the registration: nothing between.)
        let observation = controller.observe { [weak self] update in self?.take(update) }
        self.observation.withLock { $0 = observation }
    }

    /// The results as of the last save that changed them.
    public var results: FetchedResults {
        registrar.access(self, keyPath: \.results)
        return current.withLock { $0.results }
    }

    /// What the last update changed (nil before any).
    public var lastChanges: FetchedChanges? {
        registrar.access(self, keyPath: \.lastChanges)
        return current.withLock { $0.changes }
    }

    private func take(_ update: FetchedResultsUpdate) {
        if update.isInitial {
            current.withLock { $0.results = update.results }
            return
        }
        registrar.withMutation(of: self, keyPath: \.lastChanges) {
            registrar.withMutation(of: self, keyPath: \.results) {
                current.withLock { $0 = (update.results, update.changes) }
            }
        }
    }
}

extension FetchedResultsController {
    /// The results as an `Observable` object that follows this controller.
    public func observed() -> ObservedResults { ObservedResults(self) }
}
