import CairnLog
import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// A store folder that lost its manifest (`MANIFEST`, `.prev` and `.tmp`) while it still holds
/// the store's files is refused, by the library and by `cairn`, and nothing in it is removed:
/// Cairn never creates a new, empty store over the files of an old one.
@Suite struct LostManifestTests {
    /// A compacted store at rest (a base, maybe dictionaries, a frameless active segment)
    /// whose manifest files were then lost.
    static func compactedStoreWithoutManifest(_ directory: TemporaryDirectory) async throws -> (path: String, model: Model) {
        let model = try CompactionTests.model()
        let path = directory.store()
        let store = try Store(at: path, model: model, options: CompactionTests.manual(segmentSize: 8 << 10))
        try await CompactionTests.overwriteWorkload(store)
        try await store.compact()
        try await store.close()
        let names = try FileManager.default.contentsOfDirectory(atPath: path)
        try #require(names.contains { $0.hasSuffix(".base") }, "compacted: \(names)")
        for name in ["MANIFEST", "MANIFEST.prev", "MANIFEST.tmp"] { try? FileManager.default.removeItem(atPath: path + "/" + name) }
        return (path, model)
    }

    /// The name and bytes of every file in `path` but the lock files (their contents are a pid).
    static func files(_ path: String) throws -> [String: [UInt8]] {
        var found: [String: [UInt8]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: path) where name != "LOCK" && name != "READERS" {
            found[name] = Array(try Data(contentsOf: URL(fileURLWithPath: path + "/" + name)))
        }
        return found
    }

    /// Checks that `error` is the refusal: corruption, naming the folder and a store file.
    static func expectRefusal(_ error: (any Error)?, _ path: String, _ comment: Comment) throws {
        let refusal = try #require(error as? LogError, "\(comment): \(String(describing: error))")
        #expect(refusal.code == .corruption, "\(comment): \(refusal)")
        #expect(refusal.message.contains("no manifest"), "\(comment): \(refusal)")
        #expect(refusal.path == path, "names the folder: \(refusal)")
        #expect(refusal.message.contains(".base"), "names the files: \(refusal)")
    }

    @Test func theLibraryRefusesToCreateAStoreOverTheFilesOfOneThatLostItsManifest() async throws {
        let directory = TemporaryDirectory()
        let (path, model) = try await Self.compactedStoreWithoutManifest(directory)
        let before = try Self.files(path)

        var failure: (any Error)?
        do { _ = try Store(at: path, model: model) } catch { failure = error }
        try Self.expectRefusal(failure, path, "a writable store open")
        failure = nil
        do { _ = try Log.open(at: path) } catch { failure = error }
        try Self.expectRefusal(failure, path, "a writable log open")
        failure = nil
        do { _ = try Store.storedModel(at: path) } catch { failure = error }
        try Self.expectRefusal(failure, path, "the stored model (a read-only open)")
        #expect(try Self.files(path) == before, "nothing removed or changed")
    }

    @Test func cairnCreateImportAndVerifyRefuseAndRemoveNothing() async throws {
        let directory = TemporaryDirectory()
        let (path, model) = try await Self.compactedStoreWithoutManifest(directory)
        let before = try Self.files(path)
        let modelFile = directory.path + "/model.json"
        try model.jsonData().write(to: URL(fileURLWithPath: modelFile))
        let items = directory.path + "/items.json"
        try Data(#"[{"code":"new"}]"#.utf8).write(to: URL(fileURLWithPath: items))
        let commands = [
            ["create", path, "--model", modelFile], ["import", path, "--entity", "Item", items, "--model", modelFile], ["verify", path]
        ]
        for arguments in commands {
            let result = try await runCairn(arguments)
            #expect(result.status == 1, "cairn \(arguments[0]): \(result.output)")
            #expect(result.output.contains("no manifest"), "cairn \(arguments[0]): \(result.output)")
            #expect(try Self.files(path) == before, "cairn \(arguments[0]) removed or changed nothing")
        }
    }

    @Test func anyCairnFileHoldingBytesKeepsAStoreFromBeingCreated() async throws {
        let kinds: [(name: String, bytes: [UInt8])] = [
            ("000000000003.dict", Array("a dictionary".utf8)),
            ("000000000004.base", Array("a base".utf8)),
            ("000000000002.seg.torn-4096", Array("cut bytes".utf8)),
            ("000000000005.base.tmp", Array("a base being written".utf8)),
            ("MANIFEST.prev", Array("a damaged manifest".utf8))
        ]
        for kind in kinds {
            let directory = TemporaryDirectory()
            let path = directory.store()
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            try Data(kind.bytes).write(to: URL(fileURLWithPath: path + "/" + kind.name))
            var failure: (any Error)?
            do { _ = try Log.open(at: path) } catch { failure = error }
            let error = try #require(failure as? LogError, "\(kind.name): \(String(describing: failure))")
            #expect(error.code == .corruption && error.message.contains(kind.name), "\(kind.name): \(error)")
            #expect(try Self.files(path) == [kind.name: kind.bytes], "\(kind.name) kept")
        }
    }

    @Test func aFolderWithNoCairnFileHoldingBytesIsStillANewStore() async throws {
        // An interrupted creation: a frameless first segment, an empty manifest's temporary file.
        let directory = TemporaryDirectory()
        let path = directory.store()
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try Data(repeating: 0, count: 0).write(to: URL(fileURLWithPath: path + "/MANIFEST.tmp"))
        try Data("notes".utf8).write(to: URL(fileURLWithPath: path + "/notes.txt"))
        let log = try Log.open(at: path)
        try log.closeNow()
        #expect(try Self.files(path)["notes.txt"] == Array("notes".utf8))
    }

    /// Runs `cairn` and returns its exit status and output.
}
