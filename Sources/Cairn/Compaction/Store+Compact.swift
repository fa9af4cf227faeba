import CairnLog
import Foundation

/// What one compaction did.
public struct CompactionReport: Sendable {
    /// The LSN whose state the new base holds.
    public let lsn: LSN
    /// The objects it holds.
    public let objects: Int
    /// The base file's size.
    public let baseBytes: UInt64
    /// The live state's size, uncompressed (the base's entries).
    public let liveBytes: UInt64
    /// The store's files on disk before and after.
    public let bytesBefore: UInt64
    public let bytesAfter: UInt64
    /// How long it took.
    public let duration: Duration
    /// The files it removed (the segments the base replaced, the previous base).
    public let removedFiles: [String]
}

extension Store {
    /// Rewrites the store down to its live state: writes a base holding every object as of
    /// the last save readers see, then replaces the log's frames up to it (one manifest
    /// replacement; a crash before it leaves the store as it was, after it the store opens
    /// from the base). Saves go on meanwhile; they land in the log after the base.
    ///
    /// - Parameter level: `.fast` (LZ4) or `.high` (LZ4-HC: smaller, slower to write).
    /// - Throws: ``StoreError/Code/invalidArgument`` for an in-memory store or while another
    ///   compaction runs; ``StoreError/Code/closed`` after ``close()``; a ``LogError`` when
    ///   writing fails (the store is then as it was).
    @discardableResult
    public func compact(level: CompactionLevel = .fast) async throws -> CompactionReport {
        guard let log, let directory else { throw StoreError(.invalidArgument, "an in-memory store has no log to compact") }
        guard commits.withLock({ !$0.closed }) else { throw StoreError(.closed, "the store is closed") }
        guard
            compaction.withLock({ running in
                defer { running = true }; return !running
            })
        else {
            throw StoreError(.invalidArgument, "a compaction is already running")
        }
        defer { compaction.withLock { $0 = false } }
        let started = ContinuousClock.now
        let before = Self.bytesOnDisk(directory)
        // A new segment first, so that the base replaces every sealed one before it.
        try log.sealActiveSegment()
        // The published snapshot: every save it holds is acknowledged.
        let snapshot = self.snapshot
        let models = modelHistory
        let (written, objects, live) = try await Self.onOwnThread {
            let writer = try log.makeBaseWriter(lastLSN: snapshot.lsn, level: level)
            do {
                let objects = try BaseContents.write(snapshot, models: models, to: writer)
                return (try writer.finish(), objects, writer.rawBytes)
            } catch {
                writer.abandon()
                throw error
            }
        }
        let removed = try log.installBase(written)
        return CompactionReport(
            lsn: written.lastLSN, objects: objects, baseBytes: written.length, liveBytes: live, bytesBefore: before,
            bytesAfter: Self.bytesOnDisk(directory), duration: ContinuousClock.now - started, removedFiles: removed)
    }

    /// Runs `work` on a thread of its own (compaction reads and writes for seconds: not on a
    /// thread Swift's tasks share).
    static func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
        }
    }

    /// The bytes of the store's own files (segments, bases, dictionaries, manifests).
    static func bytesOnDisk(_ directory: String) -> UInt64 {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.reduce(0) { total, name in
            let size = (try? FileManager.default.attributesOfItem(atPath: directory + "/" + name)[.size] as? NSNumber)?.uint64Value ?? 0
            return total + size
        }
    }
}
