import CairnLog
import CairnTestSupport
import Foundation
import Testing

@_spi(PagedBasePrototype) @testable import Cairn

/// The paged base prototype (docs/SCALE.md): the state written as blocks with a directory and
/// a sorted index of keys, read back over a mapped file through a small cache. Every object is
/// found by its key with its values, a scan counts what the resident store counts, and damage
/// anywhere is an error (or a key not found), never a trap or a wrong object.
@Suite struct PagedBasePrototypeTests {
    /// A library of 12,000 items (books and magazines, under the abstract `Item` and its
    /// unique `code`) and a few authors, with deletions that leave holes in chunks.
    private static func library() async throws -> (Store, [String: ObjectID]) {
        let store = Store(inMemory: try libraryModel())
        let context = store.newBackgroundContext()
        var codes: [String: ObjectID] = [:]
        var made: [(String, ManagedObject)] = []
        for index in 0..<12_000 {
            let code = "item-\(index * 7919 % 100_003)"
            let object =
                index % 5 == 0
                ? try context.make("Magazine", ["code": .string(code), "issue": .integer(Int64(index))])
                : try context.make(
                    "Book",
                    [
                        "code": .string(code), "title": .string("Title \(index) " + String(repeating: "é", count: index % 9)),
                        "year": .integer(Int64(1900 + index % 120))
                    ])
            made.append((code, object))
        }
        _ = try context.make("Author", ["name": .string("item-5"), "born": .integer(1900)])
        try await context.save()
        for (index, (code, object)) in made.enumerated() {
            if index % 13 == 0 {
                try context.delete(object)
            } else {
                codes[code] = object.objectID
            }
        }
        try await context.save()
        return (store, codes)
    }

    @Test func everyObjectIsFoundByItsKeyWithItsValues() async throws {
        let directory = TemporaryDirectory("paged-base")
        let (store, codes) = try await Self.library()
        let path = directory.path + "/items.pbase"
        let summary = try store.writePagedBasePrototype(to: path, entity: "Item")
        #expect(summary.keys == codes.count)
        #expect(summary.blocks > 3, "the items span several blocks")
        // A cache of about two blocks: most lookups decode a block and evict another.
        let paged = try PagedBase(path: path, cacheBytes: 600 << 10)
        #expect(paged.objectCount == codes.count + 1)
        let view = store.viewContext
        for (code, id) in codes {
            #expect(try paged.object(withKey: .string(code)) == id, "\(code)")
            let expected = try #require(view.object(with: id))
            let values = try #require(try paged.values(of: id))
            for name in ["code", "title", "year", "issue"] where values[name] != nil {
                #expect(values[name] == expected[name], "\(code).\(name)")
            }
        }
        #expect(paged.cachedBytes <= 600 << 10)
        #expect(paged.blocksDecoded > summary.blocks, "blocks were evicted and decoded again")
        // Deleted keys, keys never used, and an author's name (another constraint) are not found.
        #expect(try paged.object(withKey: .string("item-0")) == nil)
        #expect(try paged.object(withKey: .string("item-5")) == nil)
        #expect(try paged.object(withKey: .string("nothing")) == nil)
        #expect(try paged.object(withKey: .integer(5)) == nil)
    }

    @Test(
        arguments: [
            ("Item", nil), ("Book", "title CONTAINS[c] 'É'"), ("Book", "year > 1950 AND year <= 1990"), ("Magazine", "issue < 6000"),
            ("Item", "code BEGINSWITH 'item-1'"), ("Author", nil)
        ] as [(String, String?)])
    func aScanCountsWhatTheStoreCounts(entity: String, format: String?) async throws {
        let directory = TemporaryDirectory("paged-base")
        let (store, _) = try await Self.library()
        let path = directory.path + "/items.pbase"
        _ = try store.writePagedBasePrototype(to: path, entity: "Item")
        let request = FetchRequest(entity, predicate: try format.map { try FetchPredicate(format: $0) })
        let expected = try store.viewContext.count(request)
        for cache in [0, 600 << 10, 64 << 20] {
            let paged = try PagedBase(path: path, cacheBytes: cache)
            #expect(try paged.count(request) == expected, "cache \(cache)")
            #expect(try paged.count(request) == expected, "again, cache \(cache)")
        }
    }

    @Test func anEntityWithoutAKeyOfOneAttributeIsRefused() async throws {
        let directory = TemporaryDirectory("paged-base")
        let (store, _) = try await Self.library()
        #expect(throws: StoreError.self) { try store.writePagedBasePrototype(to: directory.path + "/loans.pbase", entity: "Loan") }
    }

    /// About 500 bytes spread over the file changed in turn (and every byte of the trailer), and
    /// the file cut at a few lengths: the open refuses it, or every lookup gives the right
    /// object, none, or an error, and a scan ends.
    @Test func damageIsAnErrorOrAMissNeverAWrongObject() async throws {
        let directory = TemporaryDirectory("paged-base")
        let (store, codes) = try await Self.library()
        let path = directory.path + "/items.pbase"
        _ = try store.writePagedBasePrototype(to: path, entity: "Item")
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        let sample = Array(codes.sorted { $0.key < $1.key }.enumerated().filter { $0.offset % 400 == 0 }.map(\.element))
        let damagedPath = directory.path + "/damaged.pbase"
        var refused = 0, read = 0
        func tryDamaged(_ bytes: Data) throws {
            try bytes.write(to: URL(fileURLWithPath: damagedPath))
            guard let paged = try? PagedBase(path: damagedPath, cacheBytes: 1 << 20) else {
                refused += 1
                return
            }
            read += 1
            for (code, id) in sample {
                if let found = try? paged.object(withKey: .string(code)) { #expect(found == id, "\(code)") }
            }
            _ = try? paged.count(FetchRequest("Book", predicate: try FetchPredicate(format: "year > 1950")))
        }
        let trailer = original.count - PagedBaseLayout.trailerSize
        for offset in Array(stride(from: 0, to: trailer, by: trailer / 500 + 1)) + Array(trailer..<original.count) {
            var bytes = original
            bytes[offset] ^= 0x5A
            try tryDamaged(bytes)
        }
        for length in [0, 7, 127, original.count / 2, original.count - 1] {
            try tryDamaged(original.prefix(length))
        }
        #expect(refused > 0 && read > 0, "\(refused) refused, \(read) read")
    }
}
