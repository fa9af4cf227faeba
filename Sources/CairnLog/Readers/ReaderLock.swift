import Glibc

/// The store's reader lock, `READERS`: a file that readers of the store's files lock shared
/// (`flock(LOCK_SH)`) from before they read the manifest until they have read the files it
/// names, so that a writer can tell that no one is reading the files a compaction replaced
/// before it cuts them down (``Log/removeReplacedFiles(_:stopCutting:afterFirst:)``).
///
/// Readers are a read-only open (while it reads the base and segments), a ``LogReader`` (until
/// its last record), an inspection (`cairn verify`) and a backup (while it copies). A reader that starts after the check reads the new manifest, which names none of
/// the replaced files. The lock is advisory and only ever asked for without waiting: a reader
/// that cannot have it (no `READERS` file yet, a writer checking at that very moment for
/// longer than a few tries) reads anyway, and a writer that cannot tell only unlinks. A
/// `READERS` that cannot be opened fails the open, as any store file does.
package enum ReaderLock {
    /// Makes sure the store has its `READERS` file (a writable open): readers find it from then on.
    ///
    /// - Throws: ``LogError/Code/corruption`` when something other than a regular file has its
    ///   name (a FIFO, a link, a directory), as for every store file; I/O errors.
    package static func create(_ layout: StoreLayout, _ io: any FileIO) throws {
        io.close(try io.open(layout.readers, mode: .createOrOpen))
    }

    /// Takes the lock shared for a reader: the open file to close when it has read what it
    /// needs, or nil when there is no `READERS` file or a writer's check outlasts a few tries
    /// (the reader then goes on without the lock).
    ///
    /// - Throws: ``LogError/Code/corruption`` when something other than a regular file has the
    ///   name `READERS`; I/O errors.
    package static func holdShared(_ layout: StoreLayout, _ io: any FileIO) throws -> OpenFile? {
        guard io.exists(layout.readers) else { return nil }
        let file = try io.open(layout.readers, mode: .readOnly)
        do {
            // A writer holds it exclusively only for the moment of its check.
            for attempt in 0..<LogTuning.lockAttempts {
                if try io.tryLockShared(file) { return file }
                if attempt + 1 < LogTuning.lockAttempts { usleep(LogTuning.lockRetryMicroseconds / 5) }
            }
        } catch {
            io.close(file)
            throw error
        }
        io.close(file)
        return nil
    }

    /// Whether no reader holds the lock now: takes it exclusively and lets it go at once. False
    /// when `READERS` is missing (the writable open made it: a file made again now would not be
    /// the one a reader may hold). The descriptor is read-only on purpose: over NFS, where
    /// `flock` becomes a POSIX lock that an exclusive request needs a writable descriptor for,
    /// the request fails and the writer never cuts.
    package static func isFree(_ layout: StoreLayout, _ io: any FileIO) -> Bool {
        guard let file = try? io.open(layout.readers, mode: .readOnly) else { return false }
        defer { io.close(file) }
        return (try? io.tryLock(file)) == true
    }
}
