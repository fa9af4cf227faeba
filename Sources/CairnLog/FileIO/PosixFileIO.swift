import Glibc

/// The real file system, through POSIX calls.
package struct PosixFileIO: FileIO {
    package init() {}

    package func open(_ path: String, mode: FileOpenMode) throws -> OpenFile {
        let flags: Int32
        switch mode {
        case .readOnly: flags = O_RDONLY
        case .readWrite: flags = O_RDWR
        case .createNew: flags = O_RDWR | O_CREAT | O_EXCL
        case .createOrOpen: flags = O_RDWR | O_CREAT
        }
        // O_NONBLOCK: opening a FIFO put in a store file's place must not wait for a writer.
        // O_NOFOLLOW: a store file that is a symbolic link is refused, not followed elsewhere.
        let descriptor = retryingInterrupts { Glibc.open(path, flags | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW, 0o600) }
        guard descriptor >= 0 else {
            let number = errno
            if number == ELOOP {
                throw LogError(.corruption, "is a symbolic link; Cairn opens only regular files as store files", path: path)
            }
            if number == EISDIR {
                throw LogError(.corruption, "is a directory, not a regular file; Cairn opens only regular files as store files", path: path)
            }
            throw LogError.system("open", path: path, errno: number)
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let number = errno
            _ = Glibc.close(descriptor)
            throw LogError.system("fstat", path: path, errno: number)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            _ = Glibc.close(descriptor)
            throw LogError(
                .corruption, "is \(Self.kind(of: info.st_mode)), not a regular file; Cairn opens only regular files as store files",
                path: path)
        }
        // Back to blocking I/O (which regular files always do anyway).
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        return OpenFile(descriptor: descriptor, path: path)
    }

    /// What a file that is not regular is, in words.
    private static func kind(of mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: "a FIFO"
        case S_IFDIR: "a directory"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        case S_IFLNK: "a symbolic link"
        default: "a special file"
        }
    }

    package func close(_ file: OpenFile) {
        _ = Glibc.close(file.descriptor)
    }

    package func write(_ file: OpenFile, _ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws -> Int {
        let count = retryingInterrupts { pwrite(file.descriptor, bytes.baseAddress, bytes.count, off_t(offset)) }
        guard count >= 0 else { throw LogError.system("write", path: file.path, errno: errno, offset: offset) }
        return count
    }

    package func read(_ file: OpenFile, into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        let count = retryingInterrupts { pread(file.descriptor, buffer.baseAddress, buffer.count, off_t(offset)) }
        guard count >= 0 else { throw LogError.system("read", path: file.path, errno: errno, offset: offset) }
        return count
    }

    package func sync(_ file: OpenFile) throws {
        // Never retried after a failure: Linux may already have dropped the dirty pages.
        guard fdatasync(file.descriptor) == 0 else { throw LogError.system("fdatasync", path: file.path, errno: errno) }
    }

    package func fullSync(_ file: OpenFile) throws {
        guard fsync(file.descriptor) == 0 else { throw LogError.system("fsync", path: file.path, errno: errno) }
    }

    package func truncate(_ file: OpenFile, to length: UInt64) throws {
        let result = retryingInterrupts { ftruncate(file.descriptor, off_t(length)) }
        guard result == 0 else { throw LogError.system("ftruncate", path: file.path, errno: errno, offset: length) }
    }

    package func size(of file: OpenFile) throws -> UInt64 {
        var info = stat()
        guard fstat(file.descriptor, &info) == 0 else { throw LogError.system("fstat", path: file.path, errno: errno) }
        return UInt64(info.st_size)
    }

    package func tryLock(_ file: OpenFile) throws -> Bool {
        try takeLock(file, LOCK_EX)
    }

    package func tryLockShared(_ file: OpenFile) throws -> Bool {
        try takeLock(file, LOCK_SH)
    }

    private func takeLock(_ file: OpenFile, _ kind: Int32) throws -> Bool {
        if retryingInterrupts({ flock(file.descriptor, kind | LOCK_NB) }) == 0 { return true }
        if errno == EWOULDBLOCK { return false }
        throw LogError.system("flock", path: file.path, errno: errno)
    }

    package func linkCount(of file: OpenFile) throws -> Int {
        var info = stat()
        guard fstat(file.descriptor, &info) == 0 else { throw LogError.system("fstat", path: file.path, errno: errno) }
        return Int(clamping: info.st_nlink)
    }

    package func rename(_ source: String, to destination: String) throws {
        guard Glibc.rename(source, destination) == 0 else {
            throw LogError.system("rename to \(destination)", path: source, errno: errno)
        }
    }

    package func link(_ source: String, to destination: String) throws {
        guard Glibc.link(source, destination) == 0 else {
            throw LogError.system("link to \(destination)", path: source, errno: errno)
        }
    }

    package func remove(_ path: String) throws {
        guard unlink(path) == 0 else { throw LogError.system("unlink", path: path, errno: errno) }
    }

    package func syncDirectory(_ path: String) throws {
        let descriptor = retryingInterrupts { Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard descriptor >= 0 else { throw LogError.system("open directory", path: path, errno: errno) }
        defer { _ = Glibc.close(descriptor) }
        guard fsync(descriptor) == 0 else { throw LogError.system("fsync directory", path: path, errno: errno) }
    }

    package func contentsOfDirectory(_ path: String) throws -> [String] {
        guard let stream = opendir(path) else { throw LogError.system("opendir", path: path, errno: errno) }
        defer { closedir(stream) }
        var names: [String] = []
        // The name is read in place, up to its NUL: a directory entry can be shorter than
        // `dirent`, so copying the whole `d_name` field would read past the entry.
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name) ?? 19
        while let entry = readdir(stream) {
            let name = String(cString: (UnsafeRawPointer(entry) + nameOffset).assumingMemoryBound(to: CChar.self))
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    package func createDirectory(_ path: String) throws {
        if mkdir(path, 0o700) == 0 {
            // The new directory's own entry is durable before anything is written in it.
            let parent = path.contains("/") ? String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)]) : "."
            try syncDirectory(parent.isEmpty ? "/" : parent)
            return
        }
        if errno == EEXIST {
            var info = stat()
            if stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR { return }
            throw LogError(.invalidArgument, "a file that is not a directory is in the way", path: path)
        }
        throw LogError.system("mkdir", path: path, errno: errno)
    }

    package func nextData(in file: OpenFile, from offset: UInt64) -> UInt64? {
        let found = lseek(file.descriptor, off_t(offset), Self.seekData)
        if found >= 0 { return UInt64(found) }
        return errno == ENXIO ? nil : offset
    }

    /// `SEEK_DATA` (Linux, glibc), which Swift's Glibc module does not export.
    private static let seekData: Int32 = 3

    package func availableSpace(at path: String) -> UInt64? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        let (bytes, overflow) = UInt64(info.f_bavail).multipliedReportingOverflow(by: UInt64(info.f_frsize))
        return overflow ? .max : bytes
    }

    package func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    private func retryingInterrupts<T: FixedWidthInteger>(_ call: () -> T) -> T {
        while true {
            let result = call()
            if result == -1 && errno == EINTR { continue }
            return result
        }
    }
}
