import CairnLog
import CairnSupport
import Foundation

/// Change record version 2: the inserts in parts, each part's insert count and byte length in a
/// table before them (docs/FORMAT.md, "Change records", "Version 2"), so that replay decodes the
/// parts of one large save one after another on the opening thread while the builder applies
/// the ones before, as it does for many small saves (``ChangeRecordParts``).
extension ChangeSetCodec {
    /// The body layout for a save of `inserts` new objects: 2 (in parts) from two parts' worth
    /// (``Tuning/recordPartInserts``) on, 1 (whole) below; written in a version-3 record, whose
    /// header's flag says which.
    static func recordVersion(inserts: Int) -> UInt8 {
        inserts >= 2 * Tuning.recordPartInserts ? 2 : 1
    }

    /// The inserts of each part: `inserts / recordPartInserts` parts (at least one), their sizes
    /// differing by one at most.
    static func partRanges(inserts: Int) -> [Range<Int>] {
        let parts = max(1, inserts / Tuning.recordPartInserts)
        let size = inserts / parts, longer = inserts % parts
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(parts)
        var start = 0
        for number in 0..<parts {
            let end = start + size + (number < longer ? 1 : 0)
            ranges.append(start..<end)
            start = end
        }
        return ranges
    }

    /// Writes the insert count, the part count and a table of zeros that ``fillPartEntry(_:table:inserts:length:in:)``
    /// fills once each part is written; returns where the table starts.
    static func writePartTableHead(inserts: Int, parts: Int, into writer: inout ByteWriter) -> Int {
        writer.writeVarint(UInt64(inserts))
        writer.writeVarint(UInt64(parts))
        let table = writer.count
        writer.writeZeros(8 * parts)
        return table
    }

    /// Fills part `number`'s entry of the table at `table`: its insert count and byte length, each
    /// a `u32`. A part longer than 2^32 - 1 bytes (4,096 objects of over 1 MiB each) is written
    /// clamped, so that its record does not read back: the commit, which reads every record back
    /// before it submits it, refuses that save, and nothing reaches the log.
    static func fillPartEntry(_ number: Int, table: Int, inserts: Int, length: Int, in writer: inout ByteWriter) {
        writer.patch(UInt32(clamping: inserts), at: table + 8 * number)
        writer.patch(UInt32(clamping: length), at: table + 8 * number + 4)
    }

    /// Writes a change set's inserts as version 2's parts, the second half of the parts on
    /// another core meanwhile when there are many (as version 1 splits its inserts).
    static func encodeParts(_ inserts: [ChangeSet.Insert], into writer: inout ByteWriter) {
        let ranges = partRanges(inserts: inserts.count)
        let table = writePartTableHead(inserts: inserts.count, parts: ranges.count, into: &writer)
        let half = inserts.count >= concurrentInserts ? ranges.count / 2 : ranges.count
        let later = Array(ranges[half...])
        let second = ConcurrentResult { () throws(Never) -> ([UInt8], [Int]) in
            var part = ByteWriter(capacity: inserts[(later.first?.lowerBound ?? 0)...].reduce(0) { $0 + 12 + 12 * $1.values.count })
            var lengths: [Int] = []
            for range in later {
                let start = part.count
                encodeInserts(inserts[range], into: &part)
                lengths.append(part.count - start)
            }
            return (part.bytes, lengths)
        }
        for number in 0..<half {
            let start = writer.count
            encodeInserts(inserts[ranges[number]], into: &writer)
            fillPartEntry(number, table: table, inserts: ranges[number].count, length: writer.count - start, in: &writer)
        }
        let (bytes, lengths) = second.value()
        writer.write(bytes: bytes)
        for (offset, length) in lengths.enumerated() {
            fillPartEntry(half + offset, table: table, inserts: later[offset].count, length: length, in: &writer)
        }
    }

    /// A version-2 record's part table, checked: the parts lie one after another from the end of
    /// the table, inside the record, each holding at least one insert and two bytes an insert,
    /// and their insert counts add up to the record's.
    struct PartTable: Sendable {
        /// One part: bytes `start ..< end` of the record hold its `count` inserts exactly.
        struct Part: Sendable {
            var start: Int
            var end: Int
            var count: Int
        }

        var insertCount: Int
        var parts: [Part]
        /// Where the first part starts (the end of the table).
        var start: Int
        /// Where the last part ends (the updates start).
        var end: Int
    }

    /// Reads the insert count and the part table, and leaves the reader at the first part.
    ///
    /// - Throws: ``EncodingProblem`` naming the part and its bytes for a table that does not
    ///   hold (a part past the record's end, without inserts, with more inserts than bytes, or
    ///   counts that do not add up); ``CairnSupport/ByteReader/Overrun`` for a truncated table.
    static func readPartTable(_ reader: inout ByteReader) throws -> PartTable {
        let insertCount = try reader.readCount(limit: reader.remaining / 2)  // an insert takes two bytes at least
        let partCount = try reader.readCount(limit: reader.remaining / 8)  // an entry takes eight bytes
        guard partCount > 0 else { throw EncodingProblem(message: "a change record in parts has no part") }
        let first = reader.offset + 8 * partCount
        var parts: [PartTable.Part] = []
        parts.reserveCapacity(partCount)
        var start = first, total = 0
        for number in 0..<partCount {
            let entry = reader.offset
            let count = Int(try reader.read(UInt32.self)), length = Int(try reader.read(UInt32.self))
            func refused(_ why: String) -> EncodingProblem {
                EncodingProblem(
                    message: "part \(number + 1) of \(partCount) (table entry at byte \(entry): \(count) inserts in bytes \(start)..<\(start + length)) \(why)")
            }
            guard length <= reader.buffer.count - start else { throw refused("ends past the record's \(reader.buffer.count) bytes") }
            guard count > 0 else { throw refused("holds no insert") }
            guard count <= length / 2 else { throw refused("has more inserts than its bytes can hold") }
            guard count <= insertCount - total else { throw refused("takes the parts past the record's \(insertCount) inserts") }
            parts.append(PartTable.Part(start: start, end: start + length, count: count))
            start += length
            total += count
        }
        guard total == insertCount else { throw EncodingProblem(message: "the parts hold \(total) inserts, the record \(insertCount)") }
        return PartTable(insertCount: insertCount, parts: parts, start: first, end: start)
    }

    /// Reads part `number` of `table` (in `record`, the record's bytes) into `changes`, whose
    /// ``RowChangeSet/insertedRows`` has room for the part's bytes.
    ///
    /// - Throws: ``EncodingProblem`` naming the part when its inserts do not fill its bytes
    ///   exactly, or a value fails its check.
    static func decodePart(_ number: Int, of table: PartTable, in record: UnsafeRawBufferPointer, model: Model, into changes: inout RowChangeSet) throws {
        let part = table.parts[number]
        let name = "part \(number + 1) of \(table.parts.count) (bytes \(part.start)..<\(part.end))"
        // The reader ends where the part does: an insert cannot run into the next one.
        var reader = ByteReader(UnsafeRawBufferPointer(rebasing: record[..<part.end]), offset: part.start)
        do {
            try decodeInserts(&reader, count: part.count, model: model, into: &changes)
        } catch let overrun as ByteReader.Overrun {
            throw EncodingProblem(message: "\(name): its \(part.count) inserts run past its end (truncated at byte \(overrun.offset))")
        } catch let problem as EncodingProblem {
            throw EncodingProblem(message: "\(name): \(problem.message)")
        }
        guard reader.isAtEnd else { throw EncodingProblem(message: "\(name): \(reader.remaining) bytes after its \(part.count) inserts") }
    }
}

/// A version-2 change record as replay reads it: its table checked, each part decoded apart
/// (``part(_:)``, on any thread) into rows applied in order, then the updates and deletes
/// (``tail()``). Applied in that order at the record's LSN, the sets make the same snapshot as
/// the record decoded whole (``ChangeSetCodec/decodeRows(_:model:version:)``).
struct ChangeRecordParts: Sendable {
    let bytes: [UInt8]
    let lsn: LSN
    let model: Model
    let table: ChangeSetCodec.PartTable

    /// Reads the part table of the change record `bytes` (kind and version included) whose body,
    /// in parts, starts at byte `body`.
    init(_ bytes: [UInt8], lsn: LSN, model: Model, body: Int) throws {
        self.bytes = bytes
        self.lsn = lsn
        self.model = model
        table = try StoreRecord.reading(bytes, lsn: lsn, from: body) { reader in try ChangeSetCodec.readPartTable(&reader) }
    }

    /// The number of parts.
    var count: Int { table.parts.count }

    /// Part `number`'s inserts, as rows.
    func part(_ number: Int) throws -> RowChangeSet {
        try StoreRecord.reading(bytes, lsn: lsn) { reader in
            var changes = RowChangeSet()
            let part = table.parts[number]
            changes.inserts.reserveCapacity(part.count)
            changes.insertedRows = RowStorage.make(capacity: part.end - part.start)
            try ChangeSetCodec.decodePart(number, of: table, in: reader.buffer, model: model, into: &changes)
            // Work the applying thread would do, done here on the decoding one (less busy in
            // replay): the inserts' uniqueness keys, and the value starts of the chunks filled.
            changes.insertKeys = StoreSnapshot.insertKeys(of: changes, model: model)
            changes.filledChunkStarts = changes.valueStartsOfFilledChunks()
            return changes
        }
    }

    /// The record's updates and deletes (checked to end the record), as rows.
    func tail() throws -> RowChangeSet {
        try StoreRecord.reading(bytes, lsn: lsn) { reader in
            try reader.skip(table.end - reader.offset)
            var changes = RowChangeSet()
            try ChangeSetCodec.decodeUpdatesAndDeletes(&reader, model: model, into: &changes)
            guard reader.isAtEnd else { throw EncodingProblem(message: "\(reader.remaining) bytes after the last change") }
            return changes
        }
    }

    /// Decodes each part, then the tail, handing each set to `apply` in order (skipping an
    /// empty tail).
    func forEachSet(_ apply: (RowChangeSet) throws -> Void) throws {
        for number in 0..<count { try apply(try part(number)) }
        let rest = try tail()
        if !rest.updates.isEmpty || !rest.deletes.isEmpty { try apply(rest) }
    }
}
