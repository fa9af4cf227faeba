import CairnLog
import CairnSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A store's state opened over a mapped paged base (``PagedBaseLayout``): the measured
/// prototype of docs/SCALE.md's design for stores larger than memory. An open maps the file
/// and reads only its trailer, model, block directory and key fences; a lookup by unique key
/// searches the mapped keys and decodes the one block that holds the object; a scan decodes
/// block after block. Decoded chunks stay in a cache of a bounded size, least recently used
/// out. It reads the state as of the base's LSN only (no log tail over it), on one thread.
@_spi(PagedBasePrototype)
public final class PagedBase {
    /// The file.
    public let path: String
    /// The model the objects follow.
    public let model: Model
    /// The objects it holds.
    public var objectCount: Int { Int(clamping: layout.objectCount) }
    /// The bytes of decoded chunks the cache holds now.
    public private(set) var cachedBytes = 0
    /// Blocks decompressed so far (each miss of the cache).
    public private(set) var blocksDecoded = 0

    /// The most objects a lookup reads under one key hash before it calls the file damaged.
    public static let candidateLimit = 64

    private let layout: PagedBaseLayout
    private let mapped: UnsafeRawBufferPointer
    private let blocks: [(block: BaseBlock, firstChunk: UInt64)]
    private let fences: [UInt64]
    private let constraint: UniquenessConstraint
    private let cacheLimit: Int
    private var cache: [UInt64: CachedChunk] = [:]
    /// The chunk numbers of each block decoded so far (empty until it is).
    private var blockChunks: [[UInt64]]
    private var clock: UInt64 = 0
    private var raw: [UInt8] = []

    /// A decoded chunk: its size, when it was last used.
    private struct CachedChunk {
        var chunk: ObjectChunk
        var bytes: Int
        var used: UInt64
    }

    /// Maps the paged base at `path` and reads its directories, keeping at most `cacheBytes`
    /// of decoded chunks.
    ///
    /// - Throws: ``StoreError/Code/corruptRecord`` naming the file and offset of what does not
    ///   check; I/O errors (``LogError``).
    public init(path: String, cacheBytes: Int) throws {
        self.path = path
        cacheLimit = max(cacheBytes, 0)
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw LogError.system("open", path: path, errno: errno) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw LogError.system("fstat", path: path, errno: errno) }
        let size = UInt64(max(status.st_size, 0))
        guard size >= UInt64(PagedBaseLayout.trailerSize), let length = Int(exactly: size) else {
            throw StoreError(.corruptRecord, "paged base \(path) is too short (\(size) bytes)", file: path, offset: 0)
        }
        guard let address = mmap(nil, length, PROT_READ, MAP_SHARED, descriptor, 0), address != MAP_FAILED else {
            throw LogError.system("mmap", path: path, errno: errno)
        }
        let mapped = UnsafeRawBufferPointer(start: address, count: length)
        do {
            let layout = try PagedBaseLayout(
                trailer: UnsafeRawBufferPointer(rebasing: mapped[(length - PagedBaseLayout.trailerSize)...]), fileSize: size, path: path)
            let regions = layout.coveredRegions
            let modelBytes = UnsafeRawBufferPointer(rebasing: mapped[regions[0]])
            let directory = UnsafeRawBufferPointer(rebasing: mapped[regions[1]])
            let fenceBytes = UnsafeRawBufferPointer(rebasing: mapped[regions[2]])
            let crc = CRC32C.checksum(
                UnsafeRawBufferPointer(rebasing: mapped[(length - PagedBaseLayout.trailerSize)..<(length - 16)]), extending: layout.regionsChecksum(mapped))
            let recorded = mapped.loadUnaligned(fromByteOffset: length - 16, as: UInt32.self)
            guard CRC32C.mask(crc) == UInt32(littleEndian: recorded) else {
                throw StoreError(.corruptRecord, "paged base \(path): its directories do not match their checksum", file: path, offset: layout.modelOffset)
            }
            do {
                model = try Model(jsonData: Data(modelBytes))
            } catch {
                throw StoreError(.corruptRecord, "paged base \(path): its model does not load: \(error)", file: path, offset: layout.modelOffset)
            }
            guard Int(layout.owner) < model.descriptions.count,
                let constraint = model.descriptions[Int(layout.owner)].uniqueness.first(where: {
                    $0.owner == Int(layout.owner) && $0.number == Int(layout.number)
                }),
                constraint.positions.count == 1
            else {
                throw StoreError(
                    .corruptRecord, "paged base \(path): its keys name no constraint of one attribute of its model", file: path,
                    offset: size - UInt64(PagedBaseLayout.trailerSize) + 88)
            }
            self.constraint = constraint
            blocks = try Self.readDirectory(directory, blocksEnd: layout.modelOffset, path: path)
            blockChunks = Array(repeating: [], count: blocks.count)
            fences = (0..<Int(layout.fenceCount)).map { UInt64(littleEndian: fenceBytes.loadUnaligned(fromByteOffset: $0 * 8, as: UInt64.self)) }
            self.layout = layout
            self.mapped = mapped
        } catch {
            munmap(address, length)
            throw error
        }
    }

    deinit {
        if let address = mapped.baseAddress { munmap(UnsafeMutableRawPointer(mutating: address), mapped.count) }
    }

    /// The block directory, each block within the blocks' region and after the one before, its
    /// first chunk after the one before's.
    private static func readDirectory(_ bytes: UnsafeRawBufferPointer, blocksEnd: UInt64, path: String) throws -> [(block: BaseBlock, firstChunk: UInt64)] {
        var reader = ByteReader(bytes)
        var blocks: [(block: BaseBlock, firstChunk: UInt64)] = []
        blocks.reserveCapacity(bytes.count / PagedBaseLayout.directoryEntrySize)
        var end: UInt64 = 0
        do {
            while !reader.isAtEnd {
                let block = BaseBlock(offset: try reader.read(), storedLength: try reader.read(), rawLength: try reader.read())
                let first: UInt64 = try reader.read()
                let total = UInt64(BaseFile.blockHeaderSize) + UInt64(block.storedLength)
                guard block.offset == end, total <= blocksEnd - end, Int(block.rawLength) <= BaseFile.maximumRawBlock,
                    Int(block.storedLength) <= BaseFile.maximumStoredBlock,
                    blocks.last.map({ first > $0.firstChunk }) ?? true
                else {
                    throw StoreError(
                        .corruptRecord, "paged base \(path): block \(blocks.count) of its directory is out of place", file: path, offset: block.offset)
                }
                end += total
                blocks.append((block, first))
            }
        } catch is ByteReader.Overrun {
            throw StoreError(.corruptRecord, "paged base \(path): its directory is truncated", file: path)
        }
        guard end == blocksEnd else {
            throw StoreError(.corruptRecord, "paged base \(path): its blocks end at \(end), not \(blocksEnd)", file: path, offset: end)
        }
        return blocks
    }

    /// The object of the key's entity family whose unique key is `value`, or nil.
    ///
    /// - Throws: ``StoreError/Code/corruptRecord`` when a chunk it reads does not check, or
    ///   more objects than ``candidateLimit`` share the key's hash;
    ///   ``LogError/Code/corruption`` when a block's checksum or header does not.
    public func object(withKey value: Value) throws -> ObjectID? {
        let position = constraint.positions[0]
        return try ValueEncoding.withEncoded(value) { encoded -> Result<ObjectID?, any Error> in
            let hash = KeyHasher.hash(of: encoded, for: constraint)
            do {
                for key in try candidates(hash) {
                    guard let record = try record(key), model.descriptions[record.entity].uniqueness.contains(constraint) else { continue }
                    if record.row.withValueBytes(position, { RowBytes.same($0, encoded) }) { return .success(ObjectID(entity: record.entity, key: key)) }
                }
                return .success(nil)
            } catch {
                return .failure(error)
            }
        }.get()
    }

    /// The values of object `id`, by attribute name (relationships left out), or nil when it
    /// holds no such object.
    public func values(of id: ObjectID) throws -> [String: Value]? {
        guard let record = try record(id.key), record.entity == id.entity else { return nil }
        var values: [String: Value] = [:]
        for (position, name) in model.descriptions[record.entity].propertyNames.enumerated() {
            if case .attribute(let value) = record.value(position) { values[name] = value }
        }
        return values
    }

    /// The objects that match `request`'s predicate (its sort keys are not read), counted by
    /// decoding every block that is not in the cache and scanning its chunks' columns as a
    /// resident store does.
    ///
    /// - Throws: ``StoreError/Code/invalidPredicate`` for a predicate that follows a
    ///   relationship (the prototype reads no object but the one tested); what a chunk's
    ///   decoding throws.
    public func count(_ request: FetchRequest) throws -> Int {
        let query = try PreparedQuery(request, model: model)
        if let predicate = query.predicate, predicate.readsOtherObjects {
            throw StoreError(
                .invalidPredicate, "a paged base counts with predicates on the objects' own attributes only", entity: query.entity.name)
        }
        let filter = query.rowFilter().map { ScanFilter(rows: $0, reader: ObjectReader { _ in nil }) }
        let wanted = model.descriptions.indices.map(query.family.contains)
        var visitor = CountingVisitor(filter: filter)
        let memo = RowMemo.allocate()
        defer { memo.deallocate() }
        for index in blocks.indices {
            for (number, chunk) in try chunks(ofBlock: index) {
                chunk.visit(number << Tuning.objectChunkShift, wanted, memo, &visitor)
            }
        }
        return visitor.takeResult()
    }

    /// The object keys filed under `hash`, read in place from the mapped keys: a binary search
    /// of the fences, then of the 256 keys between two of them.
    private func candidates(_ hash: UInt64) throws -> [UInt64] {
        let count = Int(layout.keyCount)
        guard count > 0 else { return [] }
        // The first fence at or above the hash: the first key at or above it is after the
        // fence before that one, and at most at this fence.
        var low = 0, high = fences.count
        while low < high {
            let middle = (low + high) / 2
            if fences[middle] < hash { low = middle + 1 } else { high = middle }
        }
        var first = max(low - 1, 0) * PagedBaseLayout.keysPerFence
        var last = min(low * PagedBaseLayout.keysPerFence, count)
        while first < last {
            let middle = (first + last) / 2
            if keyHash(at: middle) < hash { first = middle + 1 } else { last = middle }
        }
        var keys: [UInt64] = []
        while first < count, keyHash(at: first) == hash {
            // A 64-bit hash shared by so many keys is damage, not chance.
            guard keys.count < Self.candidateLimit else {
                throw StoreError(
                    .corruptRecord, "paged base \(path): more than \(Self.candidateLimit) keys share one hash", file: path, offset: UInt64(keyOffset(first)))
            }
            keys.append(UInt64(littleEndian: mapped.loadUnaligned(fromByteOffset: keyOffset(first) + 8, as: UInt64.self)))
            first += 1
        }
        return keys
    }

    private func keyOffset(_ index: Int) -> Int { Int(layout.keysOffset) + index * PagedBaseLayout.keyEntrySize }

    private func keyHash(at index: Int) -> UInt64 { UInt64(littleEndian: mapped.loadUnaligned(fromByteOffset: keyOffset(index), as: UInt64.self)) }

    /// The record of object `key`, from its chunk (decoded if not cached); nil when none.
    private func record(_ key: UInt64) throws -> ObjectRecord? {
        let number = key >> Tuning.objectChunkShift
        // The last block whose first chunk is at or below the number.
        var low = 0, high = blocks.count
        while low < high {
            let middle = (low + high) / 2
            if blocks[middle].firstChunk <= number { low = middle + 1 } else { high = middle }
        }
        guard low > 0 else { return nil }
        clock += 1
        let chunk: ObjectChunk?
        if let cached = cache[number] {
            cache[number]?.used = clock
            chunk = cached.chunk
        } else {
            // Decoded whether or not the cache keeps it (a cache smaller than a chunk keeps none).
            chunk = try decode(low - 1, only: number).first?.chunk
        }
        return chunk?.record(Int(key & UInt64(Tuning.objectChunkSize - 1)))
    }

    /// Block `index`'s chunks, those not cached decoded (and cached, as room allows).
    private func chunks(ofBlock index: Int) throws -> [(number: UInt64, chunk: ObjectChunk)] {
        clock += 1
        let cached = blockChunks[index].compactMap { number in cache[number].map { (number, $0.chunk) } }
        if cached.count == blockChunks[index].count && !cached.isEmpty {
            for (number, _) in cached { cache[number]?.used = clock }
            return cached
        }
        return try decode(index, only: nil)
    }

    /// Decodes block `index` (checked, decompressed) and makes a chunk of each of its objects
    /// entries (or only of chunk `only`), its rows checked against the model; caches them.
    private func decode(_ index: Int, only: UInt64?) throws -> [(number: UInt64, chunk: ObjectChunk)] {
        let block = blocks[index].block
        let start = Int(block.offset)
        let bytes = UnsafeRawBufferPointer(rebasing: mapped[start..<(start + BaseFile.blockHeaderSize + Int(block.storedLength))])
        if raw.count < Int(block.rawLength) { raw = [UInt8](repeating: 0, count: BaseFile.maximumRawBlock) }
        let rawLength = try raw.withUnsafeMutableBytes { try block.decode(bytes, into: $0, path: path) }
        blocksDecoded += 1
        let location = BaseReader.Location(path: path, blockOffset: block.offset)
        var reader = BaseContents.Reader(lastLSN: LSN(layout.lastLSN), model: model)
        var chunks: [(number: UInt64, chunk: ObjectChunk)] = []
        var numbers: [UInt64] = []
        let nextBlockChunk = index + 1 < blocks.count ? blocks[index + 1].firstChunk : UInt64.max
        func damaged(_ message: String) -> StoreError {
            StoreError(.corruptRecord, "paged base \(path), block \(index): \(message)", file: path, offset: block.offset)
        }
        try raw.withUnsafeBytes { all in
            var position = 0
            while position < rawLength {
                guard rawLength - position >= 4 else { throw damaged("it ends inside a length") }
                let length = Int(UInt32(littleEndian: all.loadUnaligned(fromByteOffset: position, as: UInt32.self)))
                guard length <= rawLength - position - 4, length >= 10 else { throw damaged("an entry of \(length) bytes runs past it") }
                let entry = UnsafeRawBufferPointer(rebasing: all[(position + 4)..<(position + 4 + length)])
                position += 4 + length
                guard entry[0] == BaseContents.objectsKind else { throw damaged("an entry of kind \(entry[0]), not objects") }
                let number = UInt64(littleEndian: entry.loadUnaligned(fromByteOffset: 2, as: UInt64.self))
                guard numbers.last.map({ number > $0 }) ?? (number == blocks[index].firstChunk), number < nextBlockChunk else {
                    throw damaged("chunk \(number) is out of order")
                }
                numbers.append(number)
                if let only, number != only { continue }
                try reader.read(entry, at: location) { loaded, _ in
                    guard loaded.number == number else { throw damaged("an entry names two chunks") }
                    do {
                        try loaded.chunk.checkLoadedRows(model: self.model)
                    } catch let problem as EncodingProblem {
                        throw damaged("chunk \(number): \(problem.message)")
                    }
                    chunks.append((number, loaded.chunk))
                }
            }
        }
        guard !numbers.isEmpty else { throw damaged("it holds no chunk") }
        blockChunks[index] = numbers
        for (number, chunk) in chunks { remember(chunk, number: number) }
        return chunks
    }

    /// Caches a decoded chunk; when the cache would pass its limit, the least recently used
    /// quarter of it goes (a sort now and then rather than a list kept in order at every read).
    /// A chunk counts its rows and slot entries: the columns a scan adds to a cached chunk are
    /// not counted (they grow it by about the scanned attribute's bytes).
    private func remember(_ chunk: ObjectChunk, number: UInt64) {
        let bytes = chunk.rowBytes + Tuning.objectChunkSize * 24
        guard bytes <= cacheLimit, cache[number] == nil else { return }
        if cachedBytes + bytes > cacheLimit {
            var kept = min(cacheLimit - cacheLimit / 4, cacheLimit - bytes)
            for (number, cached) in cache.sorted(by: { $0.value.used > $1.value.used }) {
                if kept >= cached.bytes {
                    kept -= cached.bytes
                } else {
                    cache[number] = nil
                    cachedBytes -= cached.bytes
                }
            }
        }
        cache[number] = CachedChunk(chunk: chunk, bytes: bytes, used: clock)
        cachedBytes += bytes
    }

}

extension CompiledPredicate {
    /// Whether testing an object reads another one: a key path across a relationship, a
    /// collection, a `SUBQUERY` or `ANY`.
    fileprivate var readsOtherObjects: Bool {
        switch self {
        case .comparison(let comparison): comparison.lhs.readsOtherObjects || comparison.rhs.readsOtherObjects
        case .and(let parts), .or(let parts): parts.contains(where: \.readsOtherObjects)
        case .not(let part): part.readsOtherObjects
        case .constant: false
        case .someMatch: true
        }
    }
}

extension CompiledExpression {
    /// Whether its value is read from another object than the one tested.
    fileprivate var readsOtherObjects: Bool {
        switch self {
        case .keyPath(let path): if case .attribute = path.terminal { !path.steps.isEmpty } else { true }
        case .collection: true
        case .constant, .list, .evaluatedObject, .object, .objects: false
        }
    }
}
