import CairnLog

/// The real file system, with a hook run before each `open`: to fail it, or to do something
/// between a reader's opening of two files.
package final class OpenHookFileIO: FileIO, Sendable {
    private let base = PosixFileIO()
    private let beforeOpen: @Sendable (String, FileOpenMode) throws -> Void

    /// A file system that calls `beforeOpen` with each path and mode before opening it; what it
    /// throws is what the open throws.
    package init(beforeOpen: @escaping @Sendable (String, FileOpenMode) throws -> Void) { self.beforeOpen = beforeOpen }

    package func open(_ path: String, mode: FileOpenMode) throws -> OpenFile {
        try beforeOpen(path, mode)
        return try base.open(path, mode: mode)
    }
    package func close(_ file: OpenFile) { base.close(file) }
    package func write(_ file: OpenFile, _ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws -> Int {
        try base.write(file, bytes, at: offset)
    }
    package func read(_ file: OpenFile, into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        try base.read(file, into: buffer, at: offset)
    }
    package func sync(_ file: OpenFile) throws { try base.sync(file) }
    package func fullSync(_ file: OpenFile) throws { try base.fullSync(file) }
    package func truncate(_ file: OpenFile, to length: UInt64) throws { try base.truncate(file, to: length) }
    package func size(of file: OpenFile) throws -> UInt64 { try base.size(of: file) }
    package func tryLock(_ file: OpenFile) throws -> Bool { try base.tryLock(file) }
    package func tryLockShared(_ file: OpenFile) throws -> Bool { try base.tryLockShared(file) }
    package func linkCount(of file: OpenFile) throws -> Int { try base.linkCount(of: file) }
    package func rename(_ source: String, to destination: String) throws { try base.rename(source, to: destination) }
    package func link(_ source: String, to destination: String) throws { try base.link(source, to: destination) }
    package func remove(_ path: String) throws { try base.remove(path) }
    package func syncDirectory(_ path: String) throws { try base.syncDirectory(path) }
    package func contentsOfDirectory(_ path: String) throws -> [String] { try base.contentsOfDirectory(path) }
    package func createDirectory(_ path: String) throws { try base.createDirectory(path) }
    package func exists(_ path: String) -> Bool { base.exists(path) }
    package func nextData(in file: OpenFile, from offset: UInt64) -> UInt64? { base.nextData(in: file, from: offset) }
    package func availableSpace(at path: String) -> UInt64? { base.availableSpace(at: path) }
}
