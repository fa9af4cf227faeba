/// Removing the files a compaction replaced, giving their space back a step at a time.
///
/// On a file system that discards freed blocks as it commits its journal (ext4 mounted with
/// `discard`, as cloud disks often are), removing a large file frees every block of it in one
/// commit, and each `fdatasync` of the saves meanwhile waits for that commit: removing a
/// 64 MiB segment and a 40 MiB base held saves for up to 10 ms. Cut down a step at a time,
/// each step synced (a commit of its own), a save waits for one step at most.
///
/// Cutting a file down changes it for everyone who has it open, so it is done only when that
/// harms no one; otherwise the file is only unlinked, and its readers keep reading it:
/// - the file has one name: a backup on the same file system hard-links the store's files,
///   and those keep their bytes (unlinking the store's name then frees nothing anyway);
/// - no reader holds the store's reader lock (``ReaderLock``): a read-only open, a
///   ``LogReader``, an inspection or a backup holds it while it reads the files; one that
///   starts later reads a manifest that names none of the replaced files.
///
/// The link count is checked before every step, but a link made between the check and the
/// step's `ftruncate` by a reader without the lock (an earlier version of Cairn) sees one step
/// more: a backup made so fails its final length check.
extension Log {
    /// Removes `names` (files no manifest names any more), each cut down first as above when
    /// it can be, until `stopCutting` says to stop (the store is closing: the rest are only
    /// unlinked). Calls `afterFirst` once the first is removed. Returns the names removed; a
    /// file that could not be removed is left to the next writable open, which removes it as a
    /// left-over.
    func removeReplacedFiles(_ names: [String], stopCutting: () -> Bool, afterFirst: () -> Void) -> [String] {
        let step = options.releaseStep
        let cutting = step > 0 && !names.isEmpty && ReaderLock.isFree(layout, io)
        var removed: [String] = []
        for name in names {
            let path = layout.path(name)
            if cutting { cutDown(path, step: step, stop: stopCutting) }
            guard (try? io.remove(path)) != nil else { continue }
            removed.append(name)
            if removed.count == 1 { afterFirst() }
        }
        return removed
    }

    /// Cuts the file at `path` down from its end, `step` bytes at a time, each step synced;
    /// stops at the first failure, when `stop` says so, or as soon as the file has a second
    /// name (a backup linking it meanwhile): it is unlinked all the same.
    private func cutDown(_ path: String, step: UInt64, stop: () -> Bool) {
        guard let file = try? io.open(path, mode: .readWrite) else { return }
        defer { io.close(file) }
        guard var size = try? io.size(of: file) else { return }
        while size > step, !stop(), (try? io.linkCount(of: file)) == 1 {
            size -= step
            guard (try? io.truncate(file, to: size)) != nil, (try? io.sync(file)) != nil else { return }
        }
    }
}
