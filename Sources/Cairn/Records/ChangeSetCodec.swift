import CairnLog
import CairnSupport
import Foundation

/// The binary form of a ``ChangeSet`` (docs/FORMAT.md, "Change records").
///
/// All integers are LEB128 varints unless said otherwise; values are written, read and checked
/// by ``ValueEncoding``. Decoding checks every entity index, property position and value kind
/// against the model, so a damaged or foreign record is refused with the LSN rather than applied.
enum ChangeSetCodec {
    /// Writes the body of a change record of `version` (1, or 2 for inserts in parts: see
    /// ``recordVersion(inserts:)``).
    static func encode(_ changes: ChangeSet, version: UInt8 = 1, into writer: inout ByteWriter) {
        // Room for a typical record at once (a save of 10,000 objects is a megabyte or so),
        // rather than a dozen reallocations that copy everything written so far.
        writer.reserve(16 + changes.inserts.reduce(0) { $0 + 12 + 12 * $1.values.count } + changes.updates.count * 32 + changes.deletes.count * 8)
        let inserts = changes.inserts
        if version >= 2 {
            encodeParts(inserts, into: &writer)
        } else if inserts.count >= concurrentInserts {
            writer.writeVarint(UInt64(inserts.count))
            // The second half is encoded on another core meanwhile, then appended.
            let half = inserts.count / 2
            let second = ConcurrentResult { () throws(Never) -> [UInt8] in
                var part = ByteWriter(capacity: inserts[half...].reduce(0) { $0 + 12 + 12 * $1.values.count })
                encodeInserts(inserts[half...], into: &part)
                return part.bytes
            }
            encodeInserts(inserts[..<half], into: &writer)
            writer.write(bytes: second.value())
        } else {
            writer.writeVarint(UInt64(inserts.count))
            encodeInserts(inserts[...], into: &writer)
        }
        writeUpdates(changes.updates, &writer)
        writer.writeVarint(UInt64(changes.deletes.count))
        for id in changes.deletes { ValueEncoding.writeID(id, &writer) }
    }

    /// Change sets with at least this many inserts encode them on two cores.
    static let concurrentInserts = 4096

    static func encodeInserts(_ inserts: ArraySlice<ChangeSet.Insert>, into writer: inout ByteWriter) {
        for insert in inserts {
            ValueEncoding.writeID(insert.id, &writer)
            for value in insert.values { ValueEncoding.write(value, &writer) }
        }
    }

    /// Encodes a change set of new objects alone, `writeValues` writing the values of the object
    /// at each index (as ``ValueEncoding/write(_:_:)-(PropertyValue,_)`` would, one per property): a batch
    /// insert's record, made without a ``ChangeSet``. `version` 2 writes the inserts in parts.
    static func encodeInserts(
        _ ids: [ObjectID], version: UInt8 = 1, into writer: inout ByteWriter, updates: [ChangeSet.Update] = [],
        values writeValues: (Int, inout ByteWriter) throws -> Void
    ) rethrows {
        func write(_ range: Range<Int>, _ writer: inout ByteWriter) throws {
            for index in range {
                ValueEncoding.writeID(ids[index], &writer)
                try writeValues(index, &writer)
            }
        }
        if version >= 2 {
            let ranges = partRanges(inserts: ids.count)
            let table = writePartTableHead(inserts: ids.count, parts: ranges.count, into: &writer)
            for (number, range) in ranges.enumerated() {
                let start = writer.count
                try write(range, &writer)
                fillPartEntry(number, table: table, inserts: range.count, length: writer.count - start, in: &writer)
            }
        } else {
            writer.writeVarint(UInt64(ids.count))
            try write(0..<ids.count, &writer)
        }
        writeUpdates(updates, &writer)
        writer.writeVarint(0)  // no deletes
    }

    private static func writeUpdates(_ updates: [ChangeSet.Update], _ writer: inout ByteWriter) {
        writer.writeVarint(UInt64(updates.count))
        for update in updates {
            ValueEncoding.writeID(update.id, &writer)
            writer.writeVarint(UInt64(update.changes.count))
            for change in update.changes {
                writer.writeVarint(UInt64(change.position))
                ValueEncoding.write(change.value, &writer)
            }
        }
    }

    // MARK: Rows, for replay

    /// Reads a change record's body of `version` into rows: every value is checked against the
    /// model (kind, type, integer range, relationship destination) but strings are not decoded,
    /// so replay allocates one row per object and little else. A version-2 record's parts are
    /// read one after the other into one set (replay reads them apart: ``ChangeRecordParts``).
    static func decodeRows(_ reader: inout ByteReader, model: Model, version: UInt8 = 1) throws -> RowChangeSet {
        var changes = RowChangeSet()
        if version >= 2 {
            let table = try readPartTable(&reader)
            changes.inserts.reserveCapacity(table.insertCount)
            changes.insertedRows = RowStorage.make(capacity: table.end - table.start)
            for number in table.parts.indices { try decodePart(number, of: table, in: reader.buffer, model: model, into: &changes) }
            try reader.skip(table.end - reader.offset)
        } else {
            let insertCount = try reader.readCount(limit: reader.remaining / 2)  // an insert takes two bytes at least
            changes.inserts.reserveCapacity(insertCount)
            // One buffer for every inserted row of the record (they are copied into the object
            // table's chunks when applied), rather than an allocation per row.
            changes.insertedRows = RowStorage.make(capacity: insertCount > 0 ? reader.remaining : 0)
            try decodeInserts(&reader, count: insertCount, model: model, into: &changes)
        }
        try decodeUpdatesAndDeletes(&reader, model: model, into: &changes)
        return changes
    }

    /// Reads `count` inserts into `changes`, whose ``RowChangeSet/insertedRows`` has room for
    /// every byte the reader may still read.
    static func decodeInserts(_ reader: inout ByteReader, count insertCount: Int, model: Model, into changes: inout RowChangeSet) throws {
        for _ in 0..<insertCount {
            let id = try ValueEncoding.readID(&reader, model: model)
            let entity = model.descriptions[id.entity]
            guard !entity.isAbstract else { throw EncodingProblem(message: "insert of abstract entity \(entity.name)") }
            let start = reader.offset
            try entity.storedKinds.withUnsafeBufferPointer { try skipRow(&reader, model: model, entity: id.entity, kinds: $0) }
            // The buffer holds what remained of the record: every row fits.
            let bytes = reader.bytes(from: start)
            guard let at = changes.insertedRows.append(bytes) else { throw EncodingProblem(message: "insert of \(id) does not fit its record") }
            changes.inserts.append(.init(id: id, start: at, length: bytes.count, count: entity.propertyCount))
        }
    }

    /// Reads the updates and deletes that end a change record into `changes`.
    static func decodeUpdatesAndDeletes(_ reader: inout ByteReader, model: Model, into changes: inout RowChangeSet) throws {
        let updateCount = try reader.readCount(limit: reader.remaining)
        // As inserted rows: every new value in one buffer, every changed position in one array.
        changes.updatedValues = RowStorage.make(capacity: updateCount > 0 ? reader.remaining : 0)
        changes.updates.reserveCapacity(min(updateCount, reader.remaining / 3))  // an update takes three bytes at least
        for _ in 0..<updateCount {
            let id = try ValueEncoding.readID(&reader, model: model)
            let entity = model.descriptions[id.entity]
            let count = try reader.readCount(limit: entity.propertyCount)
            let firstPosition = changes.updatedPositions.count, firstByte = changes.updatedValues.used
            for index in 0..<count {
                let position = try reader.readCount(limit: entity.propertyCount - 1)
                guard index == 0 || changes.updatedPositions[changes.updatedPositions.count - 1] < position else {
                    throw EncodingProblem(message: "update of \(id) lists positions out of order")
                }
                let valueStart = reader.offset
                try ValueEncoding.skipChecked(&reader, model: model, entity: entity, position: position)
                changes.updatedPositions.append(position)
                // The buffer holds what remained of the record: every value fits.
                guard changes.updatedValues.append(reader.bytes(from: valueStart)) != nil else {
                    throw EncodingProblem(message: "update of \(id) does not fit its record")
                }
            }
            changes.updates.append(
                .init(id: id, positions: firstPosition..<changes.updatedPositions.count, values: firstByte..<changes.updatedValues.used))
        }
        let deleteCount = try reader.readCount(limit: reader.remaining)
        for _ in 0..<deleteCount { changes.deletes.append(try ValueEncoding.readID(&reader, model: model)) }
    }

    /// Checks one row of the values of entity number `entity` against the model and moves past
    /// it; with `starts`, also writes where each value starts and the row's length there (a
    /// ``ValueStarts`` entry, one or two bytes each as `wide` says). `kinds` are the entity's
    /// ``EntityDescription/storedKinds``, borrowed by a caller that checks many rows: read from
    /// the description for each row, the array (and the description) were retained and
    /// released each time, as much work as checking a short row.
    static func skipRow(
        _ reader: inout ByteReader, model: Model, entity: Int, kinds: UnsafeBufferPointer<StoredKind>,
        recordingStarts starts: UnsafeMutableRawPointer? = nil, wide: Bool = false
    ) throws {
        let rowStart = reader.offset
        for position in kinds.indices {
            if let starts { ValueStarts.store(reader.offset - rowStart, at: position, in: starts, wide: wide) }
            // The common values are checked here; the rest (and every error) by `skipValue`.
            let size = ValueEncoding.quickSize(reader.buffer, at: reader.offset, kinds[position])
            if size > 0 {
                try reader.skip(size)
            } else {
                try ValueEncoding.skipChecked(&reader, model: model, entity: model.descriptions[entity], position: position)
            }
        }
        if let starts { ValueStarts.store(reader.offset - rowStart, at: kinds.count, in: starts, wide: wide) }
    }
}

/// A change record read for applying to a snapshot: rows instead of decoded values.
struct RowChangeSet: @unchecked Sendable {
    // Safety: `insertedRows` and `updatedValues` are written while the record is decoded, before the set exists, and
    // only read afterwards.

    /// An inserted object: its row is a range of ``insertedRows`` (no reference of its own, so
    /// that handing a record from the decoding thread to the applying one costs no reference
    /// counting per object).
    struct Insert: Sendable {
        var id: ObjectID
        var start: Int
        var length: Int
        /// The number of values.
        var count: Int
    }

    /// The bytes of every inserted row, one after the other.
    var insertedRows = RowStorage.make(capacity: 0)

    /// An updated object: its changed positions are a run of ``updatedPositions`` (increasing),
    /// and their new values a range of ``updatedValues``, in the same order.
    struct Update: Sendable {
        var id: ObjectID
        var positions: Range<Int>
        var values: Range<Int>
    }

    /// The new values of every update, one after the other.
    var updatedValues = RowStorage.make(capacity: 0)
    /// The changed positions of every update, one run after the other.
    var updatedPositions: [Int] = []

    var inserts: [Insert] = []
    var updates: [Update] = []
    var deletes: [ObjectID] = []

    /// The uniqueness keys of the inserted rows, when worked out ahead on the decoding thread
    /// (``ChangeRecordParts/part(_:)``, so that the applying thread, replay's busier one, does
    /// less); nil: the applying thread works them out.
    var insertKeys: [UniqueIndex.Key]?
    /// The value-start tables of the chunks whose every slot a run of these inserts fills, in
    /// slot order (``ChangeRecordParts/part(_:)``), by chunk number: a chunk filled by that run
    /// takes its table instead of walking its rows again.
    var filledChunkStarts: [UInt64: ValueStarts] = [:]

    /// An inserted object's row (holding the record's buffer).
    func row(_ insert: Insert) -> Row {
        Row.view(insertedRows, start: insert.start, length: insert.length, count: insert.count)
    }

    /// Calls `body` with an update's changed positions and their new values' bytes.
    func withPatch<R>(_ update: Update, _ body: (ArraySlice<Int>, UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try updatedValues.withBytes { all in try body(updatedPositions[update.positions], UnsafeRawBufferPointer(rebasing: all[update.values])) }
    }

    /// Calls `body` with an inserted object's row, borrowed.
    func withRow<R>(_ insert: Insert, _ body: (BorrowedRow) throws -> R) rethrows -> R {
        try insertedRows.withBytes { all in
            let bytes = RowBytes(bytes: UnsafeRawBufferPointer(rebasing: all[insert.start..<(insert.start + insert.length)]), count: insert.count)
            return try body(BorrowedRow(bytes: bytes, storage: insertedRows, start: insert.start))
        }
    }
}
