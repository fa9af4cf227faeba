import CairnTestSupport
import Foundation
import Testing

@testable import Cairn

/// The attribute indexes built in bulk: at the end of a replay, each of two stretches of the
/// objects gathered and sorted on its own thread and the two merged
/// (``AttributeIndex/built(from:layout:)``); and a large save's inserts gathered, sorted and
/// merged in. The same entries, in the same order, as the indexes filed entry by entry.
@Suite struct BulkIndexBuildTests {
    static func model() throws -> Model {
        try Model {
            Entity("Reading", abstract: true) {
                Attribute("serial", .integer64)
                Attribute("rank", .integer64, indexed: true)
                Attribute("label", .string, indexed: true)
                Attribute("when", .date, indexed: true)
            }
            Entity("Sensor", parent: "Reading") {
                Attribute("weight", .double, indexed: true)
                // Stored with the float tag: a packed index whose values take the decoder's way.
                Attribute("ratio", .float, indexed: true)
            }
            Entity("Probe", parent: "Reading") {
                Attribute("active", .boolean, indexed: true)
            }
        }
    }

    /// Every slot's entries, in index order, as (entity, key) pairs.
    static func entries(_ snapshot: StoreSnapshot) -> [[ObjectID]] {
        snapshot.model.indexLayout.slots.enumerated().map { slot, place in
            snapshot.indexes[slot].ordered.objects(from: nil, to: nil, entity: place.entity)
        }
    }

    /// 30,000 readings (more than one thread's share), repeated values, nils, values changed
    /// and objects deleted in later saves; then the store reopened from its log and from a base.
    @Test func aReplayBuildsTheIndexesTheSavesMade() async throws {
        let directory = TemporaryDirectory()
        let path = directory.store()
        var options = StoreOptions()
        options.automaticCompaction = .disabled
        let model = try Self.model()
        let store = try Store(at: path, model: model, options: options)
        let count = 30_000
        try await store.performBackgroundTask { context in
            for n in 0..<count {
                try Self.fill(try context.insert(n % 3 == 0 ? "Probe" : "Sensor"), n)
                if n % 10_000 == 9_999 { try await context.save() }
            }
            try await context.save()
        }
        try await store.performBackgroundTask { context in
            let readings = try context.fetch(FetchRequest("Reading"))
            for (index, reading) in readings.enumerated() {
                if index % 29 == 0 {
                    try reading.delete()
                } else if index % 7 == 0 {
                    try reading.setValue(.integer(Int64(index % 5)), forKey: "rank")
                    try reading.setValue(.null, forKey: "label")
                }
            }
            try await context.save()
        }
        let saved = store.snapshot
        let expected = Self.entries(saved)
        // Two threads taking chunks from both ends see each chunk once, whichever gets how many.
        let chunks = Set(saved.objects.ids(Set(saved.model.descriptions.indices)).map { $0.key >> Tuning.objectChunkShift })
        for _ in 0..<50 {
            let seen = saved.objects.visitFromBothEnds(Set(saved.model.descriptions.indices), on: .replayHelper) { ChunkLister() }
            #expect(seen.count == 2)
            let all = seen.flatMap { $0 }
            #expect(all.count == chunks.count && Set(all) == chunks)
        }
        // Five indexed attributes on one concrete entity, four on the other; none on the
        // abstract one. More objects than one thread takes alone.
        #expect(expected.filter { $0.count > count / 10 }.count == 9, "\(expected.map(\.count))")
        try #require(saved.objects.counts.reduce(0, +) >= Tuning.parallelScanObjects)
        try await store.close()

        let replayed = try Store(at: path, model: model, options: options)
        #expect(throws: Never.self) { try replayed.snapshot.checkInvariants() }
        #expect(Self.entries(replayed.snapshot) == expected)
        _ = try await replayed.compact(level: .fast)
        try await replayed.close()

        let fromBase = try Store(at: path, model: model, options: options)
        #expect(throws: Never.self) { try fromBase.snapshot.checkInvariants() }
        #expect(Self.entries(fromBase.snapshot) == expected)
        try await fromBase.close()
    }

    /// A large save's inserts are gathered, sorted and merged into the indexes (or filed one by
    /// one, against a large index): the indexes then hold what a bulk build from the objects
    /// holds, and what saves of a few objects each make.
    @Test func aLargeSavesInsertsAreFiledTogether() async throws {
        let model = try Self.model()
        let gathered = Store(inMemory: model), oneByOne = Store(inMemory: model)
        let batches = [Tuning.gatheredIndexInserts + 10, 50, Tuning.gatheredIndexInserts * 2]
        #expect(batches[1] < Tuning.gatheredIndexInserts)
        var first = 0
        var held: (snapshot: StoreSnapshot, entries: [[ObjectID]])?
        for batch in batches {
            let range = first..<(first + batch)
            first += batch
            try await gathered.performBackgroundTask { context in
                for n in range { try Self.fill(try context.insert(n % 3 == 0 ? "Probe" : "Sensor"), n) }
                try await context.save()
            }
            for part in stride(from: range.lowerBound, to: range.upperBound, by: 1_000) {
                try await oneByOne.performBackgroundTask { context in
                    for n in part..<min(part + 1_000, range.upperBound) { try Self.fill(try context.insert(n % 3 == 0 ? "Probe" : "Sensor"), n) }
                    try await context.save()
                }
            }
            let snapshot = gathered.snapshot
            #expect(throws: Never.self) { try snapshot.checkInvariants() }
            let rebuilt = AttributeIndex.built(from: snapshot.objects, layout: snapshot.model.indexLayout)
            let bulk = snapshot.model.indexLayout.slots.enumerated().map { slot, place in
                rebuilt[slot].ordered.objects(from: nil, to: nil, entity: place.entity)
            }
            #expect(Self.entries(snapshot) == bulk)
            #expect(Self.serials(snapshot) == Self.serials(oneByOne.snapshot))
            // A snapshot held across the next save keeps its entries.
            if let held { #expect(Self.entries(held.snapshot) == held.entries) }
            held = (snapshot, Self.entries(snapshot))
        }
    }

    /// Every slot's entries, in index order, as the objects' serial numbers (the same in two
    /// stores given the same objects, whatever keys they handed out).
    static func serials(_ snapshot: StoreSnapshot) -> [[Value?]] {
        entries(snapshot).map { ids in
            ids.map { id in
                let position = snapshot.model.descriptions[id.entity].attributePosition("serial")
                return snapshot.record(id).flatMap { record in
                    position.flatMap { position in
                        record.row.withBorrowed { row -> Value? in
                            guard case .attribute(let value) = ValueEncoding.decodeProperty(row.bytes.value(position)) else { return nil }
                            return value
                        }
                    }
                }
            }
        }
    }

    /// Values for reading `n`: repeated, some nil, -0.0 among the weights.
    static func fill(_ reading: ManagedObject, _ n: Int) throws {
        try reading.setValue(.integer(Int64(n)), forKey: "serial")
        if n % 11 != 0 { try reading.setValue(.integer(Int64((n * 7_919) % 4_001) - 2_000), forKey: "rank") }
        if n % 13 != 0 { try reading.setValue(.string("label \((n * 104_729) % 997)"), forKey: "label") }
        if n % 17 != 0 { try reading.setValue(.date(Date(timeIntervalSince1970: Double((n * 31) % 50_000) - 25_000.5)), forKey: "when") }
        if n % 3 == 0 {
            if n % 5 != 0 { try reading.setValue(.boolean(n % 2 == 0), forKey: "active") }
        } else if n % 19 != 0 {
            try reading.setValue(.double(n % 23 == 0 ? -0.0 : Double((n * 37) % 1_000) / 8), forKey: "weight")
            try reading.setValue(.float(Float((n * 13) % 200) / 4 - 25), forKey: "ratio")
        }
    }

    /// An ordered index given a builder's sorted entries merges them when they are many
    /// against it, files each when they are few, and files each when they are of another
    /// kind: the same entries in the same order either way.
    @Test(arguments: [10, 400, 3_000])
    func anIndexTakesSortedEntriesAsOneBuildWould(added: Int) {
        let value = { (key: Int) in Value.integer(Int64((key * 7_919) % 301)) }
        var whole = OrderedIndex.Builder(kind: .integer), first = OrderedIndex.Builder(kind: .integer), more = OrderedIndex.Builder(kind: .integer)
        for key in 0..<(10_000 + added) {
            whole.add(value(key), key: UInt64(key))
            if key < 10_000 { first.add(value(key), key: UInt64(key)) } else { more.add(value(key), key: UInt64(key)) }
        }
        var index = first.build()
        more.sort()
        index.insert(more, entity: 0)
        #expect(index.count == 10_000 + added && index.isPacked)
        #expect(throws: Never.self) { try index.checkInvariants() }
        #expect(index.objects(from: nil, to: nil, entity: 0) == whole.build().objects(from: nil, to: nil, entity: 0))

        var odd = OrderedIndex.Builder(kind: nil)
        odd.add(.double(10.5), key: 99_999)
        index.insert(odd, entity: 0)
        #expect(index.count == 10_001 + added && !index.isPacked)
        #expect(throws: Never.self) { try index.checkInvariants() }
    }

    /// A merge replaces only the runs its entries fall among, with runs three quarters full:
    /// the runs before and after stay the very runs an older copy of the index holds, and that
    /// copy keeps its entries. Entries below every value, among equal values in the middle,
    /// and above every value.
    @Test(arguments: [-1_000, 500, 2_000] as [Int64])
    func aMergeReplacesOnlyTheRunsItsEntriesFallAmong(near value: Int64) throws {
        var first = OrderedIndex.Builder(kind: .integer), whole = OrderedIndex.Builder(kind: .integer)
        for key in 0..<20_000 {
            let filed = Value.integer(Int64((key * 7_919) % 1_000))
            first.add(filed, key: UInt64(key))
            whole.add(filed, key: UInt64(key))
        }
        var more = OrderedIndex.Builder(kind: .integer)
        for key in 20_000..<21_000 {
            let added = Value.integer(value + Int64(key % 2))
            more.add(added, key: UInt64(key))
            whole.add(added, key: UInt64(key))
        }
        more.sort()
        let kept = first.build()
        let listed = kept.objects(from: nil, to: nil, entity: 0)
        var index = kept
        index.insert(more, entity: 0)
        #expect(index.objects(from: nil, to: nil, entity: 0) == whole.build().objects(from: nil, to: nil, entity: 0))
        #expect(kept.objects(from: nil, to: nil, entity: 0) == listed && kept.count == 20_000)
        #expect(throws: Never.self) { try index.checkInvariants() }
        guard case .packed(_, let before) = kept.storage, case .packed(_, let after) = index.storage else {
            Issue.record("the index is not packed")
            return
        }
        let shared = zip(before.runs, after.runs).prefix { $0 === $1 }.count
        let sharedAfter = zip(before.runs.reversed(), after.runs.reversed()).prefix { $0 === $1 }.count
        #expect(shared + sharedAfter >= before.runs.count - 2, "\(shared) and \(sharedAfter) of \(before.runs.count) runs kept")
        let new = after.runs[shared..<(after.runs.count - sharedAfter)]
        #expect(new.count >= 3 && new.dropLast().allSatisfy { $0.entries.count == Tuning.orderedChunkLimit * 3 / 4 })
        if value < 0 { #expect(shared == 0) }
        if value > 1_000 { #expect(sharedAfter == 0) }
        if value == 500 { #expect(shared > 0 && sharedAfter > 0) }
    }

    /// Joining two builders' sorted halves gives what one builder of every entry gives,
    /// whichever half meets a value of another kind.
    @Test(arguments: [nil, 0, 1] as [Int?])
    func joinedHalvesEqualOneBuild(oddHalf: Int?) {
        var whole = OrderedIndex.Builder(kind: .integer)
        var halves = [OrderedIndex.Builder(kind: .integer), OrderedIndex.Builder(kind: .integer)]
        for key in 0..<2_000 {
            let value: Value = key == 1_500 && oddHalf != nil ? .double(10.5) : .integer(Int64((key * 7_919) % 301))
            let half = oddHalf.map { key == 1_500 ? $0 : key % 2 } ?? key % 2
            whole.add(value, key: UInt64(key))
            halves[half].add(value, key: UInt64(key))
        }
        for half in halves.indices { halves[half].sort() }
        let joined = OrderedIndex.Builder.build(joining: halves)
        let reference = whole.build()
        #expect(joined.count == 2_000)
        #expect(joined.isPacked == (oddHalf == nil))
        #expect(throws: Never.self) { try joined.checkInvariants() }
        #expect(joined.objects(from: nil, to: nil, entity: 0) == reference.objects(from: nil, to: nil, entity: 0))
    }
}

/// Lists the chunks a visit shows it (their first keys' chunk numbers).
private struct ChunkLister: RowVisitor {
    private var chunks: [UInt64] = []
    var filter: ScanFilter? { nil }
    mutating func visit(_ id: ObjectID, _ row: BorrowedRow) {}
    mutating func visitMatches(_ matches: SlotMask, in chunk: ChunkScan) { chunks.append(chunk.firstKey >> Tuning.objectChunkShift) }
    mutating func takeResult() -> [UInt64] {
        defer { chunks = [] }
        return chunks
    }
}
