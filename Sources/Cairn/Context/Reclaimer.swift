import Foundation

/// Lets go of large values on another thread: freeing a save's worth of value arrays or managed
/// objects is a good part of a save's time, and nobody waits for it.
enum Reclaimer {
    /// Values of fewer parts than this are let go of at once, where they are.
    static let threshold = 1024

    /// Lets go of `value` on a thread of the global dispatch queue when `parts` (its objects,
    /// arrays…) reach ``threshold``, here otherwise.
    static func release<T>(_ value: consuming T, parts: Int) {
        guard parts >= threshold else { return }
        let box = Box(value)
        DispatchQueue.global(qos: .utility).async { box.drop() }
    }

    private final class Box<T>: @unchecked Sendable {
        // Safety: the value is touched once more, by `drop()`, after the thread that made the
        // box let go of it.
        private var value: T?
        init(_ value: consuming T) { self.value = value }
        func drop() { value = nil }
    }
}
