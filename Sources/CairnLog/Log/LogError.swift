import Glibc

/// An error from the log layer: what went wrong, and where (file, byte offset, LSN).
///
/// The code is an extensible value, so new codes can be added without breaking a `switch`;
/// match on it in a `catch` with the `~=` operator:
///
/// ```swift
/// do {
///     let lsn = try await log.append(payload)
/// } catch LogError.Code.diskFull {
///     // free space, then reopen the store
/// }
/// ```
public struct LogError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// A short, stable name for the code.
        public let rawValue: String
        /// Creates a code from its name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Bytes on disk failed a checksum or a structural check where a torn tail is impossible.
        public static let corruption = Code(rawValue: "corruption")
        /// The active segment ends in an incomplete frame and the recovery mode refuses to cut it.
        public static let tornTail = Code(rawValue: "torn tail")
        /// A read, write, sync or file-system call failed.
        public static let io = Code(rawValue: "I/O error")
        /// The disk is full; the log is read-only until it is reopened.
        public static let diskFull = Code(rawValue: "disk full")
        /// An earlier write or sync failed; appends are refused until the store is reopened.
        public static let poisoned = Code(rawValue: "poisoned")
        /// The log was opened read-only, or became read-only after a full disk.
        public static let readOnly = Code(rawValue: "read-only")
        /// Another process (or another open in this process) holds the store's writer lock.
        public static let locked = Code(rawValue: "locked")
        /// A frame is larger than the configured maximum frame size. Not thrown by appends: a
        /// payload over the maximum frame size is written as a record of several frames.
        public static let frameTooLarge = Code(rawValue: "frame too large")
        /// The files were written by an unknown format version.
        public static let unsupportedFormat = Code(rawValue: "unsupported format")
        /// The directory holds no store.
        public static let notFound = Code(rawValue: "not found")
        /// The log has been closed.
        public static let closed = Code(rawValue: "closed")
        /// A caller passed an option or argument that cannot work.
        public static let invalidArgument = Code(rawValue: "invalid argument")
        /// The store's files changed under a reader that needed them as they were (a backup from
        /// a read-only log while another process compacted): try again.
        public static let busy = Code(rawValue: "busy")

        public var description: String { rawValue }

        /// Lets `catch LogError.Code.corruption` match a ``LogError`` with that code.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? LogError)?.code == code
        }
    }

    /// The kind of failure.
    public var code: Code
    /// What happened, in words.
    public var message: String
    /// The file concerned, when there is one.
    public var path: String?
    /// The byte offset in `path` where the problem is, when known.
    public var offset: UInt64?
    /// The LSN concerned, when known.
    public var lsn: LSN?
    /// The operating system's error number, for I/O failures.
    public var errno: Int32?

    /// Creates an error.
    public init(
        _ code: Code, _ message: String, path: String? = nil, offset: UInt64? = nil,
        lsn: LSN? = nil, errno: Int32? = nil
    ) {
        self.code = code
        self.message = message
        self.path = path
        self.offset = offset
        self.lsn = lsn
        self.errno = errno
    }

    public var description: String {
        var text = "\(code): \(message)"
        var place: [String] = []
        if let path { place.append("file \(path)") }
        if let offset { place.append("offset \(offset)") }
        if let lsn { place.append("LSN \(lsn)") }
        if let errno { place.append("errno \(errno): \(String(cString: strerror(errno)))") }
        if !place.isEmpty { text += " (" + place.joined(separator: ", ") + ")" }
        return text
    }

    /// An I/O failure from a system call, classified: ENOSPC and EDQUOT become ``Code/diskFull``.
    package static func system(_ operation: String, path: String, errno number: Int32, offset: UInt64? = nil) -> LogError {
        let full = number == ENOSPC || number == EDQUOT
        return LogError(full ? .diskFull : .io, "\(operation) failed", path: path, offset: offset, errno: number)
    }

    /// A file's format version this build does not read (checked after the checksum, so the
    /// field is what was written). Above `current`, it was written by a newer version of Cairn,
    /// and the message says so: the store needs a newer build, not a repair.
    static func unsupportedVersion(
        of structure: String, _ version: UInt16, current: UInt16, path: String, offset: UInt64
    ) -> LogError {
        let message =
            version > current
            ? "\(structure) format version \(version): written by a newer version of Cairn (this build reads version \(current))"
            : "\(structure) format version \(version) is not one Cairn writes (this build reads version \(current))"
        return LogError(.unsupportedFormat, message, path: path, offset: offset)
    }

    /// Corruption found at a place in a file.
    package static func corruption(_ message: String, path: String, offset: UInt64? = nil, lsn: LSN? = nil) -> LogError {
        LogError(.corruption, message, path: path, offset: offset, lsn: lsn)
    }
}
