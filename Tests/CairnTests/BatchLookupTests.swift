import CairnLog
import CairnTestSupport
import Foundation
import Testing

@testable import Cairn

/// A batch of lookups by unique key (`fetch(_:key:in:)`), taken through its stages a group of
/// keys at a time (``StoreSnapshot/holders(of:for:)``): each key finds what a lookup of it
/// alone finds, in any snapshot, when keys share a hash, and for keys of another family.
@Suite struct BatchLookupTests {
    static func model() throws -> Model {
        try Model {
            Entity("Item", abstract: true) {
                Attribute("code", .string, optional: true)
                Attribute("rank", .integer64)
                Unique("code")
            }
            Entity("Part", parent: "Item") {}
            Entity("Tool", parent: "Item") {}
            Entity("Note") {
                Attribute("code", .string, optional: true)
                Unique("code")
            }
        }
    }

    static func code(_ n: Int) -> String { "C-\(n)" }

    /// The holding each hash has as the entries filed one by one say: what ``UniqueIndex/holdings(_:at:)`` must give.
    static func expected(_ index: UniqueIndex, _ hash: UInt64, at lsn: LSN) -> UniqueIndex.Holding {
        let holders = index.holders(hash, at: lsn)
        return holders.count > 1 ? .several : holders.first.map(UniqueIndex.Holding.one) ?? .none
    }

    /// Random adds and removes under few hashes (so that several objects share one often),
    /// then every LSN's holdings of every hash, in groups, against its holders.
    @Test func holdingsAreTheHoldersOfEachHashAsOfEachLSN() {
        var generator = TestSeed.generator()
        let hashes = (0..<40).map { _ in UInt64.random(in: 0...UInt64.max, using: &generator) }
        let index = UniqueIndex()
        var filed: [UInt64: Set<ObjectID>] = [:]
        for number in 1...120 {
            let lsn = LSN(UInt64(number))
            index.register(lsn)
            index.begin(lsn)
            for _ in 0..<12 {
                let hash = hashes[Int.random(in: 0..<40, using: &generator)]
                let id = ObjectID(entity: Int.random(in: 0..<2, using: &generator), key: UInt64.random(in: 1...30, using: &generator))
                if Bool.random(using: &generator), filed[hash]?.contains(id) != true {
                    index.add(hash, id, at: lsn)
                    filed[hash, default: []].insert(id)
                } else if filed[hash]?.contains(id) == true {
                    index.remove(hash, id, at: lsn)
                    filed[hash]?.remove(id)
                }
            }
        }
        var kinds: Set<String> = []
        for number in 1...120 {
            let lsn = LSN(UInt64(number))
            let asked = hashes.shuffled(using: &generator)
            let holdings = asked.withUnsafeBufferPointer { index.holdings($0, at: lsn) }
            #expect(holdings == asked.map { Self.expected(index, $0, at: lsn) }, "as of \(lsn)")
            for holding in holdings {
                switch holding {
                case .none: kinds.insert("none")
                case .one: kinds.insert("one")
                case .several: kinds.insert("several")
                }
            }
        }
        #expect(kinds == ["none", "one", "several"], "the workload gives every kind of holding")
    }

    /// A store of parts, tools and notes, some renamed and deleted; every key (and keys no
    /// object has, and null) asked at once, in the newest snapshot and in one held from
    /// before the changes. With 60,000 items, the uniqueness index's buckets grow during the
    /// second save (past 65,536 entries), while the first save's snapshot is held.
    @Test(arguments: [1_000, 60_000]) func eachKeyFindsWhatALookupOfItAloneFinds(count: Int) async throws {
        let store = Store(inMemory: try Self.model())
        try await store.performBackgroundTask { context in
            for n in 0..<count {
                let item = try context.insert(n % 3 == 0 ? "Tool" : "Part")
                try item.setValue(.string(Self.code(n)), forKey: "code")
                try item.setValue(.integer(Int64(n)), forKey: "rank")
                // Notes share some codes: another constraint, another family.
                if n % 5 == 0 && n < 1_000 { try context.insert("Note").setValue(.string(Self.code(n)), forKey: "code") }
            }
            try await context.save()
        }
        let before = store.snapshot
        let bitsBefore = before.uniqueIndex.lock.withLock { _ in before.uniqueIndex.bucketBits }
        #expect(bitsBefore == Tuning.uniqueMinimumBucketBits)
        try await store.performBackgroundTask { context in
            for item in try context.fetch(FetchRequest("Item")) {
                let rank = try item.value(forKey: "rank", as: Int64.self)
                if rank % 7 == 0 {
                    try item.delete()
                } else if rank % 11 == 0 {
                    try item.setValue(.string(Self.code(Int(rank) + count)), forKey: "code")
                }
            }
            // New items past the old ones' keys: enough, at 60,000, to grow the buckets.
            for n in (3 * count)..<(3 * count + count / 2) { try context.insert("Part").setValue(.string(Self.code(n)), forKey: "code") }
            try await context.save()
        }
        let bits = store.snapshot.uniqueIndex.lock.withLock { _ in store.snapshot.uniqueIndex.bucketBits }
        #expect(bits == (count > 10_000 ? Tuning.uniqueMinimumBucketBits + 2 : Tuning.uniqueMinimumBucketBits))
        let asked: [Value] = (0..<(4 * count)).map { .string(Self.code($0)) } + [.string(""), .string("C-")]
        let constraint = try #require(store.model.entity(named: "Item")?.uniqueness(ofAttribute: 0))
        for snapshot in [before, store.snapshot] {
            let batch = snapshot.holders(of: asked, for: constraint)
            let alone = asked.map { snapshot.holder(of: $0, for: constraint) }
            #expect(batch == alone)
            #expect(batch.compactMap { $0 }.count > count / 2)
        }
        // Through the context, with a null among them, in both families (a sample of the
        // keys: each is a fetch of its own too).
        let context = store.viewContext
        let values = asked.enumerated().filter { $0.offset % max(1, count / 500) == 0 }.map(\.element) + [.null]
        for entity in ["Item", "Part", "Tool", "Note"] {
            let found = try context.fetch(entity, key: "code", in: values).map { $0?.objectID }
            let alone = try values.map { value in
                value == .null ? nil : try context.fetchFirst(FetchRequest(entity, predicate: .equal("code", value)))?.objectID
            }
            #expect(found == alone, "\(entity)")
        }
    }

    /// Keys whose hash another object shares: filed under a second object (as two keys whose
    /// hashes agree on every bit the index keeps would be), each key still finds its own holder;
    /// a key no object has finds none, though an object is filed under its hash.
    @Test func keysSharingAHashFindTheirOwnHolder() async throws {
        let store = Store(inMemory: try Self.model())
        try await store.performBackgroundTask { context in
            for n in 0..<100 { try context.insert("Part").setValue(.string(Self.code(n)), forKey: "code") }
            try await context.save()
        }
        let snapshot = store.snapshot
        let constraint = try #require(store.model.entity(named: "Item")?.uniqueness(ofAttribute: 0))
        func hash(_ value: Value) -> UInt64 {
            var hasher = KeyHasher(owner: constraint.owner, number: constraint.number)
            ValueEncoding.encoded(value).withUnsafeBytes { hasher.combine($0) }
            return hasher.value
        }
        let shared = Value.string(Self.code(3))
        let missing = Value.string("nobody")
        let holder = try #require(snapshot.holder(of: shared, for: constraint))
        let other = try #require(snapshot.holder(of: .string(Self.code(4)), for: constraint))
        // Filed by hand where the index's own saves would file a colliding key.
        let index = snapshot.uniqueIndex
        index.lock.withLock { _ in
            index.buckets[index.bucket(UniqueIndex.Probe(hash(shared)))].insert(UniqueIndex.Entry(UniqueIndex.Probe(hash(shared)), id: other, added: 0), at: 0)
            index.buckets[index.bucket(UniqueIndex.Probe(hash(missing)))].append(UniqueIndex.Entry(UniqueIndex.Probe(hash(missing)), id: other, added: 0))
        }
        let asked = [shared, missing, .string(Self.code(4))]
        let holdings = asked.map(hash).withUnsafeBufferPointer { index.holdings($0, at: snapshot.lsn) }
        #expect(holdings == [.several, .one(other), .one(other)])
        #expect(snapshot.holders(of: asked, for: constraint) == [holder, nil, other])
        // The same keys in the second group of a batch, after twenty others.
        let others = (20..<40).map { Value.string(Self.code($0)) }
        let expected = others.map { snapshot.holder(of: $0, for: constraint) } + [holder, nil, other]
        #expect(expected.prefix(20).allSatisfy { $0 != nil })
        #expect(snapshot.holders(of: others + asked, for: constraint) == expected)
    }
}
