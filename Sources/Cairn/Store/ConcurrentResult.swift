import Foundation

/// Work started on another thread, its result waited for later: a large save's compression
/// runs on a second core while the save is applied to the snapshot.
final class ConcurrentResult<Value: Sendable>: @unchecked Sendable {
    // Safety: `result` is read and written with `condition` locked.
    private let condition = NSCondition()
    private var result: Result<Value, any Error>?

    /// Starts `work` on a thread of the global dispatch queue.
    init(_ work: @escaping @Sendable () throws -> Value) {
        DispatchQueue.global().async { [self] in
            let outcome = Result(catching: work)
            condition.lock()
            result = outcome
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Waits for the work to end, and returns what it returned or throws what it threw.
    func value() throws -> Value {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let result { return try result.get() }
            condition.wait()
        }
    }
}
