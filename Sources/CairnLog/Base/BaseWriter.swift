import CairnSupport

/// How hard compaction compresses a base's blocks: LZ4 (fast), or LZ4-HC (smaller, slower to
/// write, as fast to read).
public enum CompactionLevel: String, Sendable, CaseIterable {
    /// LZ4: the online default.
    case fast
    /// LZ4-HC: the offline default (`cairn compact`).
    case high
}

/// A base file as written and synced, ready for ``Log/installBase(_:stopCutting:)``.
public struct WrittenBase: Sendable, Equatable {
    /// The base's number (its file is `NNNNNNNNNNNN.base`).
    public let number: UInt64
    /// The LSN whose state it holds.
    public let lastLSN: LSN
    /// Its length in bytes.
    public let length: UInt64
    /// The masked CRC32C of its bytes.
    let checksum: UInt32
    /// Its path.
    public let path: String
}

/// Writes a base file: entries (opaque bytes of any length) packed into blocks of about
/// ``LogTuning/baseBlockSize``, a long entry split across blocks, each block compressed and
/// checksummed; then the index and the trailer. Written under a temporary name (`NNNNNNNNNNNN.base.tmp`), synced, renamed and
/// the directory synced by ``finish()``; nothing lists it until ``Log/installBase(_:stopCutting:)``.
/// Used by one thread at a time. Dropped unfinished, it removes its temporary file. Once
/// finished, pass its base to ``Log/installBase(_:stopCutting:)``: until then no other base is begun.
public final class BaseWriter {
    private let io: any FileIO
    private let directory: String
    private let temporaryPath: String
    private let path: String
    private let header: BaseHeader
    private let level: CompactionLevel
    private var file: OpenFile?
    private var offset: UInt64 = 0
    /// Bytes written since the file was last synced.
    private var unsynced = 0
    /// CRC32C of every byte written so far, in file order (unmasked).
    private var checksum: UInt32 = 0
    private var block: [UInt8] = []
    private var compressed: [UInt8] = []
    private var blocks: [BaseBlock] = []
    private var entryCount: UInt64 = 0
    /// Called once, when the writer is abandoned unfinished (the log then allows another; a
    /// finished base holds the log's one slot until ``Log/installBase(_:stopCutting:)``).
    private var ended: (() -> Void)?
    private var finished = false
    private let step: (@Sendable (CompactionStep) -> Void)?

    /// The bytes of entries appended so far, uncompressed.
    public private(set) var rawBytes: UInt64 = 0

    init(
        io: any FileIO, layout: StoreLayout, header: BaseHeader, level: CompactionLevel, step: (@Sendable (CompactionStep) -> Void)?,
        ended: @escaping () -> Void
    ) throws {
        self.ended = ended
        self.step = step
        self.io = io
        self.directory = layout.directory
        self.path = layout.path(.base, header.number)
        self.temporaryPath = path + ".tmp"
        self.header = header
        self.level = level
        let file: OpenFile
        do {
            if io.exists(temporaryPath) { try io.remove(temporaryPath) }
            file = try io.open(temporaryPath, mode: .createNew)
        } catch {
            end()
            throw error
        }
        self.file = file
        block.reserveCapacity(BaseFile.maximumRawBlock)
        do {
            try write(header.encoded())
        } catch {
            abandon()
            throw error
        }
    }

    deinit { abandon() }

    /// Adds one entry (of any length: one longer than a block is split across blocks).
    ///
    /// - Throws: I/O errors (``LogError/Code/diskFull`` when the disk is full).
    public func append(_ entry: UnsafeRawBufferPointer) throws {
        let room = LogTuning.baseBlockSize - 4
        if !block.isEmpty && block.count + 4 + entry.count > LogTuning.baseBlockSize { try flushBlock() }
        var start = 0
        // Pieces of a long entry fill blocks of their own; the last may share its block.
        while entry.count - start > room {
            appendPiece(UnsafeRawBufferPointer(rebasing: entry[start..<(start + room)]), continues: true)
            try flushBlock()
            start += room
        }
        appendPiece(UnsafeRawBufferPointer(rebasing: entry[start...]), continues: false)
        entryCount += 1
        rawBytes += UInt64(entry.count)
    }

    private func appendPiece(_ piece: UnsafeRawBufferPointer, continues: Bool) {
        let header = UInt32(piece.count) | (continues ? BaseFile.continues : 0)
        withUnsafeBytes(of: header.littleEndian) { block.append(contentsOf: $0) }
        block.append(contentsOf: piece)
    }

    /// Adds one entry.
    public func append(_ entry: [UInt8]) throws {
        try entry.withUnsafeBytes { try append($0) }
    }

    /// Writes the last block, the index and the trailer; syncs the file, renames it to its
    /// name and syncs the directory.
    public func finish() throws -> WrittenBase {
        guard let file else { throw LogError(.closed, "the base writer was abandoned", path: temporaryPath) }
        do {
            try flushBlock()
            try write(BaseTrailer.encoded(blocks: blocks, entryCount: entryCount, indexOffset: offset))
            step?(.baseWritten)
            try io.fullSync(file)
            step?(.baseSynced)
            io.close(file)
            self.file = nil
            try io.rename(temporaryPath, to: path)
            try io.syncDirectory(directory)
            step?(.baseRenamed)
        } catch {
            abandon()
            throw error
        }
        finished = true
        return WrittenBase(number: header.number, lastLSN: header.lastLSN, length: offset, checksum: CRC32C.mask(checksum), path: path)
    }

    /// Stops writing and removes the temporary file (best effort).
    public func abandon() {
        guard !finished else { return }
        defer { end() }
        if let file {
            io.close(file)
            self.file = nil
        }
        // Also after the file was closed, when the rename failed.
        if io.exists(temporaryPath) { try? io.remove(temporaryPath) }
    }

    private func end() {
        ended?()
        ended = nil
    }

    private func flushBlock() throws {
        guard !block.isEmpty else { return }
        let stored = block.withUnsafeBytes { BaseBlock.encode($0, level: level, into: &compressed) }
        blocks.append(BaseBlock(offset: offset, storedLength: UInt32(stored), rawLength: UInt32(block.count)))
        try compressed.withUnsafeBytes { try write(UnsafeRawBufferPointer(rebasing: $0[0..<(BaseFile.blockHeaderSize + stored)])) }
        block.removeAll(keepingCapacity: true)
    }

    private func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    private func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard let file else { throw LogError(.closed, "the base writer was abandoned", path: temporaryPath) }
        try io.writeAll(file, bytes, at: offset)
        checksum = CRC32C.checksum(bytes, extending: checksum)
        offset += UInt64(bytes.count)
        // Written back as it goes: one flush of the whole base at the end would queue tens of
        // megabytes ahead of the saves' syncs on the same disk (a save held up for as long).
        unsynced += bytes.count
        if unsynced >= BaseFile.writebackInterval {
            try io.sync(file)
            unsynced = 0
        }
    }
}
