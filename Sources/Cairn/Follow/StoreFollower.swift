import CCairnSupport
import CairnLog
import CairnSupport
import Dispatch
import Foundation

/// Moves a following store forward (``Store/init(followingAt:options:)``): on a thread of its
/// own, woken by the store directory's changes (``DirectoryWatch``, and once a second at the
/// latest), it reads the frames the writer acknowledged, applies them and publishes each save
/// as the writer's own store does.
///
/// A step that fails is tried again after a pause that doubles from 10 ms to a second (a
/// directory that keeps changing does not make it spin); one that fails with
/// ``StoreError/Code/followingStopped`` ends following, its error kept.
final class StoreFollower: Sendable {
    private let watch: DirectoryWatch
    private let ended = DispatchSemaphore(value: 0)
    /// What the last step met (nil once a step succeeds).
    private let failure = Protected<(any Error)?>(nil)
    /// How long a wait lasts at most when no change wakes it.
    static let longestWait = Duration.seconds(1)
    /// The first pause after a failed step.
    static let firstPause = Duration.milliseconds(10)

    init(directory: String) throws {
        watch = try DirectoryWatch(directory)
    }

    /// What keeps the store from moving forward (``Store/followingError``).
    var error: (any Error)? { failure.withLock { $0 } }

    /// Starts following for `store` (held weakly between steps: a store let go ends it).
    func start(_ store: Store) {
        Thread.detachNewThread { [weak store, self] in
            cairn_name_current_thread("cairn-follow")
            var pause = Duration.zero
            following: while let outcome = store.map(self.step) {
                switch outcome {
                case .over:
                    break following
                case .moved:
                    pause = .zero
                    if !self.watch.wait(timeout: Self.longestWait) { break following }
                case .failed:
                    pause = min(max(pause * 2, Self.firstPause), Self.longestWait)
                    if !self.watch.pause(pause) { break following }
                }
            }
            self.ended.signal()
        }
    }

    private enum Outcome {
        /// Caught up with the writer.
        case moved
        /// The step failed; try again.
        case failed
        /// Following is over: the store closed, or it cannot go on.
        case over
    }

    /// One step.
    private func step(_ store: Store) -> Outcome {
        do {
            try store.followWriter()
            failure.withLock { $0 = nil }
            return .moved
        } catch let error as StoreError where error.code == .closed {
            return .over
        } catch let error as StoreError where error.code == .followingStopped {
            failure.withLock { $0 = error }
            return .over
        } catch {
            failure.withLock { $0 = error }
            return .failed
        }
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
