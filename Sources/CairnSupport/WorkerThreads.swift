import CCairnSupport
import Foundation

/// Threads kept for Cairn's own work off the caller's thread (replay, the second half of a
/// large save), reused from one job to the next (one set of threads per kind of work).
///
/// A job runs on a thread that is idle, or on a new one when none is: a job never waits for
/// another to end (the jobs of a save are waited for while the store's commit lock is held, and
/// a pool with a fixed size could then run out). A thread that finishes waits for the next job,
/// and ends after ``idleLifetime`` without one.
///
/// Reuse matters for memory more than for the cost of starting a thread: the allocator gives
/// each thread an arena of its own, and memory freed in one arena is reused by later work on
/// that thread without being faulted in again: a store reopened by a new thread builds its
/// snapshot in fresh memory, several times slower than one built by the thread that built the
/// last (docs/PERFORMANCE.md, "Memory").
package final class WorkerThreads: @unchecked Sendable {
    // Safety: every stored property is read and written with `condition` locked.

    /// The threads for work done during saves.
    package static let shared = WorkerThreads()

    /// The threads that build snapshots at open (replay), apart from the others: a store
    /// opened after another was closed is then built by the thread that built the last one,
    /// in the memory that one freed, not by a thread that last encoded a save.
    package static let replay = WorkerThreads()

    /// The second thread of the work that ends a replay (half of its index build), apart from
    /// ``replay``: a thread of its own, so that the next replay is built by the thread that
    /// built the last one, not by this one, whose arena holds less.
    package static let replayHelper = WorkerThreads()

    /// How long an idle thread waits for a job before it ends.
    package static let idleLifetime: TimeInterval = 60

    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var idle = 0
    private var started = 0

    /// The number of threads alive (running a job or idle), for tests.
    package var threadCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return started
    }

    /// The number of threads waiting for a job, for tests.
    package var idleCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return idle
    }

    /// Runs `job` on an idle thread, or on a new one.
    package func run(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        let needsThread = idle < jobs.count
        if needsThread { started += 1 } else { condition.signal() }
        condition.unlock()
        guard needsThread else { return }
        let thread = Thread { [self] in
            // Named from the thread itself: Foundation on Linux drops a name set before start.
            cairn_name_current_thread("cairn-worker")
            work()
        }
        thread.start()
    }

    private func work() {
        condition.lock()
        while true {
            while jobs.isEmpty {
                idle += 1
                let woken = condition.wait(until: Date(timeIntervalSinceNow: Self.idleLifetime))
                idle -= 1
                if !woken && jobs.isEmpty {
                    started -= 1
                    condition.unlock()
                    return
                }
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
            condition.lock()
        }
    }
}
