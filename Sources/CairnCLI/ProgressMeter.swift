import Foundation

/// Progress on standard error: a bar redrawn in place on a terminal (ten times a second at
/// most), otherwise a plain line a second that a log file can keep.
final class ProgressMeter: @unchecked Sendable {
    private let terminal: Bool
    private let lock = NSLock()
    private var last = ContinuousClock.now
    private var drawn = false

    init(terminal: Bool) { self.terminal = terminal }

    /// Reports `fraction` (0...1) done, with `detail` (sizes, rates, time left).
    func report(fraction: Double, _ detail: @autoclosure () -> String) {
        lock.withLock {
            let now = ContinuousClock.now
            guard now - last >= .milliseconds(terminal ? 100 : 1000) else { return }
            last = now
            let done = min(1, max(0, fraction))
            if terminal {
                let width = 30
                let filled = Int(done * Double(width))
                let bar = String(repeating: "=", count: filled) + String(repeating: " ", count: width - filled)
                FileHandle.standardError.write(Data("\r[\(bar)] \(Int(done * 100))% \(detail())\u{1B}[K".utf8))
                drawn = true
            } else {
                FileHandle.standardError.write(Data("progress: \(Int(done * 100))%, \(detail())\n".utf8))
            }
        }
    }

    /// Clears the bar (on a terminal).
    func finish() {
        lock.withLock { if drawn { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) } }
    }
}
