import CairnLog
import CairnSupport
import Foundation

/// What a base file's entries hold (docs/FORMAT.md §8, "Base entries"): the store's models,
/// oldest first, then its objects chunk by chunk, then a summary.
///
/// ```
/// model:   0x01, version (u8, 1), the model in Cairn's JSON model format
/// objects: 0x02, version (u8, 1), chunk number (u64), count n (u16, 1…256),
///          n × (slot u8, entity u32, value count u32, length u32, version u64),
///          then the n rows' bytes in that order (the value encoding of change records)
/// summary: 0x03, version (u8, 1), next object key (u64), object count (u64)
/// ```
enum BaseContents {
    static let modelKind: UInt8 = 1
    static let objectsKind: UInt8 = 2
    static let summaryKind: UInt8 = 3
    static let version: UInt8 = 1
    /// Bytes of one object's fields in an objects entry.
    static let objectHeaderSize = 21

    /// Writes the models and every object of `snapshot`, calling `beforeChunk` with the number
    /// of objects written so far before each chunk (it throws to stop). Returns the number of
    /// objects.
    static func write(_ snapshot: StoreSnapshot, models: [Model], to writer: BaseWriter, beforeChunk: (Int) throws -> Void) throws -> Int {
        for model in models {
            var bytes: [UInt8] = [modelKind, version]
            bytes.append(contentsOf: model.jsonData(pretty: false))
            try writer.append(bytes)
        }
        var objects = 0
        var entry = ByteWriter(capacity: Tuning.objectChunkSize * objectHeaderSize + Tuning.baseEntryCapacity)
        var rows = ByteWriter(capacity: Tuning.baseEntryCapacity)
        for (number, chunk) in snapshot.objects.chunks.all {
            try beforeChunk(objects)
            let count = try encodeObjects(number, chunk, into: &entry, rows: &rows)
            guard count > 0 else { continue }
            try writer.append(entry.bytes)
            objects += count
        }
        var summary = ByteWriter(capacity: 18)
        summary.writeByte(summaryKind)
        summary.writeByte(version)
        summary.write(snapshot.nextKey)
        summary.write(UInt64(objects))
        try writer.append(summary.bytes)
        return objects
    }

    /// Encodes the objects entry of chunk `number` into `entry` (emptied first), its rows
    /// gathered in `rows` on the way (a buffer kept between calls); returns the chunk's count of
    /// objects (0: an empty chunk, which has no entry).
    ///
    /// - Throws: ``StoreError/Code/invalidObject`` for a row of 4 GiB or more, which the
    ///   entry's 32-bit length cannot hold (the compaction stops; the log keeps the object).
    static func encodeObjects(_ number: UInt64, _ chunk: ObjectChunk, into entry: inout ByteWriter, rows: inout ByteWriter) throws -> Int {
        entry.removeAll()
        rows.removeAll()
        entry.writeByte(objectsKind)
        entry.writeByte(version)
        entry.write(number)
        entry.write(UInt16(0))  // the count, patched below
        var count = 0
        try chunk.forEachRow { slot, version, entity, row in
            guard let length = UInt32(exactly: row.bytes.count) else {
                throw StoreError(
                    .invalidObject, "object \(number << Tuning.objectChunkShift | UInt64(slot)) takes \(row.bytes.count) bytes: a base holds rows under 4 GiB",
                    objects: [ObjectID(entity: entity, key: number << Tuning.objectChunkShift | UInt64(slot))])
            }
            entry.writeByte(UInt8(slot))
            entry.write(UInt32(entity))
            entry.write(UInt32(row.count))
            entry.write(length)
            entry.write(version.rawValue)
            rows.write(bytes: row.bytes)
            count += 1
        }
        guard count > 0 else { return 0 }
        entry.patch(UInt16(count), at: 10)
        entry.write(bytes: rows.bytes)
        return count
    }

    /// Reads a base's entries back: the models, then objects handed to `load` one entry's
    /// worth at a time, as a whole chunk (their headers checked here against the last model;
    /// their rows by ``ObjectChunk/checkLoadedRows(model:)`` when the chunk is loaded).
    struct Reader {
        /// The LSN whose state the base holds (no object's version is later).
        let lastLSN: LSN
        /// The models, oldest first.
        private(set) var models: [Model] = []
        /// The summary's next key, once read.
        private(set) var nextKey: UInt64?
        private var objects = 0
        private var lastChunk: UInt64?
        private var largestKey: UInt64 = 0
        /// The number of values of each entity of the last model, nil for an abstract one:
        /// what each object's header is checked against, without a look at the entity's
        /// description (a reference counted for every object) each time.
        private var valueCounts: [Int?] = []

        init(lastLSN: LSN) {
            self.lastLSN = lastLSN
        }

        /// A reader of objects entries that follow `model` (a paged base's blocks, which hold
        /// no model entry).
        init(lastLSN: LSN, model: Model) {
            self.lastLSN = lastLSN
            adopt(model)
        }

        /// Takes `model` as the one objects follow from now on.
        private mutating func adopt(_ model: Model) {
            models.append(model)
            valueCounts = model.descriptions.map { $0.isAbstract ? nil : $0.propertyCount }
        }

        /// Reads one entry. `load` receives the chunk of an objects entry, and the model its
        /// objects follow.
        mutating func read(_ entry: UnsafeRawBufferPointer, at location: BaseReader.Location, load: (LoadedChunk, Model) throws -> Void) throws {
            func damaged(_ message: String) -> StoreError {
                StoreError(.corruptRecord, "base \(location.path), block at offset \(location.blockOffset): \(message)")
            }
            guard entry.count >= 2 else { throw damaged("an entry of \(entry.count) bytes") }
            guard entry[1] == version else {
                throw StoreError(
                    .unsupportedFormat,
                    "base \(location.path): entry version \(entry[1]) \(entry[1] > version ? "was written by a newer version of Cairn" : "is unknown"); this build reads version \(version)"
                )
            }
            guard nextKey == nil else { throw damaged("an entry after the summary") }
            var reader = ByteReader(entry, offset: 2)
            do {
                switch entry[0] {
                case modelKind:
                    guard objects == 0 else { throw damaged("a model after objects") }
                    do {
                        let model = try Model(jsonData: Data(UnsafeRawBufferPointer(rebasing: entry[2...])))
                        adopt(model)
                    } catch {
                        throw damaged("a stored model does not load: \(error)")
                    }
                case objectsKind:
                    guard let model = models.last else { throw damaged("objects before any model") }
                    try load(try readObjects(&reader, model: model, at: location, damaged: damaged), model)
                case summaryKind:
                    let key: UInt64 = try reader.read()
                    let count: UInt64 = try reader.read()
                    guard reader.isAtEnd, count == UInt64(objects) else {
                        throw damaged("the summary counts \(count) objects; the base holds \(objects)")
                    }
                    guard key <= ObjectID.keyLimit, key > largestKey else { throw damaged("the summary's next key \(key) is out of range") }
                    nextKey = key
                default:
                    throw damaged("unknown entry kind \(entry[0])")
                }
            } catch let overrun as ByteReader.Overrun {
                throw damaged("an entry truncated at byte \(overrun.offset)")
            } catch let problem as EncodingProblem {
                throw damaged(problem.message)
            }
        }

        private mutating func readObjects(
            _ reader: inout ByteReader, model: Model, at location: BaseReader.Location, damaged: (String) -> StoreError
        ) throws -> LoadedChunk {
            let number: UInt64 = try reader.read()
            let count = Int(try reader.read(UInt16.self))
            guard (1...Tuning.objectChunkSize).contains(count), number <= ObjectID.keyLimit >> Tuning.objectChunkShift else {
                throw damaged("an objects entry of chunk \(number) with \(count) objects")
            }
            guard lastChunk.map({ number > $0 }) ?? true else { throw damaged("chunk \(number) out of order") }
            lastChunk = number
            guard reader.remaining >= count * objectHeaderSize else { throw damaged("the objects entry of chunk \(number) is truncated") }
            var headers = ByteReader(try reader.readBytes(count * objectHeaderSize))
            var rows: [ObjectChunk.LoadedRow] = []
            rows.reserveCapacity(count)
            var previousSlot = -1
            for _ in 0..<count {
                let slot = Int(try headers.readByte())
                let entity = Int(try headers.read(UInt32.self))
                let values = Int(try headers.read(UInt32.self))
                let length = Int(try headers.read(UInt32.self))
                let version = LSN(try headers.read(UInt64.self))
                guard slot > previousSlot, slot < Tuning.objectChunkSize, entity < valueCounts.count, version <= lastLSN else {
                    throw damaged("object \(slot) of chunk \(number) is out of order, of no entity of the model, or later than the base")
                }
                previousSlot = slot
                guard values == valueCounts[entity], length <= reader.remaining else {
                    throw damaged("object \(slot) of chunk \(number) does not fit its entity \(model.descriptions[entity].name)")
                }
                let bytes = try reader.readBytes(length)
                let key = number << Tuning.objectChunkShift | UInt64(slot)
                guard key > 0, key < ObjectID.keyLimit else { throw damaged("object key \(key) is out of range") }
                largestKey = max(largestKey, key)
                rows.append(ObjectChunk.LoadedRow(slot: slot, entity: entity, count: values, version: version, bytes: bytes))
            }
            guard reader.isAtEnd else { throw damaged("\(reader.remaining) bytes after the objects of chunk \(number)") }
            objects += count
            // The rows are copied out of the entry here, on the reading thread; the snapshot
            // builder checks them (``StoreSnapshot/load(_:at:)``).
            return LoadedChunk(number: number, chunk: ObjectChunk.loaded(rows), location: location)
        }
    }
}

/// A chunk of objects as a base holds it: its number and the chunk, made whole (its rows in
/// one buffer, not yet checked against the model) and not yet reachable from any snapshot.
struct LoadedChunk: @unchecked Sendable {
    // Safety: the chunk is made by the base reader and handed, once, to the thread that
    // installs it in a snapshot; no one else holds it until then.
    var number: UInt64
    var chunk: ObjectChunk
    /// Where the base holds it (for errors).
    var location: BaseReader.Location
}
