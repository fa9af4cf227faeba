import CairnSupport
import CairnTestSupport
import Foundation
import Synchronization
import Testing

@testable import CairnLog

/// A reader of the manifest (a follower, a reader in another process) while a writer replaces
/// it: between the writer's two renames `MANIFEST` is missing and `MANIFEST.tmp` holds the new
/// generation, and either rename may land between two of the reader's looks. The reader gets
/// the newest generation, never `MANIFEST.prev` (a follower took an older generation for a store
/// restored from a backup, and stopped).
@Suite struct ManifestReplacementRaceTests {
    /// A store whose manifest has a previous generation (a sealed segment), and both generations.
    private static func storeWithTwoGenerations(_ store: String) async throws -> (previous: Manifest, newest: Manifest) {
        let writer = try Log.open(at: store, options: LogOptions())
        try await writer.append(payload(0, size: 100))
        try writer.sealActiveSegment()
        try await writer.append(payload(1, size: 100))
        try await writer.close()
        let layout = StoreLayout(directory: store)
        let io = PosixFileIO()
        let newest = try Manifest(decoding: io.readWholeFile(layout.manifest, limit: Manifest.maximumSize), path: layout.manifest)
        let previous = try Manifest(decoding: io.readWholeFile(layout.previousManifest, limit: Manifest.maximumSize), path: layout.previousManifest)
        #expect(previous.generation < newest.generation)
        #expect(previous.segments.count < newest.segments.count)
        return (previous, newest)
    }

    /// The second rename lands just as the reader opens `MANIFEST.tmp`.
    @Test func aReplacementFinishingUnderAReadGivesTheNewGeneration() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        let (_, newest) = try await Self.storeWithTwoGenerations(store)
        let layout = StoreLayout(directory: store)
        // Between the writer's renames: the new generation in MANIFEST.tmp, none in MANIFEST.
        try PosixFileIO().rename(layout.manifest, to: layout.manifest + ".tmp")
        let once = Once()
        let io = OpenHookFileIO { path, _ in
            guard path.hasSuffix("MANIFEST.tmp"), once.first() else { return }
            try PosixFileIO().rename(path, to: layout.manifest)
        }
        guard case .found(let manifest, let note) = try ManifestFile(layout: layout, io: io).read(segmentsWithFrames: [], repair: false) else {
            Issue.record("no manifest found")
            return
        }
        #expect(manifest.generation == newest.generation)
        #expect(note == nil, "read from MANIFEST itself")
    }

    /// The first rename of the next replacement lands just as the reader opens `MANIFEST`: the
    /// reader takes the complete `MANIFEST.tmp` of that replacement.
    @Test func aReplacementStartingUnderAReadGivesTheNewGeneration() async throws {
        let directory = TemporaryDirectory()
        let store = directory.store()
        let (_, newest) = try await Self.storeWithTwoGenerations(store)
        let layout = StoreLayout(directory: store)
        // The writer's next generation, complete in MANIFEST.tmp.
        var next = newest
        next.generation += 1
        try next.encoded().withUnsafeBytes { bytes in
            let io = PosixFileIO()
            let file = try io.open(layout.manifest + ".tmp", mode: .createNew)
            defer { io.close(file) }
            try io.writeAll(file, bytes, at: 0)
        }
        let once = Once()
        let io = OpenHookFileIO { path, _ in
            guard path == layout.manifest, once.first() else { return }
            try PosixFileIO().rename(layout.manifest, to: layout.previousManifest)
        }
        guard case .found(let manifest, _) = try ManifestFile(layout: layout, io: io).read(segmentsWithFrames: [], repair: false) else {
            Issue.record("no manifest found")
            return
        }
        #expect(manifest.generation == next.generation)
    }
}

/// True the first time it is asked, from any thread.
private final class Once: Sendable {
    private let asked = Atomic(false)

    func first() -> Bool { !asked.exchange(true, ordering: .relaxed) }
}
