/// A test step took longer than it was given.
struct TimedOut: Error, CustomStringConvertible {
    let what: String
    let seconds: Double
    var description: String { "\(what): no result within \(seconds) s" }
}

/// The result of `operation`, or `TimedOut` after `seconds` (the operation is then cancelled).
func within<T: Sendable>(_ seconds: Double, _ what: String, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            throw TimedOut(what: what, seconds: seconds)
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}
