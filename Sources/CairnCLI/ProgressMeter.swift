import Foundation
import Glibc

/// Progress on standard error, only when it is a terminal: a bar redrawn in place (at once,
/// then ten times a second at most), cleared at the end. Redirected to a file or a pipe,
/// standard error gets no progress at all, so that a log keeps only what the command says.
final class ProgressMeter: @unchecked Sendable {
    private let terminal: Bool
    private let lock = NSLock()
    private var last: ContinuousClock.Instant?
    private var drawn = false

    /// A meter that draws when standard error is a terminal (`terminal` overrides the check).
    init(terminal: Bool = isatty(STDERR_FILENO) == 1) { self.terminal = terminal }

    /// Reports `fraction` (0...1) done, with `detail` (sizes, rates, time left).
    func report(fraction: Double, _ detail: @autoclosure () -> String) {
        guard terminal else { return }
        lock.withLock {
            let now = ContinuousClock.now
            if let last, now - last < .milliseconds(100) { return }
            last = now
            let done = min(1, max(0, fraction.isFinite ? fraction : 0))
            let width = 30
            let filled = Int(done * Double(width))
            let bar = String(repeating: "=", count: filled) + String(repeating: " ", count: width - filled)
            FileHandle.standardError.write(Data("\r[\(bar)] \(Int(done * 100))% \(detail())\u{1B}[K".utf8))
            drawn = true
        }
    }

    /// Clears the bar (on a terminal).
    func finish() {
        lock.withLock {
            if drawn { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
            drawn = false
        }
    }
}
