import CairnSupport

/// Runs the blocks given to one context's ``ObjectContext/perform(_:)`` one at a time, in the
/// order they arrive (Core Data's private queue, for async code).
///
/// A block that calls `perform` on the same context again, from the same task, runs the inner
/// block at once, so nesting cannot deadlock; another task (one the block started included)
/// waits its turn.
final class ContextQueue: Sendable {
    private struct State {
        var busy = false
        /// The task running a block (its hash: the task is alive while it holds the queue).
        var holder: Int?
        var waiters: [(task: Int?, continuation: CheckedContinuation<Void, Never>)] = []
    }
    private let state = Protected(State())

    func run<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
        let task = withUnsafeCurrentTask { $0?.hashValue }
        if task != nil, state.withLock({ $0.holder == task }) { return try await body() }
        await acquire(task)
        defer { release() }
        return try await body()
    }

    private func acquire(_ task: Int?) async {
        await withCheckedContinuation { continuation in
            let free = state.withLock { state -> Bool in
                if state.busy {
                    state.waiters.append((task, continuation))
                    return false
                }
                state.busy = true
                state.holder = task
                return true
            }
            if free { continuation.resume() }
        }
    }

    /// Hands the queue to the next waiter, or frees it.
    private func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiters.isEmpty else {
                state.busy = false
                state.holder = nil
                return nil
            }
            let next = state.waiters.removeFirst()
            state.holder = next.task
            return next.continuation
        }
        next?.resume()
    }
}
