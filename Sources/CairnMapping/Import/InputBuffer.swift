import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The bytes of an import's input, at a stable address for the whole import: a file mapped into
/// memory (read by the kernel as the scanner reaches it, so that a file of any size imports
/// without being read whole into the heap), or a copy of bytes given in memory.
final class InputBuffer: @unchecked Sendable {
    /// The bytes.
    let bytes: UnsafeRawBufferPointer
    private let release: () -> Void
    /// Whether the bytes are a file mapped into memory (whose pages can be given back).
    private let isMapped: Bool
    /// The offset below which pages were given back.
    private var releasedUpTo = 0

    private init(bytes: UnsafeRawBufferPointer, isMapped: Bool = false, release: @escaping () -> Void) {
        self.bytes = bytes
        self.isMapped = isMapped
        self.release = release
    }

    /// Gives back the pages of a mapped file below `offset` (whole pages only), so that the
    /// input read so far does not stay resident: the import never reads it again, and if a
    /// message does, the kernel reads it back from the file.
    func releasePages(below offset: Int) {
        guard isMapped, let base = bytes.baseAddress else { return }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let end = min(offset, bytes.count) / page * page
        guard end > releasedUpTo else { return }
        _ = madvise(UnsafeMutableRawPointer(mutating: base + releasedUpTo), end - releasedUpTo, MADV_DONTNEED)
        releasedUpTo = end
    }

    deinit { release() }

    /// A copy of `source`.
    convenience init(copying source: some Collection<UInt8>) {
        let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, source.count), alignment: 16)
        let written = memory.initializeMemory(as: UInt8.self, from: source).initialized.count
        self.init(bytes: UnsafeRawBufferPointer(rebasing: memory[..<written]), release: { memory.deallocate() })
    }

    /// The file at `path`, mapped read-only; a path that is not a regular file (a pipe, a FIFO,
    /// a device, `/dev/stdin`) is read through an ``InputSpool``: in bounded pieces, checked as
    /// JSON as they arrive (a comma that ends an array or an object read as `allowsTrailingCommas` says).
    ///
    /// - Throws: ``MappingError/Code/unreadableInput`` naming the file and the system's reason;
    ///   for a stream, ``MappingError/Code/invalidJSON`` at its first invalid byte.
    static func mapping(path: String, allowsTrailingCommas: Bool = false) throws(MappingError) -> InputBuffer {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure(path, "cannot open it") }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw failure(path, "cannot read its size") }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            return try InputSpool.read(descriptor, name: path, allowsTrailingCommas: allowsTrailingCommas)
        }
        return try mapping(descriptor, size: Int(status.st_size), name: path)
    }

    /// The first `size` bytes of the open regular file `descriptor`, mapped read-only (the
    /// mapping keeps the file, which the caller may close).
    static func mapping(_ descriptor: Int32, size: Int, name: String) throws(MappingError) -> InputBuffer {
        guard size > 0 else { return InputBuffer(copying: []) }
        guard let address = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0), address != MAP_FAILED else {
            throw failure(name, "cannot map it into memory")
        }
        _ = madvise(address, size, MADV_SEQUENTIAL)
        return InputBuffer(bytes: UnsafeRawBufferPointer(start: address, count: size), isMapped: true, release: { munmap(address, size) })
    }

    private static func failure(_ path: String, _ what: String) -> MappingError {
        MappingError(.unreadableInput, "\(path): \(what): \(String(cString: strerror(errno)))")
    }
}
