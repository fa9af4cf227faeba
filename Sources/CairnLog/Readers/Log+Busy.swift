extension Log {
    /// Runs `read` (a read of the store's files from the start: an open, an inspection) again
    /// while it fails with ``LogError/Code/busy`` (a compaction in another process replaced the
    /// files it read), a few times (``LogTuning/busyAttempts``), then lets `busy` through.
    package static func retryingWhileBusy<Result>(_ read: () throws -> Result) throws -> Result {
        var retries = BusyRetries()
        while true {
            do {
                return try read()
            } catch let error as LogError where retries.another(after: error) {}
        }
    }

    /// The same, for an asynchronous read (a command's whole check
    /// or backup, which closes what it opened).
    package static func retryingWhileBusy<Result>(_ read: () async throws -> Result) async throws -> Result {
        var retries = BusyRetries()
        while true {
            do {
                return try await read()
            } catch let error as LogError where retries.another(after: error) {}
        }
    }
}

/// The count of a read's attempts while it meets ``LogError/Code/busy``.
private struct BusyRetries {
    private var attempt = 1

    /// Whether `error` is `busy` and the read may be tried again (counting the attempt).
    mutating func another(after error: LogError) -> Bool {
        guard error.code == .busy && attempt < LogTuning.busyAttempts else { return false }
        attempt += 1
        return true
    }
}
