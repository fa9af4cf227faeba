extension RowChangeSet {
    /// The value-start tables of the chunks that a run of the inserts fills whole: a run of
    /// ``Tuning/objectChunkSize`` consecutive inserts whose keys are the slots of one chunk in
    /// order (as a large save's inserts are), by chunk number. Each is the table
    /// ``ObjectChunk/scanStarts()`` makes once the chunk holds those rows (a long row, kept out
    /// of the chunk's buffer, has no entries there either). A chunk that more than one run
    /// falls in (a damaged record's repeated keys) gets none.
    func valueStartsOfFilledChunks() -> [UInt64: ValueStarts] {
        let size = Tuning.objectChunkSize
        let mask = UInt64(size - 1)
        var tables: [UInt64: ValueStarts] = [:]
        var seen: Set<UInt64> = []
        insertedRows.withBytes { all in
            var start = 0
            while start < inserts.count {
                let number = inserts[start].id.key >> Tuning.objectChunkShift
                var end = start + 1
                while end < inserts.count, inserts[end].id.key >> Tuning.objectChunkShift == number { end += 1 }
                defer { start = end }
                guard seen.insert(number).inserted else {
                    tables[number] = nil
                    continue
                }
                guard end - start == size, (start..<end).allSatisfy({ Int(inserts[$0].id.key & mask) == $0 - start }) else { continue }
                tables[number] = ValueStarts(slots: size) { slot -> (UnsafeRawBufferPointer, Int)? in
                    let insert = inserts[start + slot]
                    let end = insert.start + insert.length
                    guard ObjectChunk.fitsBuffer(length: insert.length, entity: insert.id.entity, count: insert.count), end <= all.count else {
                        return nil
                    }
                    return (UnsafeRawBufferPointer(rebasing: all[insert.start..<end]), insert.count)
                }
            }
        }
        return tables
    }
}
