import CairnLog
import CairnSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What ``Store/writePagedBasePrototype(to:entity:level:)`` wrote.
@_spi(PagedBasePrototype)
public struct PagedBaseSummary: Sendable {
    /// The file's length in bytes.
    public let bytes: UInt64
    /// The objects' encoded bytes, before compression.
    public let rawObjectBytes: UInt64
    /// Its blocks.
    public let blocks: Int
    /// The objects it holds.
    public let objects: Int
    /// Entries in its index of keys.
    public let keys: Int
}

extension Store {
    /// Writes the published state as a paged base (``PagedBase``), the prototype of
    /// docs/SCALE.md's design for stores larger than memory, with an index of `entity`'s first
    /// uniqueness constraint of one attribute. A measurement prototype: the store neither writes
    /// nor reads such files itself.
    ///
    /// - Throws: ``StoreError/Code/invalidArgument`` when `entity` has no such constraint or an
    ///   object's entry is larger than a block; I/O errors.
    @_spi(PagedBasePrototype)
    public func writePagedBasePrototype(to path: String, entity entityName: String, level: CompactionLevel = .fast) throws -> PagedBaseSummary {
        let snapshot = self.snapshot
        let model = snapshot.model
        let entity = try model.require(entityName)
        guard let constraint = entity.uniqueness.first(where: { $0.positions.count == 1 }) else {
            throw StoreError(.invalidArgument, "\(entity.name) has no uniqueness constraint of one attribute to index", entity: entity.name)
        }
        // Written under a temporary name and renamed: a reader mapping an older file at `path`
        // keeps it whole.
        let temporary = path + ".tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: nil), let file = FileHandle(forWritingAtPath: temporary) else {
            throw StoreError(.invalidLocation, "cannot create \(temporary)", file: temporary)
        }
        var renamed = false
        defer {
            try? file.close()
            if !renamed { try? FileManager.default.removeItem(atPath: temporary) }
        }
        var output = PagedBaseOutput(file: file)
        var layout = PagedBaseLayout()
        var directory = ByteWriter(capacity: 1 << 16)
        var keys: [(hash: UInt64, key: UInt64)] = []
        var block = ByteWriter(capacity: BaseFile.maximumRawBlock)
        var encoded: [UInt8] = []
        var firstChunk: UInt64 = 0
        var rawObjectBytes: UInt64 = 0
        var objects = 0

        func flush() throws {
            guard !block.bytes.isEmpty else { return }
            let stored = block.bytes.withUnsafeBytes { BaseBlock.encode($0, level: level, into: &encoded) }
            directory.write(output.offset)
            directory.write(UInt32(stored))
            directory.write(UInt32(block.bytes.count))
            directory.write(firstChunk)
            try encoded.withUnsafeBytes { try output.write(UnsafeRawBufferPointer(rebasing: $0[0..<(BaseFile.blockHeaderSize + stored)])) }
            layout.blockCount += 1
            block.removeAll()
        }

        var entry = ByteWriter(capacity: Tuning.objectChunkSize * BaseContents.objectHeaderSize + Tuning.baseEntryCapacity)
        var rows = ByteWriter(capacity: Tuning.baseEntryCapacity)
        for (number, chunk) in snapshot.objects.chunks.all {
            let count = try BaseContents.encodeObjects(number, chunk, into: &entry, rows: &rows)
            guard count > 0 else { continue }
            guard entry.bytes.count + 4 <= BaseFile.maximumRawBlock else {
                throw StoreError(.invalidArgument, "chunk \(number) takes \(entry.bytes.count) bytes, more than a block of a paged base")
            }
            if !block.bytes.isEmpty && block.bytes.count + 4 + entry.bytes.count > LogTuning.baseBlockSize { try flush() }
            if block.bytes.isEmpty { firstChunk = number }
            block.write(UInt32(entry.bytes.count))
            block.write(bytes: entry.bytes)
            rawObjectBytes += UInt64(entry.bytes.count)
            objects += count
            chunk.forEachRow { slot, _, entity, row in
                guard model.descriptions[entity].uniqueness.contains(constraint), let hash = StoreSnapshot.keyHash(row, constraint) else { return }
                keys.append((hash, number << Tuning.objectChunkShift | UInt64(slot)))
            }
        }
        try flush()

        let modelBytes = model.jsonData(pretty: false)
        layout.modelOffset = output.offset
        layout.modelLength = UInt64(modelBytes.count)
        var checksum = modelBytes.withUnsafeBytes { CRC32C.checksum($0) }
        try modelBytes.withUnsafeBytes { try output.write($0) }
        layout.directoryOffset = output.offset
        checksum = directory.bytes.withUnsafeBytes { CRC32C.checksum($0, extending: checksum) }
        try directory.bytes.withUnsafeBytes { try output.write($0) }

        keys.sort { ($0.hash, $0.key) < ($1.hash, $1.key) }
        layout.keysOffset = output.offset
        layout.keyCount = UInt64(keys.count)
        var fences = ByteWriter(capacity: (keys.count / PagedBaseLayout.keysPerFence + 1) * 8)
        var pair = ByteWriter(capacity: PagedBaseLayout.keyEntrySize)
        for (index, key) in keys.enumerated() {
            if index % PagedBaseLayout.keysPerFence == 0 { fences.write(key.hash) }
            pair.removeAll()
            pair.write(key.hash)
            pair.write(key.key)
            try pair.bytes.withUnsafeBytes { try output.write($0) }
        }
        layout.fencesOffset = output.offset
        layout.fenceCount = UInt64(fences.bytes.count / 8)
        checksum = fences.bytes.withUnsafeBytes { CRC32C.checksum($0, extending: checksum) }
        try fences.bytes.withUnsafeBytes { try output.write($0) }

        layout.lastLSN = snapshot.lsn.rawValue
        layout.nextKey = snapshot.nextKey
        layout.objectCount = UInt64(objects)
        layout.owner = UInt32(constraint.owner)
        layout.number = UInt32(constraint.number)
        try layout.trailer(extending: checksum).withUnsafeBytes { try output.write($0) }
        try output.finish()
        guard rename(temporary, path) == 0 else { throw LogError.system("rename", path: temporary, errno: errno) }
        renamed = true
        return PagedBaseSummary(bytes: output.offset, rawObjectBytes: rawObjectBytes, blocks: Int(layout.blockCount), objects: objects, keys: keys.count)
    }
}

/// The paged base writer's output: bytes gathered in 4 MiB and written, then synced.
private struct PagedBaseOutput {
    let file: FileHandle
    private(set) var offset: UInt64 = 0
    private var pending: [UInt8] = []

    init(file: FileHandle) {
        self.file = file
        pending.reserveCapacity(4 << 20)
    }

    mutating func write(_ bytes: UnsafeRawBufferPointer) throws {
        pending.append(contentsOf: bytes)
        offset += UInt64(bytes.count)
        if pending.count >= 4 << 20 { try drain() }
    }

    mutating func finish() throws {
        try drain()
        try file.synchronize()
    }

    private mutating func drain() throws {
        try file.write(contentsOf: pending)
        pending.removeAll(keepingCapacity: true)
    }
}
