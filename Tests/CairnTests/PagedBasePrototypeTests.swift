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
            let entity = try #require(store.model.descriptions.first { $0.index == id.entity })
            #expect(Set(values.keys) == Set(entity.attributes.map(\.name)), "\(code)")
            for (name, value) in values {
                #expect(value == (expected[name] ?? .null), "\(code).\(name)")
            }
        }
        #expect(paged.cachedBytes <= 600 << 10)
        // The same lookups through a cache that holds everything decode each block's chunks
        // once; the small cache decoded blocks again after evicting them.
        let roomy = try PagedBase(path: path, cacheBytes: 64 << 20)
        for (code, _) in codes { _ = try roomy.object(withKey: .string(code)) }
        #expect(paged.blocksDecoded > roomy.blocksDecoded, "blocks were evicted and decoded again")
        // Deleted keys, keys never used, and an author's name (another constraint) are not found.
        #expect(try paged.object(withKey: .string("item-0")) == nil)
        #expect(try paged.object(withKey: .string("item-5")) == nil)
        #expect(try paged.object(withKey: .string("nothing")) == nil)
        #expect(try paged.object(withKey: .integer(5)) == nil)
        // Without a cache, every lookup decodes its chunk and still finds it.
        let uncached = try PagedBase(path: path, cacheBytes: 0)
        for (code, id) in codes.prefix(300) { #expect(try uncached.object(withKey: .string(code)) == id, "\(code), no cache") }
        #expect(uncached.cachedBytes == 0)
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

    /// The prototype reads no object but the one a predicate tests: a predicate across a
    /// relationship is refused, not answered as if the related objects were missing.
    @Test(arguments: ["author.name == 'x'", "ANY loans.due == nil", "loans.@count > 0", "SUBQUERY(loans, $l, $l.due == nil).@count > 0"])
    func predicatesAcrossRelationshipsAreRefused(format: String) async throws {
        let directory = TemporaryDirectory("paged-base")
        let (store, _) = try await Self.library()
        let path = directory.path + "/items.pbase"
        _ = try store.writePagedBasePrototype(to: path, entity: "Item")
        let paged = try PagedBase(path: path, cacheBytes: 1 << 20)
        let request = FetchRequest("Book", predicate: try FetchPredicate(format: format))
        #expect { try paged.count(request) } throws: { ($0 as? StoreError)?.code == .invalidPredicate }
        #expect(try paged.count(FetchRequest("Book", predicate: try FetchPredicate(format: "year > 1950 OR title == 'x'"))) > 0)
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

    /// Files whose checksums are right but whose fields lie (written with the layout's own
    /// trailer): a block larger than a block can be, chunk numbers that run into the next
    /// block, keys that all share one hash, a count of objects past `Int`. Each is refused at
    /// open or answers with an error or a miss, in bounded time.
    @Test func liesBehindAGoodChecksumAreCaught() async throws {
        let directory = TemporaryDirectory("paged-base")
        let (store, codes) = try await Self.library()
        let path = directory.path + "/items.pbase"
        _ = try store.writePagedBasePrototype(to: path, entity: "Item")
        let original = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let trailerStart = original.count - PagedBaseLayout.trailerSize
        let layout = try original.withUnsafeBytes {
            try PagedBaseLayout(trailer: UnsafeRawBufferPointer(rebasing: $0[trailerStart...]), fileSize: UInt64(original.count), path: path)
        }
        /// The file with `change` applied to its bytes and layout, and the trailer written again.
        func rewritten(_ change: (inout [UInt8], inout PagedBaseLayout) -> Void) throws -> String {
            var bytes = original
            var changed = layout
            change(&bytes, &changed)
            let crc = bytes.withUnsafeBytes { changed.regionsChecksum($0) }
            bytes.replaceSubrange(trailerStart..., with: changed.trailer(extending: crc))
            let damaged = directory.path + "/lying.pbase"
            try Data(bytes).write(to: URL(fileURLWithPath: damaged))
            return damaged
        }
        func directoryField(_ block: Int, _ field: Int) -> Int { Int(layout.directoryOffset) + block * 24 + field }
        func store64(_ value: UInt64, at offset: Int, in bytes: inout [UInt8]) {
            withUnsafeBytes(of: value.littleEndian) { bytes.replaceSubrange(offset..<(offset + 8), with: $0) }
        }
        let sample = Array(codes.prefix(200))

        // A stored length past LZ4's bound for a block: it runs past the blocks' region.
        #expect(throws: StoreError.self) {
            try PagedBase(
                path: rewritten { bytes, _ in
                    withUnsafeBytes(of: UInt32.max.littleEndian) { bytes.replaceSubrange(directoryField(0, 8)..<directoryField(0, 12), with: $0) }
                }, cacheBytes: 1 << 20)
        }
        // The second block says it starts at the first block's chunk: out of order at open.
        #expect(throws: StoreError.self) {
            try PagedBase(
                path: rewritten { bytes, _ in store64(UInt64(bytes[directoryField(0, 16)]), at: directoryField(1, 16), in: &bytes) },
                cacheBytes: 1 << 20)
        }
        // The second block's first chunk moved up to the first block's last: the first block's
        // chunks then run into the next block's, and decoding it fails.
        let overlapping = try rewritten { bytes, _ in
            let second = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: directoryField(1, 16), as: UInt64.self) }
            store64(UInt64(littleEndian: second) - 1, at: directoryField(1, 16), in: &bytes)
        }
        let paged = try PagedBase(path: overlapping, cacheBytes: 1 << 20)
        #expect(throws: (any Error).self) { try paged.count(FetchRequest("Item")) }
        // Every key (and fence) under the hash of one code: its lookup stops at the limit with
        // an error; the others miss.
        let (target, _) = sample[0]
        var hasher = KeyHasher(owner: Int(layout.owner), number: Int(layout.number))
        ValueEncoding.withEncoded(.string(target)) { hasher.combine($0) }
        let oneHash = try rewritten { bytes, _ in
            for index in 0..<Int(layout.keyCount) { store64(hasher.value, at: Int(layout.keysOffset) + index * 16, in: &bytes) }
            for index in 0..<Int(layout.fenceCount) { store64(hasher.value, at: Int(layout.fencesOffset) + index * 8, in: &bytes) }
        }
        let flat = try PagedBase(path: oneHash, cacheBytes: 1 << 20)
        #expect(throws: StoreError.self) { try flat.object(withKey: .string(target)) }
        for (code, _) in sample.dropFirst() { #expect(try flat.object(withKey: .string(code)) == nil) }
        // A count of objects no Int holds.
        let huge = try PagedBase(path: try rewritten { _, layout in layout.objectCount = .max }, cacheBytes: 0)
        #expect(huge.objectCount == Int.max)
    }

    /// The shared block codec refuses lengths no block can have before it reads or decodes
    /// anything: a stored length past LZ4's bound for 256 KiB, a raw length past 256 KiB.
    @Test func theBlockCodecRefusesLengthsNoBlockCanHave() {
        let bytes = [UInt8](repeating: 0, count: 64)
        var raw = [UInt8](repeating: 0, count: 64)
        for block in [
            BaseBlock(offset: 0, storedLength: .max, rawLength: 16), BaseBlock(offset: 0, storedLength: UInt32(BaseFile.maximumStoredBlock + 1), rawLength: 16),
            BaseBlock(offset: 0, storedLength: 16, rawLength: UInt32(BaseFile.maximumRawBlock + 1)), BaseBlock(offset: 0, storedLength: 48, rawLength: 16)
        ] {
            #expect(throws: LogError.self) {
                try bytes.withUnsafeBytes { source in try raw.withUnsafeMutableBytes { try block.decode(source, into: $0, path: "test") } }
            }
        }
    }
}
