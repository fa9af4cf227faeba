import CairnSupport
import DequeModule
import Foundation

extension FetchedResultsController {
    /// The updates from now on as an async sequence (for one consumer), for server code that
    /// ships changes elsewhere: each update's changes are relative to the results of the one
    /// before it (or to ``results`` for the first). It ends when the store closes or the
    /// iterating task is cancelled; letting the sequence go stops it too.
    ///
    /// A consumer that falls behind by more than `bufferLimit` updates gets, in their place, one
    /// update from the last results it was given to the latest (its items all listed as updated
    /// or moved): nothing is lost, and it never holds up the controller.
    public func updates(bufferLimit: Int = 64) -> FetchedResultsUpdates {
        let mailbox = FetchedResultsUpdates.Mailbox(shown: results, limit: bufferLimit, controller: self)
        let token = UUID()
        state.withLock { $0.listeners[token] = { [weak mailbox] update in mailbox?.put(update) } }
        mailbox.stop = { [weak self] in _ = self?.state.withLock { $0.listeners.removeValue(forKey: token) } }
        mailboxes.withLock { $0[token] = Weak(mailbox) }
        if ended.withLock({ $0 }) { mailbox.finish() }
        return FetchedResultsUpdates(mailbox: mailbox)
    }
}

/// The updates of fetched results as an async sequence (``FetchedResultsController/updates(bufferLimit:)``).
public struct FetchedResultsUpdates: AsyncSequence, Sendable {
    public typealias Element = FetchedResultsUpdate
    public typealias Failure = Never

    /// The updates waiting for the consumer, bounded: past the limit they become one.
    final class Mailbox: @unchecked Sendable {
        // Safety: `stop` is set once, right after init, before the mailbox is shared.
        struct State {
            /// The results the consumer was last given.
            var shown: FetchedResults
            var pending = Deque<FetchedResultsUpdate>()
            /// The latest results, when the pending updates overflowed (then replaced by one).
            var collapsed: FetchedResults?
            var waiting: CheckedContinuation<FetchedResultsUpdate?, Never>?
            var finished = false
        }

        let state: Protected<State>
        let limit: Int
        let controller: FetchedResultsController
        var stop: (@Sendable () -> Void)?

        init(shown: FetchedResults, limit: Int, controller: FetchedResultsController) {
            state = Protected(State(shown: shown))
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
                if state.collapsed != nil || state.pending.count >= limit {
                    state.pending.removeAll()
                    state.collapsed = update.results
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
                        if let latest = state.collapsed {
                            defer {
                                state.shown = latest
                                state.collapsed = nil
                            }
                            return .collapsed(from: state.shown, to: latest)
                        }
                        if let update = state.pending.popFirst() {
                            state.shown = update.results
                            return .update(update)
                        }
                        if state.finished || Task.isCancelled { return .update(nil) }
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
