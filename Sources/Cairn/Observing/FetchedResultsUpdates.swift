import CairnSupport
import DequeModule
import Foundation

extension FetchedResultsController {
    /// The updates as an async sequence (for one consumer), for server code that ships changes
    /// elsewhere: first the results as they are now (an update with no changes,
    /// ``FetchedResultsUpdate/isInitial``), then each update after them, its changes relative to
    /// the results of the one before. It ends when the store closes or the iterating task is
    /// cancelled; letting the sequence go stops it too.
    ///
    /// A consumer that falls behind by more than `bufferLimit` updates gets, in their place, one
    /// update from the last results it was given to the latest (its items all listed as updated
    /// or moved): nothing is lost, and it never holds up the controller.
    public func updates(bufferLimit: Int = 64) -> FetchedResultsUpdates {
        let mailbox = FetchedResultsUpdates.Mailbox(limit: bufferLimit, controller: self)
        let token = UUID()
        mailbox.stop = { [weak self] in
            self?.state.withLock { _ = $0.listeners.removeValue(forKey: token) }
            self?.mailboxes.withLock { _ = $0.removeValue(forKey: token) }
        }
        mailboxes.withLock { $0[token] = Weak(mailbox) }
        // (Registered through `observe`: the first update is the results as they are then.)
        let observation = observe { [weak mailbox] update in mailbox?.put(update) }
        mailbox.observation = observation
        if ended.withLock({ $0 }) { mailbox.finish() }
        return FetchedResultsUpdates(mailbox: mailbox)
    }
}

/// The updates of fetched results as an async sequence (``FetchedResultsController/updates(bufferLimit:)``).
public struct FetchedResultsUpdates: AsyncSequence, Sendable {
    /// Each element is one update of the results.
    public typealias Element = FetchedResultsUpdate
    /// The sequence never throws.
    public typealias Failure = Never

    /// The updates waiting for the consumer, bounded: past the limit they become one.
    final class Mailbox: @unchecked Sendable {
        // Safety: `stop` and `observation` are set once, right after init, before the mailbox is
        // shared.
        struct State {
            /// The results the consumer was last given (nil before the first update).
            var shown: FetchedResults?
            var pending = Deque<FetchedResultsUpdate>()
            /// When the pending updates overflowed: the results before the first of them and the
            /// latest, told as one update after what is still pending (the first update, whole).
            var collapsed: (from: FetchedResults, to: FetchedResults)?
            var waiting: CheckedContinuation<FetchedResultsUpdate?, Never>?
            var finished = false
        }

        let state: Protected<State>
        let limit: Int
        let controller: FetchedResultsController
        var stop: (@Sendable () -> Void)?
        var observation: SaveObservation?

        init(limit: Int, controller: FetchedResultsController) {
            state = Protected(State(shown: nil))
            self.limit = Swift.max(1, limit)
            self.controller = controller
        }

        deinit { stop?() }

        /// Takes an update from the controller.
        func put(_ update: FetchedResultsUpdate) {
            let waiting = state.withLock { state -> CheckedContinuation<FetchedResultsUpdate?, Never>? in
                guard !state.finished else { return nil }
                if let waiting = state.waiting {
                    state.waiting = nil
                    state.shown = update.results
                    return waiting
                }
                if let collapsed = state.collapsed {
                    state.collapsed = (collapsed.from, update.results)
                } else if state.pending.count >= limit {
                    // The first update (the results whole) stays; the others become one.
                    let first = state.pending.first.flatMap { $0.isInitial ? $0 : nil }
                    guard let from = first?.results ?? state.shown else {
                        state.pending.append(update)
                        return nil
                    }
                    state.pending = first.map { [$0] } ?? []
                    state.collapsed = (from, update.results)
                } else {
                    state.pending.append(update)
                }
                return nil
            }
            waiting?.resume(returning: update)
        }

        /// The next update, waiting for one; nil once finished or cancelled.
        func next() async -> FetchedResultsUpdate? {
            await withTaskCancellationHandler {
                let collapsed = await withCheckedContinuation { (continuation: CheckedContinuation<FetchedResultsUpdate?, Never>) in
                    enum Ready {
                        case update(FetchedResultsUpdate?)
                        case collapsed(from: FetchedResults, to: FetchedResults)
                    }
                    let ready = state.withLock { state -> Ready? in
                        if let update = state.pending.popFirst() {
                            state.shown = update.results
                            return .update(update)
                        }
                        if let (from, to) = state.collapsed {
                            state.shown = to
                            state.collapsed = nil
                            return .collapsed(from: from, to: to)
                        }
                        // (A second consumer waiting at once ends: one consumer a sequence.)
                        if state.finished || Task.isCancelled || state.waiting != nil { return .update(nil) }
                        state.waiting = continuation
                        return nil
                    }
                    switch ready {
                    case .update(let update)?: continuation.resume(returning: update)
                    case .collapsed(let from, let to)?: continuation.resume(returning: controller.windowUpdate(from: from, to: to, changed: nil))
                    case nil: break
                    }
                }
                return collapsed
            } onCancel: {
                finish()
            }
        }

        /// Ends the sequence: nothing more is taken; a waiting consumer gets nil.
        func finish() {
            let waiting = state.withLock { state -> CheckedContinuation<FetchedResultsUpdate?, Never>? in
                state.finished = true
                state.pending.removeAll()
                state.collapsed = nil
                defer { state.waiting = nil }
                return state.waiting
            }
            waiting?.resume(returning: nil)
            stop?()
        }
    }

    let mailbox: Mailbox

    /// The iterator: its `next()` waits for the next update.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let mailbox: Mailbox

        /// The next update; nil once the store closed or the task was cancelled.
        public mutating func next() async -> FetchedResultsUpdate? { await mailbox.next() }

        /// The next update (nil: ended), for a caller on any actor.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> FetchedResultsUpdate? { await mailbox.next() }
    }

    /// An iterator over the updates.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(mailbox: mailbox) }
}

/// A reference that does not keep its object alive.
final class Weak<Object: AnyObject & Sendable>: Sendable {
    weak let object: Object?
    init(_ object: Object) { self.object = object }
}
