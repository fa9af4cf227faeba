import Foundation

extension Log {
    /// Replaces the store by an empty one in one atomic step, while this log holds the writer
    /// lock, and closes the log (whose state describes the old store): a new, empty active
    /// segment is written and synced, then a new manifest (a new store ID, only that segment)
    /// replaces the old one by the manifest's rename. A crash before the rename leaves the old
    /// store whole; after it, the new empty store, whose next open removes the old files as
    /// left-overs. The log is closed even when the replacement fails.
    ///
    /// - Throws: ``LogError`` when the log is read-only or closed, or a write fails.
    package func replaceWithEmptyStoreAndClose() throws {
        guard options.isWritable else {
            try? closeNow()
            throw LogError(.readOnly, "the store was opened read-only", path: directory)
        }
        // No append may reach the old segment (or roll it into a manifest) from here on.
        appendState.withLock { $0.closed = true }
        do {
            try replaceManifest()
        } catch {
            try? closeNow()
            throw error
        }
        try closeNow()
    }

    private func replaceManifest() throws {
        try writer.withLock { slot in
            guard let state = slot else { throw LogError(.closed, "the log is closed", path: directory) }
            let names = (try? io.contentsOfDirectory(directory)) ?? []
            let highest = names.compactMap(StoreLayout.parse).filter { $0.kind == .segment }.map(\.number).max() ?? 0
            let number = max(highest, state.manifest.segments.map(\.number).max() ?? 0) + 1  // ≤ 10^12: names and manifests bound numbers
            guard number <= StoreLayout.largestNumber else {
                throw LogError(.readOnly, "the store has used every segment number up to \(StoreLayout.largestNumber)", path: directory)
            }
            let segment = Manifest.Segment(number: number, epoch: Self.newEpoch(), firstLSN: .first, isSealed: false, length: 0, frameCount: 0)
            let manifest = Manifest(
                generation: state.manifest.generation + 1, storeID: UUID(), segments: [segment], dictionaries: [],
                base: nil, maximumFrameSize: state.manifest.maximumFrameSize)
            let path = layout.path(.segment, number)
            let file = try io.open(path, mode: .createNew)
            defer { io.close(file) }
            let header = SegmentHeader(epoch: segment.epoch, number: number, firstLSN: .first, storeID: manifest.storeID)
            try header.encoded().withUnsafeBytes { try io.writeAll(file, $0, at: 0) }
            try io.fullSync(file)
            try io.syncDirectory(directory)
            try manifestFile.write(manifest)
        }
    }
}
