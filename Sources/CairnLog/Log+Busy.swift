extension Log {
    /// Runs `read` (a read of the store's files from the start: an open, an inspection) again
    /// while it fails with ``LogError/Code/busy`` (a compaction in another process replaced the
    /// files it read), a few times (``LogTuning/busyAttempts``), then lets `busy` through.
    package static func retryingWhileBusy<Result>(_ read: () throws -> Result) throws -> Result {
        var attempt = 1
        while true {
            do {
                return try read()
            } catch let error as LogError where error.code == .busy && attempt < LogTuning.busyAttempts {
                attempt += 1
            }
        }
    }
}
