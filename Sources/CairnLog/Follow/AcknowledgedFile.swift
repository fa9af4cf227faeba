import Glibc
import struct Foundation.UUID

/// `ACKNOWLEDGED`, in the store directory: the LSN of the last frame the writer acknowledged,
/// for followers in other processes (``Log/followWriter(byteLimit:)``). A follower applies no
/// frame after it: a frame written but not yet acknowledged may still be cut (a failed sync).
///
/// ```
/// offset  size  field
///      0    16  store ID
///     16     8  LSN (little-endian)
///     24     4  CRC32C of bytes 0..<24, masked
/// ```
///
/// The writer rewrites the 28 bytes in place after each acknowledgement, without syncing: the
/// file tells live followers, it is never needed to recover. A read that meets a torn write
/// (checksum mismatch) reads again. A store written by a build without the file is followed
/// up to its last complete frame. A following open reads no frame after it either
/// (`LogOptions.readsAcknowledgedOnly`).
package enum AcknowledgedFile {
    /// The file's name in the store directory.
    package static let name = "ACKNOWLEDGED"
    static let size = 28

    /// The file's bytes for `lsn` of store `storeID`.
    static func bytes(storeID: UUID, lsn: LSN) -> [UInt8] {
        var bytes = withUnsafeBytes(of: storeID.uuid) { Array($0) }
        withUnsafeBytes(of: lsn.rawValue.littleEndian) { bytes += $0 }
        let checksum = bytes.withUnsafeBytes { CRC32C.mask(CRC32C.checksum($0)) }
        withUnsafeBytes(of: checksum.littleEndian) { bytes += $0 }
        return bytes
    }

    /// What the file says: the store and its last acknowledged LSN; nil when there is no file
    /// (a writer of an earlier build).
    ///
    /// - Throws: ``LogError/Code/busy`` when it stays torn or short over a few reads (a
    ///   writer rewriting it that fast, or a damaged file: try again later);
    ///   ``LogError/Code/corruption`` when it is not a regular file; other I/O errors.
    static func read(_ layout: StoreLayout, _ io: any FileIO) throws -> (storeID: UUID, lsn: LSN)? {
        let path = layout.path(name)
        var problem = ""
        for _ in 0..<8 {
            let bytes: [UInt8]
            do {
                bytes = try io.readWholeFile(path, limit: 4096)
            } catch let error as LogError where error.errno == ENOENT {
                return nil
            }
            guard bytes.count == size else {
                problem = "\(bytes.count) bytes, not \(size)"
                continue
            }
            let read = bytes.withUnsafeBytes { raw -> (UUID, LSN)? in
                let stored = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 24, as: UInt32.self))
                guard stored == CRC32C.mask(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<24]))) else { return nil }
                return (UUID(bytes: raw), LSN(UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self))))
            }
            guard let read else {
                problem = "its checksum does not match"
                continue
            }
            return (read.0, read.1)
        }
        throw LogError(.busy, "the writer's acknowledgement stays unreadable over 8 reads (\(problem)); trying again later", path: path)
    }
}

/// The writer's side of ``AcknowledgedFile``: the open file and the LSN it last wrote.
///
/// The file is advisory: a write that fails after the open is not the log's failure (the
/// frames are durable; only followers are told late). The writer then stops writing it, and
/// followers wait at the last LSN it holds until the store is opened again.
struct AcknowledgedFileWriter {
    let file: OpenFile
    let storeID: UUID
    var written: LSN
    /// A write failed: no more are tried.
    var failed = false

    /// Opens (or creates) the file and writes `lsn` in it.
    ///
    /// - Throws: ``LogError/Code/corruption`` when it is not a regular file (a FIFO, a
    ///   directory, a symbolic link put in its place); I/O errors.
    static func open(_ layout: StoreLayout, _ io: any FileIO, storeID: UUID, lsn: LSN) throws -> AcknowledgedFileWriter {
        let file = try io.open(layout.path(AcknowledgedFile.name), mode: .createOrOpen)
        do {
            try io.truncate(file, to: UInt64(AcknowledgedFile.size))
            try AcknowledgedFile.bytes(storeID: storeID, lsn: lsn).withUnsafeBytes { try io.writeAll(file, $0, at: 0) }
        } catch {
            io.close(file)
            throw error
        }
        return AcknowledgedFileWriter(file: file, storeID: storeID, written: lsn)
    }

    /// Writes `lsn` when it is later than the last written.
    mutating func write(_ lsn: LSN, _ io: any FileIO) {
        guard lsn > written, !failed else { return }
        let bytes = AcknowledgedFile.bytes(storeID: storeID, lsn: lsn)
        if (try? bytes.withUnsafeBytes({ try io.writeAll(file, $0, at: 0) })) != nil {
            written = lsn
        } else {
            failed = true
        }
    }
}
