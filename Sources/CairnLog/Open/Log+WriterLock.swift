import Glibc

/// The store's writer lock, `LOCK` (`flock`, holding the writer's pid): taken by a writable open
/// and a repair, asked about by readers that meet an incomplete last frame.
extension Log {
    /// Takes the writer lock and writes this process's pid into its file.
    ///
    /// - Throws: ``LogError/Code/locked`` naming the holder's pid when another open holds it.
    static func acquireLock(_ layout: StoreLayout, _ io: any FileIO) throws -> OpenFile {
        let file = try io.open(layout.lock, mode: .createOrOpen)
        do {
            // A process that forks copies our descriptors until its child execs, and the copy
            // holds the lock for that moment; so a refusal is retried briefly before it counts.
            var locked = try io.tryLock(file)
            var attempts = 0
            while !locked && attempts < LogTuning.lockAttempts {
                usleep(LogTuning.lockRetryMicroseconds)
                attempts += 1
                locked = try io.tryLock(file)
            }
            guard locked else {
                let holder =
                    (try? io.readWholeFile(layout.lock, limit: 64)).map {
                        String(decoding: $0, as: UTF8.self).filter(\.isNumber)
                    } ?? ""
                throw LogError(
                    .locked, "the store is open for writing by process \(holder.isEmpty ? "unknown" : holder)",
                    path: layout.lock)
            }
            let pid = Array("\(getpid())\n".utf8)
            try io.truncate(file, to: 0)
            try pid.withUnsafeBytes { try io.writeAll(file, $0, at: 0) }
            return file
        } catch {
            io.close(file)
            throw error
        }
    }

    /// Whether another open holds the store's writer lock (then an incomplete last frame is a
    /// write in progress). Takes and at once releases the lock when it is free.
    static func writerHoldsLock(_ layout: StoreLayout, _ io: any FileIO) -> Bool {
        guard let file = try? io.open(layout.lock, mode: .readOnly) else { return false }
        defer { io.close(file) }
        return (try? io.tryLock(file)) == false
    }

    /// ``writerHoldsLock(_:_:)``, asked again for a moment before the answer is yes: a child
    /// forked by any thread of this process while a log was open holds a copy of its lock until
    /// it execs, and a closed log's last frame would be called a write in progress.
    static func writerKeepsLock(_ layout: StoreLayout, _ io: any FileIO) -> Bool {
        for _ in 0..<LogTuning.forkedLockChecks {
            guard writerHoldsLock(layout, io) else { return false }
            usleep(LogTuning.lockRetryMicroseconds)
        }
        return writerHoldsLock(layout, io)
    }
}
