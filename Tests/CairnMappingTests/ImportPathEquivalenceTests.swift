import CairnTestSupport
import Cairn
import CairnMapping
import Foundation
import Testing

/// Flat records go through a batch upsert; records with relationships (or a hook) through a
/// context. Both must leave the same objects and report the same counts: random inputs, with
/// duplicate keys, nulls and missing keys, imported both ways, twice, compare.
@Suite struct ImportPathEquivalenceTests {
    static func randomInput(_ generator: inout SeededRandom, count: Int) -> [UInt8] {
        var records: [String] = []
        for _ in 0..<count {
            var fields = [#""ticket": \#(Int.random(in: 0..<(count / 2 + 1), using: &generator))"#]
            func maybe(_ field: String) { if Bool.random(using: &generator) { fields.append(field) } }
            maybe(Bool.random(using: &generator) ? #""name": "n\#(Int.random(in: 0..<5, using: &generator))""# : #""name": null"#)
            maybe(#""visits": "\#(Int.random(in: -3..<3, using: &generator))""#)
            maybe(#""salary": \#(Int.random(in: 0..<1000, using: &generator)).\#(Int.random(in: 0..<100, using: &generator))"#)
            maybe(#""active": \#(Bool.random(using: &generator))"#)
            maybe(
                #""hired": "20\#(Int.random(in: 10..<30, using: &generator))-01-0\#(Int.random(in: 1..<9, using: &generator))T10:00:00.\#(Int.random(in: 100..<999, using: &generator))Z""#
            )
            records.append("{" + fields.shuffled(using: &generator).joined(separator: ", ") + "}")
        }
        return Array(("[" + records.joined(separator: ",\n") + "]").utf8)
    }

    @Test(arguments: 0..<12) func bothPathsAgree(seed: Int) async throws {
        let model = try MapperFixtures.model()
        let mapping = try MapperFixtures.mapping(model)
        var generator = SeededRandom(seed: UInt64(seed))
        let first = Self.randomInput(&generator, count: 60)
        let second = Self.randomInput(&generator, count: 60)
        var viaContext = ImportOptions()
        viaContext.afterImport = { _ in }  // a hook needs objects: the context path
        var options = ImportOptions()
        if seed % 3 == 1 {
            options.nulls = .neverOverwrite
            viaContext.nulls = .neverOverwrite
        }
        if seed % 3 == 2 {
            options.updatesExisting = false
            viaContext.updatesExisting = false
        }
        let fast = Store(inMemory: model)
        let slow = Store(inMemory: model)
        for input in [first, second, second] {
            let a = try await fast.importJSON(input, into: "Person", mapping: mapping, options: options)
            let b = try await slow.importJSON(input, into: "Person", mapping: mapping, options: viaContext)
            #expect(
                a.inserted == b.inserted && a.updated == b.updated && a.unchanged == b.unchanged,
                "seed \(seed): \(a.inserted)/\(a.updated)/\(a.unchanged) against \(b.inserted)/\(b.updated)/\(b.unchanged)")
            #expect(a.objectIDs.count == b.objectIDs.count)
            #expect(a.saves == b.saves)
            let request = FetchRequest("Person", sortKeys: [SortKey("ticket")])
            #expect(try fast.viewContext.exportJSON(request, mapping: mapping) == slow.viewContext.exportJSON(request, mapping: mapping), "seed \(seed)")
        }
    }
}
