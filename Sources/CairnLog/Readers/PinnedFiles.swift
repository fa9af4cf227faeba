import Glibc

/// The files a reader of the store needs, opened together as soon as it has read the manifest
/// that names them, and a ``FileIO`` that hands those open files out instead of opening them
/// again.
///
/// A compaction in another process replaces the manifest and then unlinks the files it no
/// longer names. A reader that opened each file only when it reached it could find one gone
/// halfway through; a file already open stays readable after it is unlinked (and the reader
/// lock keeps a writer from cutting it down, ``ReaderLock``). So a read-only open and an
/// inspection open every file of the manifest they read first: when one is missing (`ENOENT`)
/// and the store changed since (``ManifestFile/changedUnderReader(since:)``), they read the
/// manifest again; otherwise the missing file is reported where it is read, as damage. Any
/// other failure to open one (`EMFILE`, `EACCES`…) is an I/O error of the reader, thrown as
/// it is. At most a limit of files are held (``LogTuning/pinnedFilesLimit``: derived from the
/// process's limit on open descriptors); the rest are opened when reached.
package final class PinnedFiles: FileIO {
    private let io: any FileIO
    private let files: [String: OpenFile]
    /// The files that are not there (`ENOENT`): none when every file the manifest names was.
    package let missing: [String]

    /// Opens the base, dictionaries and segments `manifest` names, the first `limit` of them.
    ///
    /// - Throws: the ``LogError`` of a file that could not be opened for a reason other than
    ///   its absence (the files opened before it are closed).
    package init(_ manifest: Manifest, layout: StoreLayout, io: any FileIO, limit: Int) throws {
        var paths: [String] = []
        if let base = manifest.base { paths.append(layout.path(.base, base.number)) }
        paths += manifest.dictionaries.map { layout.path(.dictionary, UInt64($0.id)) }
        paths += manifest.segments.map { layout.path(.segment, $0.number) }
        var files: [String: OpenFile] = [:]
        var missing: [String] = []
        for path in paths.prefix(max(0, limit)) {
            do {
                files[path] = try io.open(path, mode: .readOnly)
            } catch let error as LogError where error.errno == ENOENT {
                missing.append(path)
            } catch {
                for file in files.values { io.close(file) }
                throw error
            }
        }
        self.io = io
        self.files = files
        self.missing = missing
    }

    /// Closes every file held.
    package func release() {
        for file in files.values { io.close(file) }
    }

    package func open(_ path: String, mode: FileOpenMode) throws -> OpenFile {
        if mode == .readOnly, let file = files[path] { return file }
        return try io.open(path, mode: mode)
    }

    package func close(_ file: OpenFile) {
        // A held file is closed by release().
        if files[file.path] == file { return }
        io.close(file)
    }

    package func write(_ file: OpenFile, _ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws -> Int {
        try io.write(file, bytes, at: offset)
    }
    package func read(_ file: OpenFile, into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        try io.read(file, into: buffer, at: offset)
    }
    package func sync(_ file: OpenFile) throws { try io.sync(file) }
    package func fullSync(_ file: OpenFile) throws { try io.fullSync(file) }
    package func truncate(_ file: OpenFile, to length: UInt64) throws { try io.truncate(file, to: length) }
    package func size(of file: OpenFile) throws -> UInt64 { try io.size(of: file) }
    package func tryLock(_ file: OpenFile) throws -> Bool { try io.tryLock(file) }
    package func tryLockShared(_ file: OpenFile) throws -> Bool { try io.tryLockShared(file) }
    package func linkCount(of file: OpenFile) throws -> Int { try io.linkCount(of: file) }
    package func rename(_ source: String, to destination: String) throws { try io.rename(source, to: destination) }
    package func link(_ source: String, to destination: String) throws { try io.link(source, to: destination) }
    package func remove(_ path: String) throws { try io.remove(path) }
    package func syncDirectory(_ path: String) throws { try io.syncDirectory(path) }
    package func contentsOfDirectory(_ path: String) throws -> [String] { try io.contentsOfDirectory(path) }
    package func createDirectory(_ path: String) throws { try io.createDirectory(path) }
    package func exists(_ path: String) -> Bool { io.exists(path) }
    package func nextData(in file: OpenFile, from offset: UInt64) -> UInt64? { io.nextData(in: file, from: offset) }
    package func availableSpace(at path: String) -> UInt64? { io.availableSpace(at: path) }
}
