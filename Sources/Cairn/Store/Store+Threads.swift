import CCairnSupport
import Foundation

extension Store {
    /// Runs `work` on a thread of its own, named `name` (opening, compacting and backing up
    /// read and write for seconds: not on a thread Swift's tasks share).
    static func onOwnThread<T: Sendable>(named name: String, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                cairn_name_current_thread(name)
                continuation.resume(with: Result { try work() })
            }
        }
    }

    /// Runs `work` on a new thread at a lower priority than the app's threads (its saves, its
    /// reads) and waits for it here: writing a base, busy on a core, must not delay a save that
    /// waits for one. The lowered thread only runs `work` and ends; everything after it (the
    /// caller's task resumed, which may start a thread of a shared pool that would inherit the
    /// priority for good) runs on this thread, at the app's priority.
    static func givingWayToTheApp<T>(_ work: @escaping () throws -> T) throws -> T {
        // Safety: `work` and `outcome` are used by the new thread alone until it signals, and
        // `outcome` read here only after.
        nonisolated(unsafe) let run = work
        nonisolated(unsafe) var outcome: Result<T, any Error>?
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            cairn_name_current_thread("cairn-base")
            _ = cairn_lower_current_thread_priority(Tuning.backgroundNice)
            outcome = Result { try run() }
            done.signal()
        }
        done.wait()
        guard let outcome else { throw StoreError(.closed, "the base writer's thread ended without a result") }
        return try outcome.get()
    }
}
