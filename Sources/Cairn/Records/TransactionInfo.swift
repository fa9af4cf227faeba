import CairnLog
import CairnSupport
import Foundation

/// What a change record says of its save besides the changes: when it was made, by whom, from
/// which context (Core Data's `transactionAuthor` and context name). Written in every change
/// record from record version 3 on (docs/FORMAT.md, "Version 3: the transaction header"); a
/// record of version 1 or 2 has none.
package struct TransactionInfo: Sendable, Equatable {
    /// Microseconds since 1970-01-01 00:00 UTC, as the saving process's clock read them.
    package var microseconds: Int64
    /// The author the saving context named (``ObjectContext/transactionAuthor``); nil: none.
    package var author: String?
    /// The saving context's name; nil for a save made without a context (a batch insert or
    /// upsert).
    package var contextName: String?
    /// What the objects the save deletes held in their uniqueness constraints' attributes, by
    /// object (what history tells of a deleted object: Core Data's tombstones). Read only with a
    /// model; empty otherwise.
    package var tombstones: [ObjectID: [Int: Value]]

    package init(microseconds: Int64, author: String?, contextName: String?, tombstones: [ObjectID: [Int: Value]] = [:]) {
        self.microseconds = microseconds
        self.author = author
        self.contextName = contextName
        self.tombstones = tombstones
    }

    /// The tombstones of the objects `deleted` as `snapshot` holds them: for each of an entity
    /// with uniqueness constraints, its constrained attributes' values.
    static func tombstones(of deleted: [ObjectID], in snapshot: StoreSnapshot, model: Model) -> [ObjectID: [Int: Value]] {
        var tombstones: [ObjectID: [Int: Value]] = [:]
        for id in deleted where model.descriptions.indices.contains(id.entity) {
            let positions = model.descriptions[id.entity].uniquePositions
            guard !positions.isEmpty, let row = snapshot.record(id)?.row else { continue }
            var values: [Int: Value] = [:]
            for position in positions where position < row.count {
                if case .attribute(let value) = row.value(position) { values[position] = value }
            }
            tombstones[id] = values
        }
        return tombstones
    }

    /// A save made now by `author` from the context named `contextName`.
    package static func now(author: String? = nil, contextName: String? = nil, tombstones: [ObjectID: [Int: Value]] = [:]) -> TransactionInfo {
        let microseconds = (Date().timeIntervalSince1970 * 1_000_000).rounded()
        // (A clock beyond ±292,000 years from 1970 reads as 1970, not as a trap.)
        let stored = microseconds.isFinite && abs(microseconds) < 9.2e18 ? Int64(microseconds) : 0
        // (An empty name is stored as none: the record cannot tell them apart.)
        return TransactionInfo(
            microseconds: stored, author: author.flatMap { $0.isEmpty ? nil : $0 }, contextName: contextName.flatMap { $0.isEmpty ? nil : $0 },
            tombstones: tombstones)
    }

    /// The time the save was made.
    package var date: Date { Date(timeIntervalSince1970: Double(microseconds) / 1_000_000) }

    /// The header's flag that says the inserts are in parts (version 2's layout); the other bits
    /// are reserved, written as zero and refused when set.
    static let insertsInParts: UInt8 = 1

    /// Writes the header: flags (u8), microseconds (zigzag varint), author and context name
    /// (each a varint byte count and UTF-8; 0 bytes: none), then the tombstones (a varint byte
    /// count, then that many bytes: their count, and each one's object ID, value count and
    /// values by position, positions increasing; 0 bytes: none).
    func write(inParts: Bool, into writer: inout ByteWriter) {
        writer.write(inParts ? Self.insertsInParts : 0)
        writer.writeSignedVarint(microseconds)
        writer.writeLengthPrefixed(utf8: author ?? "")
        writer.writeLengthPrefixed(utf8: contextName ?? "")
        guard !tombstones.isEmpty else { return writer.writeVarint(0) }
        var section = ByteWriter(capacity: 16 * tombstones.count)
        section.writeVarint(UInt64(tombstones.count))
        for (id, values) in tombstones.sorted(by: { $0.key < $1.key }) {
            ValueEncoding.writeID(id, &section)
            section.writeVarint(UInt64(values.count))
            for (position, value) in values.sorted(by: { $0.key < $1.key }) {
                section.writeVarint(UInt64(position))
                ValueEncoding.write(value, &section)
            }
        }
        writer.writeLengthPrefixed(section.bytes)
    }

    /// Reads a header, leaving `reader` at the record's body; returns it and whether the inserts
    /// are in parts.
    ///
    /// - Throws: ``EncodingProblem`` for a reserved flag, or a name that is not UTF-8;
    ///   ``CairnSupport/ByteReader/Overrun`` for a truncated header.
    static func read(_ reader: inout ByteReader, model: Model? = nil) throws -> (info: TransactionInfo, inParts: Bool) {
        let flags = try reader.read(UInt8.self)
        guard flags & ~insertsInParts == 0 else {
            throw EncodingProblem(message: "the transaction header's flags \(flags) set a reserved bit (a newer version of Cairn may write them)")
        }
        let microseconds = try reader.readSignedVarint()
        func text(_ what: String) throws -> String? {
            let start = reader.offset
            let bytes = try reader.readLengthPrefixed()
            guard !bytes.isEmpty else { return nil }
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw EncodingProblem(message: "the transaction header's \(what) at byte \(start) is not UTF-8")
            }
            return text
        }
        let author = try text("author")
        let contextName = try text("context name")
        let section = try reader.readLengthPrefixed()
        // (Offsets in messages count from the record's first byte.)
        let start = reader.offset - section.count
        var tombstones: [ObjectID: [Int: Value]] = [:]
        if let model, !section.isEmpty {
            do {
                tombstones = try Self.readTombstones(section, model: model, at: start)
            } catch let overrun as ByteReader.Overrun {
                throw EncodingProblem(
                    message: "the tombstones at byte \(start) run past their \(section.count) bytes (at byte \(start + overrun.offset))")
            }
        }
        let info = TransactionInfo(microseconds: microseconds, author: author, contextName: contextName, tombstones: tombstones)
        return (info, flags & insertsInParts != 0)
    }

    /// Reads and checks a tombstone section against `model` (its first byte at byte `start` of
    /// the record): each object's entity in the model, concrete and constrained, its key in the
    /// keys' range, once; each position one of its constrained attributes, increasing; each value
    /// of its attribute's kind; nothing left over.
    private static func readTombstones(_ bytes: UnsafeRawBufferPointer, model: Model, at start: Int) throws -> [ObjectID: [Int: Value]] {
        var reader = ByteReader(bytes, offset: 0)
        func refused(_ message: String, at offset: Int) -> EncodingProblem {
            EncodingProblem(message: "the tombstone at byte \(start + offset): \(message)")
        }
        var tombstones: [ObjectID: [Int: Value]] = [:]
        let count = try reader.readCount(limit: reader.remaining / 3)  // an ID, a count: three bytes at least
        for _ in 0..<count {
            let at = reader.offset
            let id: ObjectID
            do {
                id = try ValueEncoding.readID(&reader, model: model)
            } catch let problem as EncodingProblem {
                throw refused(problem.message, at: at)
            }
            let entity = model.descriptions[id.entity]
            guard id.key > 0 && id.key < ObjectID.keyLimit else { throw refused("object key \(id.key) is out of range", at: at) }
            guard !entity.entity.isAbstract else { throw refused("\(entity.name) is abstract: no object is one", at: at) }
            guard !entity.uniquePositions.isEmpty else { throw refused("\(entity.name) has no uniqueness constraint", at: at) }
            guard tombstones[id] == nil else { throw refused("object \(id) has two tombstones", at: at) }
            let values = try reader.readCount(limit: reader.remaining / 2)
            var read: [Int: Value] = [:]
            var last = -1
            for _ in 0..<values {
                let positionAt = reader.offset
                let position = try reader.readVarint()
                guard position < UInt64(entity.attributes.count), entity.uniquePositions.contains(Int(position)) else {
                    throw refused("\(entity.name)'s tombstone names position \(position), not a constrained attribute", at: positionAt)
                }
                guard Int(position) > last else {
                    throw refused("\(entity.name)'s tombstone names position \(position) after \(last): out of order", at: positionAt)
                }
                last = Int(position)
                do {
                    read[last] = try ValueEncoding.readCheckedAttribute(&reader, model: model, entity: entity, position: last)
                } catch let problem as EncodingProblem {
                    throw refused(problem.message, at: positionAt)
                }
            }
            tombstones[id] = read
        }
        guard reader.isAtEnd else { throw refused("\(reader.remaining) bytes after the last tombstone", at: reader.offset) }
        return tombstones
    }
}
