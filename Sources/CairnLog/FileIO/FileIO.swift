import Glibc

/// An open file: its descriptor and the path it was opened with (for error messages).
package struct OpenFile: Sendable, Hashable {
    /// The operating system's descriptor.
    package var descriptor: Int32
    /// The path the file was opened with.
    package var path: String

    package init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }
}

/// How a file is opened.
package enum FileOpenMode: Sendable {
    /// An existing file, for reading.
    case readOnly
    /// An existing file, for reading and writing.
    case readWrite
    /// A new file (it must not exist), for reading and writing, with permissions 0600.
    case createNew
    /// A file that is created (0600) when missing and otherwise opened for reading and writing.
    case createOrOpen
}

/// Every file-system operation the log performs.
///
/// All I/O of CairnLog goes through this protocol, so that tests can inject faults (an error at
/// the n-th write or sync, a short write, a full disk) and check that the log reacts correctly.
/// Methods throw ``LogError`` values that name the path.
package protocol FileIO: Sendable {
    /// Opens a file.
    func open(_ path: String, mode: FileOpenMode) throws -> OpenFile
    /// Closes a file; errors are ignored (nothing can be done about them).
    func close(_ file: OpenFile)
    /// Writes some of `bytes` at `offset`; returns how many were written (possibly fewer).
    func write(_ file: OpenFile, _ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws -> Int
    /// Reads up to `buffer.count` bytes at `offset`; returns how many were read (0 at the end).
    func read(_ file: OpenFile, into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int
    /// Makes the file's data durable (`fdatasync`). After a failure it must not be retried.
    func sync(_ file: OpenFile) throws
    /// Makes the file's data and metadata durable (`fsync`).
    func fullSync(_ file: OpenFile) throws
    /// Cuts or extends the file to `length` bytes.
    func truncate(_ file: OpenFile, to length: UInt64) throws
    /// The file's current size in bytes.
    func size(of file: OpenFile) throws -> UInt64
    /// Takes an exclusive advisory lock (`flock`) without waiting; returns false when it is held.
    func tryLock(_ file: OpenFile) throws -> Bool
    /// Takes a shared advisory lock (`flock`) without waiting; returns false when an exclusive
    /// one is held.
    func tryLockShared(_ file: OpenFile) throws -> Bool
    /// The number of names the file has (`st_nlink`): more than one when it was hard-linked
    /// (by a backup on the same file system).
    func linkCount(of file: OpenFile) throws -> Int
    /// Renames a file atomically, replacing any file at `destination`.
    func rename(_ source: String, to destination: String) throws
    /// Makes `destination` a second name of the file at `source` (a hard link); fails across
    /// file systems.
    func link(_ source: String, to destination: String) throws
    /// Removes a file.
    func remove(_ path: String) throws
    /// Makes the directory's entries durable (after a create, rename or remove).
    func syncDirectory(_ path: String) throws
    /// The names of the entries in a directory.
    func contentsOfDirectory(_ path: String) throws -> [String]
    /// Creates a directory with permissions 0700; does nothing when it exists.
    func createDirectory(_ path: String) throws
    /// Whether anything exists at `path`.
    func exists(_ path: String) -> Bool
    /// The first offset at or after `offset` that may hold data (`SEEK_DATA`): the end of a
    /// hole. Nil when only a hole follows. Implementations that cannot tell return `offset`.
    func nextData(in file: OpenFile, from offset: UInt64) -> UInt64?
    /// The bytes an unprivileged process may still write on the file system holding `path`
    /// (`statvfs`); nil when that cannot be told.
    func availableSpace(at path: String) -> UInt64?
}

extension FileIO {
    /// Writes all of `bytes` at `offset`, continuing after short writes.
    package func writeAll(_ file: OpenFile, _ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        var done = 0
        while done < bytes.count {
            let written = try write(file, UnsafeRawBufferPointer(rebasing: bytes[done...]), at: offset + UInt64(done))
            guard written > 0 else {
                throw LogError(.io, "write made no progress", path: file.path, offset: offset + UInt64(done))
            }
            done += written
        }
    }

    /// Reads exactly `buffer.count` bytes at `offset`, or throws a corruption error naming the
    /// file when it ends first.
    package func readExactly(_ file: OpenFile, into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws {
        var done = 0
        while done < buffer.count {
            let count = try read(file, into: UnsafeMutableRawBufferPointer(rebasing: buffer[done...]), at: offset + UInt64(done))
            guard count > 0 else {
                throw LogError.corruption(
                    "file ends after \(offset + UInt64(done)) bytes; \(buffer.count - done) more were expected",
                    path: file.path, offset: offset + UInt64(done))
            }
            done += count
        }
    }

    /// Reads a whole small file, refusing one larger than `limit` before allocating anything.
    package func readWholeFile(_ path: String, limit: Int) throws -> [UInt8] {
        let file = try open(path, mode: .readOnly)
        defer { close(file) }
        let length = try size(of: file)
        guard length <= UInt64(limit) else {
            throw LogError.corruption("file is \(length) bytes, more than the \(limit) allowed", path: path)
        }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        try bytes.withUnsafeMutableBytes { try readExactly(file, into: $0, at: 0) }
        return bytes
    }

    /// Whether `file` is no longer the file at `path`: another was renamed there (a copy
    /// replaced it), or none is (device and inode compared).
    package func isReplaced(_ file: OpenFile, at path: String) -> Bool {
        var open = stat()
        var named = stat()
        guard fstat(file.descriptor, &open) == 0 else { return false }
        guard lstat(path, &named) == 0 else { return true }
        return open.st_dev != named.st_dev || open.st_ino != named.st_ino
    }

    /// By default, holes are not known: every offset may hold data.
    package func nextData(in file: OpenFile, from offset: UInt64) -> UInt64? { offset }

    /// Replaces a file atomically: write a temporary file, sync it, rename it over `path`, sync
    /// the directory. A crash at any point leaves either the old or the new content.
    package func replaceAtomically(_ path: String, directory: String, with bytes: [UInt8]) throws {
        try writeAtomically(path, directory: directory) { file in
            try bytes.withUnsafeBytes { try writeAll(file, $0, at: 0) }
        }
    }

    /// Copies bytes `range` of `source` into a new file at `path`, atomically as
    /// ``replaceAtomically(_:directory:with:)`` does, a megabyte at a time (a range of any
    /// length is copied in bounded memory); holes of the source stay holes in the copy.
    ///
    /// - Throws: ``LogError/Code/busy`` when the source is shorter than `range` afterwards (it
    ///   was cut while copied); I/O errors.
    package func copyAtomically(_ source: OpenFile, _ range: Range<UInt64>, to path: String, directory: String) throws {
        try writeAtomically(path, directory: directory) { file in
            let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: LogTuning.copyChunkSize, alignment: 16)
            defer { chunk.deallocate() }
            // A hole at the end reads as zeros; a source cut short (a compaction removing a file
            // that a reader without the reader lock copies) must not.
            func checkWhole() throws {
                let length = try size(of: source)
                guard length >= range.upperBound else {
                    throw LogError(
                        .busy, "the file was cut to \(length) bytes while \(range.upperBound) were copied (compacted meanwhile): try again",
                        path: source.path)
                }
            }
            var offset = range.lowerBound
            while offset < range.upperBound {
                guard let data = nextData(in: source, from: offset), data < range.upperBound else { break }
                offset = max(offset, data)
                let count = Int(min(UInt64(chunk.count), range.upperBound - offset))
                let part = UnsafeMutableRawBufferPointer(rebasing: chunk[0..<count])
                do {
                    try readExactly(source, into: part, at: offset)
                } catch {
                    try checkWhole()
                    throw error
                }
                try writeAll(file, UnsafeRawBufferPointer(part), at: offset - range.lowerBound)
                offset += UInt64(count)
            }
            try checkWhole()
            try truncate(file, to: range.upperBound - range.lowerBound)
        }
    }

    /// Writes a new file through `<path>.tmp`: `write` fills it, then it is synced, renamed over
    /// `path`, and the directory synced. On failure the temporary file is removed.
    private func writeAtomically(_ path: String, directory: String, write: (OpenFile) throws -> Void) throws {
        let temporary = path + ".tmp"
        if exists(temporary) { try remove(temporary) }
        let file = try open(temporary, mode: .createNew)
        do {
            try write(file)
            try fullSync(file)
        } catch {
            close(file)
            try? remove(temporary)
            throw error
        }
        close(file)
        try rename(temporary, to: path)
        try syncDirectory(directory)
    }
}
