import CCairnSupport
import CairnSupport
import Dispatch
import Glibc
import Foundation

/// A dedicated thread that syncs written frames, so that the `fdatasync` of a group commit never
/// blocks a thread of Swift's cooperative pool, and appenders keep queueing frames for the next
/// group while a sync runs.
///
/// In ``Durability/always`` mode the writer wakes it after every write; in
/// ``Durability/interval(_:)`` mode it also wakes on its own every interval.
package final class SyncThread: Sendable {
    private let wake = DispatchSemaphore(value: 0)
    private let stopped = Protected(false)
    private let exited = DispatchSemaphore(value: 0)

    /// Starts the thread. `work` runs after each wake-up; returning false ends the thread.
    /// Without an interval, the thread first polls `hasWork` for a moment after each sync, so
    /// that a writer appending again right away is served without a sleep and a wake-up.
    init(interval: Duration?, hasWork: @escaping @Sendable () -> Bool, work: @escaping @Sendable () -> Bool) {
        let thread = Thread { [self] in
            defer { exited.signal() }
            // Named from inside: Foundation on Linux does not pass `Thread.name` to the system.
            cairn_name_current_thread(Self.threadName)
            let clock = ContinuousClock()
            while !stopped.current {
                if let interval {
                    let nanoseconds = interval.components.seconds * 1_000_000_000 + interval.components.attoseconds / 1_000_000_000
                    _ = wake.wait(timeout: .now() + .nanoseconds(Int(max(1, nanoseconds))))
                } else {
                    let deadline = clock.now + LogTuning.syncPollingTime
                    var found = hasWork()
                    while !found && clock.now < deadline {
                        sched_yield()
                        found = hasWork()
                    }
                    if !found { wake.wait() }
                }
                if stopped.current || !work() { return }
            }
        }
        thread.name = Self.threadName
        thread.start()
    }

    /// The thread's name, as tools such as `top -H` and `gdb` show it.
    package static let threadName = "cairn-sync"

    /// Asks for a sync soon.
    func signal() { wake.signal() }

    /// Ends the thread and waits until it has (its current sync, if any, completes first).
    func stop() {
        guard markStopped() else { return }
        wake.signal()
        exited.wait()
    }

    /// Ends the thread without waiting (from `deinit`, which may run on the thread itself).
    func stopSoon() {
        guard markStopped() else { return }
        wake.signal()
    }

    /// Sets the stop flag; false when it was already set.
    private func markStopped() -> Bool {
        stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
    }
}
