import CairnLog
import CairnSupport
import Foundation

/// The binary form of a ``ChangeSet`` (docs/FORMAT.md, "Change records").
///
/// All integers are LEB128 varints unless said otherwise; a value is a tag byte and its bytes.
/// Decoding checks every entity index, property position and value kind against the model, so
/// a damaged or foreign record is refused with the LSN rather than applied.
enum ChangeSetCodec {
    struct Problem: Error {
        var message: String
    }

    /// The value tags (the one table of the value encoding).
    typealias Tag = ValueTag

    static func encode(_ changes: ChangeSet, into writer: inout ByteWriter) {
        // Room for a typical record at once (a save of 10,000 objects is a megabyte or so),
        // rather than a dozen reallocations that copy everything written so far.
        writer.reserve(16 + changes.inserts.reduce(0) { $0 + 12 + 12 * $1.values.count } + changes.updates.count * 32 + changes.deletes.count * 8)
        writer.writeVarint(UInt64(changes.inserts.count))
        if changes.inserts.count >= concurrentInserts {
            // The second half is encoded on another core meanwhile, then appended.
            let half = changes.inserts.count / 2
            let later = changes.inserts[half...]
            let second = ConcurrentResult { () throws(Never) -> [UInt8] in
                var part = ByteWriter(capacity: later.reduce(0) { $0 + 12 + 12 * $1.values.count })
                encodeInserts(later, into: &part)
                return part.bytes
            }
            encodeInserts(changes.inserts[..<half], into: &writer)
            writer.write(bytes: second.value())
        } else {
            encodeInserts(changes.inserts[...], into: &writer)
        }
        writeUpdates(changes.updates, &writer)
        writer.writeVarint(UInt64(changes.deletes.count))
        for id in changes.deletes { write(id, &writer) }
    }

    /// Change sets with at least this many inserts encode them on two cores.
    static let concurrentInserts = 4096

    private static func encodeInserts(_ inserts: ArraySlice<ChangeSet.Insert>, into writer: inout ByteWriter) {
        for insert in inserts {
            write(insert.id, &writer)
            for value in insert.values { write(value, &writer) }
        }
    }

    /// Encodes a change set of new objects alone, `writeValues` writing the values of the object
    /// at each index (as ``write(_:_:)-(PropertyValue,_)`` would, one per property): a batch
    /// insert's record, made without a ``ChangeSet``.
    static func encodeInserts(
        _ ids: [ObjectID], into writer: inout ByteWriter, updates: [ChangeSet.Update] = [],
        values writeValues: (Int, inout ByteWriter) throws -> Void
    ) rethrows {
        writer.writeVarint(UInt64(ids.count))
        for (index, id) in ids.enumerated() {
            write(id, &writer)
            try writeValues(index, &writer)
        }
        writeUpdates(updates, &writer)
        writer.writeVarint(0)  // no deletes
    }

    private static func writeUpdates(_ updates: [ChangeSet.Update], _ writer: inout ByteWriter) {
        writer.writeVarint(UInt64(updates.count))
        for update in updates {
            write(update.id, &writer)
            writer.writeVarint(UInt64(update.changes.count))
            for change in update.changes {
                writer.writeVarint(UInt64(change.position))
                write(change.value, &writer)
            }
        }
    }

    private static func write(_ id: ObjectID, _ writer: inout ByteWriter) {
        writer.writeVarint(UInt64(id.entity))
        writer.writeVarint(id.key)
    }

    private static func readID(_ reader: inout ByteReader, model: Model) throws -> ObjectID {
        let entity = try reader.readVarint()
        guard entity < UInt64(model.descriptions.count) else { throw Problem(message: "entity index \(entity) is not in the model") }
        return ObjectID(entity: Int(entity), key: try reader.readVarint())
    }

    static func write(_ value: PropertyValue, _ writer: inout ByteWriter) {
        switch value {
        case .attribute(let attribute): write(attribute, &writer)
        case .toOne(nil): writer.writeByte(Tag.noObject.rawValue)
        case .toOne(let id?):
            writer.writeByte(Tag.object.rawValue)
            write(id, &writer)
        case .toMany(let ids):
            writer.writeByte(Tag.objects.rawValue)
            writer.writeVarint(UInt64(ids.count))
            for id in ids { write(id, &writer) }
        }
    }

    static func write(_ value: Value, _ writer: inout ByteWriter) {
        switch value {
        case .null: writer.writeByte(Tag.null.rawValue)
        case .string(let text):
            writer.writeByte(Tag.string.rawValue)
            writer.writeLengthPrefixed(utf8: text)
        case .integer(let number):
            writer.writeByte(Tag.integer.rawValue)
            writer.writeSignedVarint(number)
        case .double(let number):
            writer.writeByte(Tag.double.rawValue)
            writer.write(number.bitPattern)
        case .float(let number):
            writer.writeByte(Tag.float.rawValue)
            writer.write(number.bitPattern)
        case .decimal(let number):
            writer.writeByte(Tag.decimal.rawValue)
            writer.writeLengthPrefixed(Array(number.description.utf8))
        case .boolean(let flag): writer.writeByte((flag ? Tag.trueValue : Tag.falseValue).rawValue)
        case .date(let date):
            writer.writeByte(Tag.date.rawValue)
            writer.write(date.timeIntervalSinceReferenceDate.bitPattern)  // Date's own representation: exact
        case .binary(let bytes):
            writer.writeByte(Tag.binary.rawValue)
            writer.writeLengthPrefixed(bytes)
        case .uuid(let id):
            writer.writeByte(Tag.uuid.rawValue)
            writer.write(bytes: withUnsafeBytes(of: id.uuid) { Array($0) })
        case .uri(let text):
            writer.writeByte(Tag.uri.rawValue)
            writer.writeLengthPrefixed(utf8: text)
        }
    }

    static func readAttribute(_ tag: Tag, _ reader: inout ByteReader) throws -> Value {
        // Strings are decoded leniently (invalid UTF-8 becomes U+FFFD): the frame checksum
        // already vouches for the bytes, and this never fails on a forged record.
        func text() throws -> String { String(decoding: try reader.readLengthPrefixed(), as: UTF8.self) }
        switch tag {
        case .null: return .null
        case .string: return .string(try text())
        case .integer: return .integer(try reader.readSignedVarint())
        case .double: return .double(Double(bitPattern: try reader.read()))
        case .float: return .float(Float(bitPattern: try reader.read()))
        case .decimal:
            let description = try text()
            guard let number = Self.decimal(description) else { throw Problem(message: "invalid decimal \(description)") }
            return .decimal(number)
        case .falseValue: return .boolean(false)
        case .trueValue: return .boolean(true)
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try reader.read())))
        case .binary: return .binary(Array(try reader.readLengthPrefixed()))
        case .uuid:
            let bytes = try reader.readBytes(16)
            var uuid = UUID().uuid
            withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: bytes) }
            return .uuid(UUID(uuid: uuid))
        case .uri: return .uri(try text())
        case .noObject, .object, .objects: throw Problem(message: "a relationship value where an attribute value belongs")
        }
    }

    /// Decodes one stored value of a row (checked when the row was built); a value that does not
    /// decode reads as nil rather than trapping.
    static func decodeStored(_ bytes: UnsafeRawBufferPointer) -> PropertyValue {
        var reader = ByteReader(bytes)
        do {
            let tagByte = try reader.readByte()
            guard let tag = Tag(rawValue: tagByte) else { return .attribute(.null) }
            switch tag {
            case .noObject: return .toOne(nil)
            case .object: return .toOne(ObjectID(entity: Int(try reader.readVarint()), key: try reader.readVarint()))
            case .objects:
                let count = try reader.readCount(limit: reader.remaining)
                var ids: [ObjectID] = []
                ids.reserveCapacity(count)
                for _ in 0..<count { ids.append(ObjectID(entity: Int(try reader.readVarint()), key: try reader.readVarint())) }
                return .toMany(ids)
            default:
                return .attribute(try readAttribute(tag, &reader))
            }
        } catch {
            return .attribute(.null)
        }
    }

    /// The encoded bytes of one value.
    static func encoded(_ value: Value) -> [UInt8] {
        var writer = ByteWriter(capacity: 16)
        write(value, &writer)
        return writer.bytes
    }

    /// Calls `body` with a value's encoded bytes (as ``encoded(_:)``): a string shorter than 128
    /// bytes (the common key) is encoded on the stack, without an array.
    static func withEncoded<R>(_ value: Value, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        if case .string(var text) = value, text.utf8.count < 0x80 {
            text.makeContiguousUTF8()
            let count = text.utf8.count
            let result = text.utf8.withContiguousStorageIfAvailable { utf8 in
                withUnsafeTemporaryAllocation(byteCount: count + 2, alignment: 1) { buffer -> R in
                    buffer[0] = Tag.string.rawValue
                    buffer[1] = UInt8(count)  // a one-byte varint
                    if count > 0, let base = buffer.baseAddress, let source = utf8.baseAddress {
                        (base + 2).copyMemory(from: source, byteCount: count)
                    }
                    return body(UnsafeRawBufferPointer(buffer))
                }
            }
            if let result { return result }
        }
        return encoded(value).withUnsafeBytes(body)
    }

    // MARK: Rows, for replay

    /// Reads a change record's body into rows: every value is checked against the model (kind,
    /// type, integer range, relationship destination) but strings are not decoded, so replay
    /// allocates one row per object and little else.
    static func decodeRows(_ reader: inout ByteReader, model: Model) throws -> RowChangeSet {
        var changes = RowChangeSet()
        let insertCount = try reader.readCount(limit: reader.remaining / 2)  // an insert takes two bytes at least
        changes.inserts.reserveCapacity(insertCount)
        // One buffer for every inserted row of the record (they are copied into the object
        // table's chunks when applied), rather than an allocation per row.
        changes.insertedRows = RowStorage.make(capacity: insertCount > 0 ? reader.remaining : 0)
        for _ in 0..<insertCount {
            let id = try readID(&reader, model: model)
            let entity = model.descriptions[id.entity]
            guard !entity.isAbstract else { throw Problem(message: "insert of abstract entity \(entity.name)") }
            let start = reader.offset
            try entity.storedKinds.withUnsafeBufferPointer { try skipRow(&reader, model: model, entity: id.entity, kinds: $0) }
            // The buffer holds what remained of the record: every row fits.
            let bytes = reader.bytes(from: start)
            guard let at = changes.insertedRows.append(bytes) else { throw Problem(message: "insert of \(id) does not fit its record") }
            changes.inserts.append(.init(id: id, start: at, length: bytes.count, count: entity.propertyCount))
        }
        let updateCount = try reader.readCount(limit: reader.remaining)
        // As inserted rows: every new value in one buffer, every changed position in one array.
        changes.updatedValues = RowStorage.make(capacity: updateCount > 0 ? reader.remaining : 0)
        changes.updates.reserveCapacity(min(updateCount, reader.remaining / 3))  // an update takes three bytes at least
        for _ in 0..<updateCount {
            let id = try readID(&reader, model: model)
            let entity = model.descriptions[id.entity]
            let count = try reader.readCount(limit: entity.propertyCount)
            let firstPosition = changes.updatedPositions.count, firstByte = changes.updatedValues.used
            for index in 0..<count {
                let position = try reader.readCount(limit: entity.propertyCount - 1)
                guard index == 0 || changes.updatedPositions[changes.updatedPositions.count - 1] < position else {
                    throw Problem(message: "update of \(id) lists positions out of order")
                }
                let valueStart = reader.offset
                try skipValue(&reader, model: model, entity: entity, position: position)
                changes.updatedPositions.append(position)
                // The buffer holds what remained of the record: every value fits.
                guard changes.updatedValues.append(reader.bytes(from: valueStart)) != nil else {
                    throw Problem(message: "update of \(id) does not fit its record")
                }
            }
            changes.updates.append(
                .init(id: id, positions: firstPosition..<changes.updatedPositions.count, values: firstByte..<changes.updatedValues.used))
        }
        let deleteCount = try reader.readCount(limit: reader.remaining)
        for _ in 0..<deleteCount { changes.deletes.append(try readID(&reader, model: model)) }
        return changes
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
            let size = quickSize(reader.buffer, at: reader.offset, kinds[position])
            if size > 0 {
                try reader.skip(size)
            } else {
                try skipValue(&reader, model: model, entity: model.descriptions[entity], position: position)
            }
        }
        if let starts { ValueStarts.store(reader.offset - rowStart, at: kinds.count, in: starts, wide: wide) }
    }

    /// The size of the value at `offset` when it is a common one that is valid for `kind` (nil of
    /// an attribute, a short string, a double, date or boolean, an integer in range); 0 to leave
    /// it to ``skipValue(_:model:entity:position:)``, which checks everything and names errors.
    @inline(__always)
    private static func quickSize(_ bytes: UnsafeRawBufferPointer, at offset: Int, _ kind: StoredKind) -> Int {
        let available = bytes.count - offset
        guard available > 0, let base = bytes.baseAddress else { return 0 }
        let value = base + offset
        let size: Int
        switch (value.load(as: UInt8.self), kind) {
        case (Tag.null.rawValue, .relationship): return 0
        case (Tag.null.rawValue, _): size = 1
        case (Tag.string.rawValue, .string):
            guard available >= 2, case let length = value.load(fromByteOffset: 1, as: UInt8.self), length < 0x80 else { return 0 }
            size = 2 + Int(length)
        case (Tag.double.rawValue, .double), (Tag.date.rawValue, .date): size = 9
        case (Tag.falseValue.rawValue, .boolean), (Tag.trueValue.rawValue, .boolean): size = 1
        case (Tag.integer.rawValue, .integer(let range)):
            let (raw, length) = RowBytes.varint(value + 1, available: available - 1)
            // A varint of at most nine bytes (63 bits) that ends within the bytes.
            guard length < 10, length < available, value.load(fromByteOffset: length, as: UInt8.self) & 0x80 == 0 else { return 0 }
            guard range.contains(Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)) else { return 0 }
            size = 1 + length
        default: return 0
        }
        return size <= available ? size : 0
    }

    /// Checks one value and moves past it.
    private static func skipValue(_ reader: inout ByteReader, model: Model, entity: EntityDescription, position: Int) throws {
        let tagByte = try reader.readByte()
        guard let tag = Tag(rawValue: tagByte) else { throw Problem(message: "unknown value tag \(tagByte)") }
        func wrong() -> Problem {
            let name =
                position < entity.attributes.count
                ? entity.attributes[position].name : entity.relationships[position - entity.attributes.count].name
            return Problem(message: "\(entity.name).\(name) holds a value of the wrong kind (tag \(tagByte))")
        }
        switch (tag, entity.storedKinds[position]) {
        case (.null, .relationship): throw wrong()
        case (.null, _): return
        case (.string, .string), (.uri, .uri), (.binary, .binary):
            _ = try reader.readLengthPrefixed()
        case (.integer, .integer(let range)):
            guard range.contains(try reader.readSignedVarint()) else { throw wrong() }
        case (.double, .double), (.date, .date): try reader.skip(8)
        case (.float, .float): try reader.skip(4)
        case (.decimal, .decimal):
            guard case .decimal = try readAttribute(tag, &reader) else { throw wrong() }
        case (.falseValue, .boolean), (.trueValue, .boolean): return
        case (.uuid, .uuid): try reader.skip(16)
        case (.noObject, .relationship(toMany: false, _)): return
        case (.object, .relationship(toMany: false, let destination)):
            try checkTarget(&reader, model: model, destination: destination, entity: entity, position: position)
        case (.objects, .relationship(toMany: true, let destination)):
            let count = try reader.readCount(limit: reader.remaining)
            for _ in 0..<count { try checkTarget(&reader, model: model, destination: destination, entity: entity, position: position) }
        default:
            throw wrong()
        }
    }

    /// Reads an object ID and checks that it is of `destination` or a descendant.
    private static func checkTarget(_ reader: inout ByteReader, model: Model, destination: Int, entity: EntityDescription, position: Int) throws {
        let id = try readID(&reader, model: model)
        guard id.entity == destination || model.descriptions[destination].descendants.contains(id.entity) else {
            let name = entity.relationships[position - entity.attributes.count].name
            throw Problem(message: "\(entity.name).\(name) points to a \(model.descriptions[id.entity].name)")
        }
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

extension ChangeSetCodec {
    /// A decimal written as `Decimal.description` writes it: an optional `-`, digits, and
    /// optionally `.` and digits. Anything else is refused (`Decimal(string:)` alone reads the
    /// longest number at the start and ignores the rest: `12.x.3` would read as 12).
    static func decimal(_ text: String) -> Decimal? {
        var bytes = Substring(text).utf8[...]
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        let digits = { (part: Substring.UTF8View.SubSequence) in !part.isEmpty && part.allSatisfy { $0 >= 48 && $0 <= 57 } }
        let parts = bytes.split(separator: UInt8(ascii: "."), maxSplits: 1, omittingEmptySubsequences: false)
        guard (parts.count == 1 || parts.count == 2), parts.allSatisfy(digits) else { return nil }
        return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
    }
}
