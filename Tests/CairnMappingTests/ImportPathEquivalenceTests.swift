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
    /// Entries with a required label: random records that leave it null, or leave it out of a
    /// new entry, with duplicate keys.
    static func entryModel() throws -> Model {
        try Model {
            Entity("Entry") {
                Attribute("id", .integer64)
                Attribute("label", .string, optional: false)
                Attribute("note", .string)
                Unique("id")
            }
        }
    }

    static func randomEntries(_ generator: inout SeededRandom, count: Int) -> [UInt8] {
        var records: [String] = []
        for _ in 0..<count {
            var fields = [#""id": \#(Int.random(in: 0..<(count / 3 + 1), using: &generator))"#]
            switch Int.random(in: 0..<4, using: &generator) {
            case 0: fields.append(#""label": null"#)
            case 1: break
            default: fields.append(#""label": "l\#(Int.random(in: 0..<3, using: &generator))""#)
            }
            if Bool.random(using: &generator) { fields.append(#""note": "n\#(Int.random(in: 0..<3, using: &generator))""#) }
            records.append("{" + fields.shuffled(using: &generator).joined(separator: ", ") + "}")
        }
        return Array(("[" + records.joined(separator: ",\n") + "]").utf8)
    }

    /// A lenient import skips the same records on both paths, reports the same counts, objects
    /// and warnings, and stores the same objects.
    @Test(arguments: 0..<16) func bothPathsSkipTheSameRecords(seed: Int) async throws {
        let model = try Self.entryModel()
        let mapping = try Mapping(model: model)
        var generator = SeededRandom(seed: UInt64(seed))
        var options = ImportOptions()
        options.lenient = true
        if seed % 4 == 1 { options.nulls = .neverOverwrite }
        if seed % 4 == 2 { options.updatesExisting = false }
        var viaContext = options
        viaContext.afterImport = { _ in }  // a hook needs objects: the context path
        let fast = Store(inMemory: model)
        let slow = Store(inMemory: model)
        let inputs = [Self.randomEntries(&generator, count: 40), Self.randomEntries(&generator, count: 40)]
        for (step, input) in [inputs[0], inputs[1], inputs[1]].enumerated() {
            let place = "seed \(seed), import \(step)"
            let a = try await fast.importJSON(input, into: "Entry", mapping: mapping, options: options)
            let b = try await slow.importJSON(input, into: "Entry", mapping: mapping, options: viaContext)
            #expect(
                a.inserted == b.inserted && a.updated == b.updated && a.unchanged == b.unchanged,
                "\(place): \(a.inserted)/\(a.updated)/\(a.unchanged) against \(b.inserted)/\(b.updated)/\(b.unchanged)")
            #expect(a.warnings.map(\.path).sorted() == b.warnings.map(\.path).sorted(), "\(place): \(a.warnings) against \(b.warnings)")
            let keys = { (store: Store, ids: [ObjectID]) in try store.viewContext.objects(with: ids).map { $0["id"] } }
            #expect(try keys(fast, a.objectIDs) == keys(slow, b.objectIDs), "\(place): objectIDs")
            let request = FetchRequest("Entry", sortKeys: [SortKey("id")])
            #expect(try fast.viewContext.exportJSON(request, mapping: mapping) == slow.viewContext.exportJSON(request, mapping: mapping), "\(place)")
        }
    }
    /// A strict import fails with the same error on both paths: the record's path and offset.
    @Test func bothPathsNameTheSameRecordWhenStrict() async throws {
        let model = try Self.entryModel()
        let input = MapperFixtures.bytes(#"[{"id": 1, "label": "a"},  {"id": 1, "label": null}, {"id": 2, "label": "b"}]"#)
        var errors: [MappingError] = []
        for viaContext in [false, true] {
            var options = ImportOptions()
            if viaContext { options.afterImport = { _ in } }
            do {
                _ = try await Store(inMemory: model).importJSON(input, into: "Entry", options: options)
                Issue.record("a record leaving a required label null was imported")
            } catch let error as MappingError {
                errors.append(error)
            }
        }
        #expect(
            errors.count == 2 && errors.allSatisfy { $0.path == "$[1]" && $0.offset == 27 && $0.code == .missingValue },
            "\(errors.map { "\($0.offset ?? -1) \($0)" })")
        #expect(Set(errors.map(\.description)).count == 1, "\(errors)")
    }
}
