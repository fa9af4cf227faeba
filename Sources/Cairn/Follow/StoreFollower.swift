import CCairnSupport
import CairnLog
import CairnSupport
import Dispatch
import Foundation

/// Moves a following store forward (``Store/init(followingAt:options:)``): on a thread of its
/// own, woken by the store directory's changes (``DirectoryWatch``, and once a second at the
/// latest), it reads the frames the writer acknowledged, applies them and publishes each save
/// as the writer's own store does.
final class StoreFollower: Sendable {
    private let watch: DirectoryWatch
    private let ended = DispatchSemaphore(value: 0)
    /// What the last step met; nil once a step succeeds.
    let failure = Protected<(any Error)?>(nil)
    /// How long a wait lasts at most when no change wakes it.
    static let longestWait = Duration.seconds(1)

    init(directory: String) throws {
        watch = try DirectoryWatch(directory)
    }

    /// Starts following for `store` (held weakly between steps: a store let go ends it).
    func start(_ store: Store) {
        Thread.detachNewThread { [weak store, self] in
            cairn_name_current_thread("cairn-follow")
            // (The store is held only during a step: one let go without closing ends this.)
            func stepIfOpen() -> Bool { store.map(self.step) ?? false }
            while stepIfOpen() && self.watch.wait(timeout: Self.longestWait) {}
            self.ended.signal()
        }
    }

    /// One step; false when following is over (the store closed).
    private func step(_ store: Store) -> Bool {
        do {
            try store.followWriter()
            failure.withLock { $0 = nil }
        } catch let error as StoreError where error.code == .closed {
            return false
        } catch {
            failure.withLock { $0 = error }
        }
        return true
    }

    /// Ends following and waits for the thread to end.
    func stop() async {
        watch.stop()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                self.ended.wait()
                self.ended.signal()
                done.resume()
            }
        }
    }
}
