import CairnSupport

extension ObjectTable {
    /// Brings the rows of `ids` into the cache ahead of a batch lookup's reads of them, one
    /// stage at a time over all of them: each object's chunk, then its slot, then the start of
    /// its row. A row's reads depend on one another (chunk, slot, row); those of different
    /// objects do not, so each stage's cache misses overlap. Reads only: an ID with no object
    /// is passed over.
    func touchRows(_ ids: [ObjectID]) {
        var touched: UInt64 = 0
        let found = ids.map { id -> ObjectChunk? in
            let chunk = chunks[Self.place(id.key).chunk]
            touched &+= UInt64(truncatingIfNeeded: chunk?.live ?? 0)
            return chunk
        }
        for (id, chunk) in zip(ids, found) {
            guard let chunk else { continue }
            touched &+= UInt64(chunk.entries[Self.place(id.key).slot]?.start ?? 0)
        }
        for (id, chunk) in zip(ids, found) {
            guard let chunk, let entry = chunk.entries[Self.place(id.key).slot], let (buffer, start) = chunk.storage(entry.place) else { continue }
            touched &+= buffer.withBytes { bytes in start < bytes.count ? UInt64(bytes[start]) : 0 }
        }
        MemoryTouch.keep(touched)
    }
}
