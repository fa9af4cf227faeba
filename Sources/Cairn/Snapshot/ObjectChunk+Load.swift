import CairnLog
import CairnSupport

extension ObjectChunk {
    /// One object of a chunk as a base holds it: where its row's bytes are (in the decoded
    /// entry, borrowed while the chunk is made) and what the chunk keeps of it.
    struct LoadedRow {
        var slot: Int
        var entity: Int
        var count: Int
        var version: LSN
        var bytes: UnsafeRawBufferPointer
    }

    /// A chunk of a base's objects entry, its rows copied into one buffer sized for them all
    /// up front (a long row keeps a buffer of its own, as ``store(_:version:entity:slot:)``
    /// keeps one). Its rows are not checked yet: ``checkLoadedRows(model:)`` must pass before
    /// the chunk is read. `rows` are in slot order, each slot once, of entities of the model
    /// with its number of values (the base reader checked).
    static func loaded(_ rows: [LoadedRow]) -> ObjectChunk {
        let inBuffer = { (row: LoadedRow) in fitsBuffer(length: row.bytes.count, entity: row.entity, count: row.count) }
        let buffer = RowStorage.make(capacity: rows.reduce(0) { $0 + (inBuffer($1) ? $1.bytes.count : 0) })
        var entries = [Entry?](repeating: nil, count: Tuning.objectChunkSize)
        var large: [Int: Row] = [:]
        for row in rows {
            if inBuffer(row), let offset = buffer.append(row.bytes).flatMap({ UInt32(exactly: $0) }), offset < overflowStart {
                entries[row.slot] = Entry(
                    start: offset, length: UInt32(row.bytes.count), version: row.version, entity: UInt16(row.entity), count: UInt16(row.count))
            } else {
                large[row.slot] = Row.make(count: row.count, bytes: row.bytes)
                entries[row.slot] = largeEntry(length: row.bytes.count, version: row.version, entity: row.entity)
            }
        }
        return ObjectChunk(entries: entries, buffer: buffer, large: large, live: rows.count)
    }

    /// Checks every row of a chunk made by ``loaded(_:)`` against `model` (the values replay
    /// checks in change records) and, in the same walk, makes the table of value starts of a
    /// full chunk.
    ///
    /// - Throws: ``EncodingProblem`` naming the first row that does not fit its entity.
    func checkLoadedRows(model: Model) throws {
        let entries = entries
        // A full chunk gets its table of value starts now; one with free slots gets it when it
        // fills (``ObjectTable``), so that the rows added to it later have entries too.
        let starts =
            live < Tuning.objectChunkSize
            ? nil
            : ValueStarts(slots: Tuning.objectChunkSize) { slot in
                guard let entry = entries[slot], case .buffer = entry.place else { return nil }
                return (Int(entry.length), Int(entry.count))
            }
        // Every entity's kinds, borrowed once for the whole walk.
        let kindRanges = model.storedKindTable.ranges
        let table = starts.map { (table: $0, wide: $0.wide) }
        try model.storedKindTable.kinds.withUnsafeBufferPointer { allKinds in
            try forEachRow { slot, _, entity, row in
                // The table's room for a row is its count of values plus one: the walk writes
                // one entry per stored value plus one.
                guard entity < kindRanges.count, row.count == kindRanges[entity].count else {
                    throw EncodingProblem(message: "object \(slot) has \(row.count) values, not those of its entity")
                }
                var reader = ByteReader(row.bytes)
                do {
                    try ChangeSetCodec.skipRow(
                        &reader, model: model, entity: entity, kinds: UnsafeBufferPointer(rebasing: allKinds[kindRanges[entity]]),
                        recordingStarts: table?.table.writableEntries(slot), wide: table?.wide ?? false)
                } catch let problem as EncodingProblem {
                    throw EncodingProblem(message: "object \(slot): \(problem.message)")
                } catch let overrun as ByteReader.Overrun {
                    throw EncodingProblem(message: "object \(slot) is truncated at byte \(overrun.offset)")
                }
                guard reader.isAtEnd else {
                    throw EncodingProblem(message: "object \(slot) has \(reader.remaining) bytes after its values")
                }
            }
        }
        if let starts { setValueStarts(starts) }
    }
}
