import CairnLog
import CairnSupport
import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// An error for a record the store cannot read names the segment file and the frame's byte
/// offset, as well as its LSN.
@Suite struct RecordLocationTests {
    /// Checks that `error` names the segment file, the LSN and the offset where that LSN's frame
    /// starts in the file (found by walking the file's frames from its header).
    static func expectLocated(_ error: (any Error)?, _ comment: Comment) throws {
        let error = try #require(error as? StoreError, comment)
        let file = try #require(error.file, "names the file: \(error)")
        #expect(file.hasSuffix(".seg"), "\(error)")
        let offset = try #require(error.offset, "names the offset: \(error)")
        let lsn = try #require(error.lsn, "names the LSN: \(error)")
        #expect("\(error)".contains(file) && "\(error)".contains("offset"), "\(error)")
        #expect(try frameOffset(of: lsn, in: file) == offset, "the offset of LSN \(lsn)'s frame in \(file): \(error)")
    }

    /// Where the frame of `lsn` starts in the segment file at `path`: its frames follow the
    /// segment header one after the other, each a header and its stored payload.
    static func frameOffset(of lsn: LSN, in path: String) throws -> UInt64? {
        try frameHeaders(ofSegment: path).first { $0.header.lsn == lsn }.map { UInt64($0.offset) }
    }

    /// ``HostileRecordTests/open(after:model:)``, keeping the store's folder (its files are
    /// read to check the error's offset).
    static func open(after payload: [UInt8], model: Model? = nil) async throws -> (folder: TemporaryDirectory, error: (any Error)?) {
        let folder = TemporaryDirectory()
        let model = try model ?? libraryModel()
        let store = try Store(at: folder.store(), model: model)
        try store.viewContext.make("Author", ["name": "Existing"])
        try await store.viewContext.save()
        try await store.close()
        let log = try Log.open(at: folder.store())
        try await log.append(payload)
        try await log.close()
        do {
            let reopened = try Store(at: folder.store(), model: model)
            try await reopened.close()
            return (folder, nil)
        } catch {
            return (folder, error)
        }
    }

    @Test func undecodableRecordsNameTheirFileAndOffset() async throws {
        for (payload, what) in [([9, 1], "unknown kind"), ([2, 1, 0xFF], "truncated"), ([2, 7, 0, 0, 0], "newer version")] as [([UInt8], String)] {
            let (folder, error) = try await Self.open(after: payload)
            try Self.expectLocated(error, "\(what)")
            withExtendedLifetime(folder) {}
        }
    }

    @Test func readingTheStoredModelsNamesTheFileAndOffsetToo() async throws {
        let folder = TemporaryDirectory()
        let log = try Log.open(at: folder.store())
        try await log.append([1, 1] + Array("{not a model".utf8))
        try await log.close()
        var failure: (any Error)?
        do { _ = try Store.storedModels(at: folder.store()) } catch { failure = error }
        try Self.expectLocated(failure, "a model record that does not load")

        // A log whose first record is no model record at all is not an object graph's.
        let other = TemporaryDirectory()
        let raw = try Log.open(at: other.store())
        try await raw.append(Array("record 0".utf8))
        try await raw.close()
        do {
            _ = try Store.storedModels(at: other.store())
            Issue.record("read a model from a log without one")
        } catch let error as StoreError {
            #expect(error.code == .notObjectGraph, "\(error)")
            try Self.expectLocated(error, "not an object graph")
        }
    }

    @Test func aRecordThatDoesNotApplyNamesItsFileAndOffset() async throws {
        // An update of an object no record inserted: it decodes, then fails as it is applied.
        let author = UInt64(try #require(try libraryModel().entity(named: "Author")).index)
        let payload = HostileRecordTests().record { w in
            w.writeVarint(0); w.writeVarint(1); w.writeVarint(author)
            w.writeVarint(12345); w.writeVarint(0); w.writeVarint(0)
        }
        let (folder, error) = try await Self.open(after: payload)
        try Self.expectLocated(error, "update of a missing object")
        withExtendedLifetime(folder) {}
    }

    @Test func aFirstRecordThatStartsLikeAModelRecordButIsNoneIsNotAnObjectGraph() async throws {
        let firsts: [[UInt8]] = [[1, 1] + Array("{not a model".utf8), [1, 101, 0, 0], [1]]
        for first in firsts {
            let folder = TemporaryDirectory()
            let log = try Log.open(at: folder.store())
            try await log.append(first)
            try await log.append(Array("record 1".utf8))
            try await log.close()
            var failures: [(String, any Error)] = []
            do { _ = try Store.storedModels(at: folder.store()) } catch { failures.append(("stored models", error)) }
            do { _ = try Store(at: folder.store(), model: try libraryModel()) } catch { failures.append(("open", error)) }
            #expect(failures.count == 2, "\(first)")
            for (what, error) in failures {
                #expect((error as? StoreError)?.code == .notObjectGraph, "\(what) of \(first): \(error)")
                try Self.expectLocated(error, "\(what) of \(first)")
            }
        }
    }
}
