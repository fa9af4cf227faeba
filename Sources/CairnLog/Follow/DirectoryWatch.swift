import CCairnSupport
import Glibc

/// Wakes a follower when a file in a store directory changes (Linux `inotify`): a frame
/// appended, the ``AcknowledgedFile`` rewritten, a manifest renamed into place. ``wait(timeout:)``
/// returns at the first change (or at `timeout`, or at ``stop()``), so a follower reads new
/// frames within microseconds of their acknowledgement instead of polling.
package final class DirectoryWatch: Sendable {
    private let watch: Int32
    /// A pipe: ``stop()`` writes a byte at its end, which ends every wait.
    private let wake: Int32
    private let waker: Int32

    /// Watches `directory`.
    ///
    /// - Throws: ``LogError/Code/io`` when the watch cannot be set up (no inotify instances
    ///   left: `fs.inotify.max_user_instances`).
    package init(_ directory: String) throws {
        let watch = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard watch >= 0 else { throw LogError(.io, "inotify_init1 failed (errno \(errno))", path: directory) }
        let mask = UInt32(IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_CLOSE_WRITE)
        guard inotify_add_watch(watch, directory, mask) >= 0 else {
            let error = errno
            close(watch)
            throw LogError(.io, "inotify_add_watch failed (errno \(error))", path: directory)
        }
        var pipeEnds: [Int32] = [0, 0]
        guard cairn_pipe_cloexec(&pipeEnds) == 0 else {
            let error = errno
            close(watch)
            throw LogError(.io, "pipe2 failed (errno \(error))", path: directory)
        }
        self.watch = watch
        self.wake = pipeEnds[0]
        self.waker = pipeEnds[1]
    }

    deinit {
        close(watch)
        close(wake)
        close(waker)
    }

    /// Waits until a file of the directory changes, `timeout` passes or ``stop()`` is called;
    /// returns false after ``stop()``. The changes seen are consumed.
    package func wait(timeout: Duration) -> Bool {
        var fds = [pollfd(fd: watch, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
        _ = poll(&fds, 2, Self.milliseconds(timeout))
        if fds[1].revents != 0 { return false }
        if fds[0].revents != 0 {
            // Drained: the events themselves do not matter, only that something changed.
            var buffer = [UInt8](repeating: 0, count: 4096)
            while buffer.withUnsafeMutableBytes({ read(watch, $0.baseAddress, $0.count) }) > 0 {}
        }
        return true
    }

    /// Waits `duration` whatever changes meanwhile (a follower's pause after a failed step);
    /// returns false after ``stop()``. The changes are seen by the next ``wait(timeout:)``.
    package func pause(_ duration: Duration) -> Bool {
        var fd = pollfd(fd: wake, events: Int16(POLLIN), revents: 0)
        _ = poll(&fd, 1, Self.milliseconds(duration))
        return fd.revents == 0
    }

    private static func milliseconds(_ duration: Duration) -> Int32 {
        Int32(clamping: duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }

    /// Ends every ``wait(timeout:)``, now and later.
    package func stop() {
        var one: UInt8 = 1
        _ = write(waker, &one, 1)
    }
}
