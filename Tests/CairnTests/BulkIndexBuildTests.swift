import CairnTestSupport
import Foundation
import Testing

@testable import Cairn

/// The attribute indexes a replay builds at its end, each half of the objects gathered and
/// sorted on its own thread and the halves merged (``AttributeIndex/built(from:layout:)``): the
/// same entries, in the same order, as the indexes the saves changed entry by entry.
@Suite struct BulkIndexBuildTests {
    static func model() throws -> Model {
        try Model {
            Entity("Reading", abstract: true) {
                Attribute("rank", .integer64, indexed: true)
                Attribute("label", .string, indexed: true)
                Attribute("when", .date, indexed: true)
            }
            Entity("Sensor", parent: "Reading") {
                Attribute("weight", .double, indexed: true)
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
        #expect(count >= 3 * Tuning.parallelScanObjects / 2)
        try await store.performBackgroundTask { context in
            for n in 0..<count {
                let reading = try context.insert(n % 3 == 0 ? "Probe" : "Sensor")
                if n % 11 != 0 { try reading.setValue(.integer(Int64((n * 7_919) % 4_001) - 2_000), forKey: "rank") }
                if n % 13 != 0 { try reading.setValue(.string("label \((n * 104_729) % 997)"), forKey: "label") }
                if n % 17 != 0 { try reading.setValue(.date(Date(timeIntervalSince1970: Double((n * 31) % 50_000) - 25_000.5)), forKey: "when") }
                if n % 3 == 0 {
                    if n % 5 != 0 { try reading.setValue(.boolean(n % 2 == 0), forKey: "active") }
                } else if n % 19 != 0 {
                    try reading.setValue(.double(n % 23 == 0 ? -0.0 : Double((n * 37) % 1_000) / 8), forKey: "weight")
                }
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
        // Four indexed attributes on each of the two concrete entities; none on the abstract one.
        #expect(expected.filter { $0.count > count / 10 }.count == 8, "\(expected.map(\.count))")
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
