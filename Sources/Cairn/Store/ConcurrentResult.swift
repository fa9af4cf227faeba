import CairnLog
import CairnSupport
import Foundation

/// Work started on another thread, its result waited for later: a large save's record is
/// encoded and compressed on a second core while the first does the rest of the save; the JSON
/// mapper reads the second half of a large input.
///
/// The work runs on one of ``WorkerThreads`` (an idle one, or a new one), not on a dispatch
/// queue's: the waiter holds the store's commit lock, and tasks blocked on that lock may occupy
/// every thread of the pools that Swift concurrency and the global queues share, so work queued
/// there might never start. A reused thread also reuses the memory its last job freed.
package final class ConcurrentResult<Value: Sendable, Failure: Error>: @unchecked Sendable {
    // Safety: `result` is read and written with `condition` locked.
    private let condition = NSCondition()
    private var result: Result<Value, Failure>?

    /// Starts `work` on another thread, one of `threads`.
    package init(on threads: WorkerThreads = .shared, _ work: @escaping @Sendable () throws(Failure) -> Value) {
        threads.run { [self] in
            let outcome: Result<Value, Failure>
            do throws(Failure) {
                outcome = .success(try work())
            } catch {
                outcome = .failure(error)
            }
            condition.lock()
            result = outcome
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Waits for the work to end for at most `seconds`; whether it has ended.
    package func hasEnded(waitingAtMost seconds: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        defer { condition.unlock() }
        while result == nil {
            guard condition.wait(until: deadline) else { return result != nil }
        }
        return true
    }

    /// Waits for the work to end, and returns what it returned or throws what it threw.
    package func value() throws(Failure) -> Value {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let result { return try result.get() }
            condition.wait()
        }
    }
}
