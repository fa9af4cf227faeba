import Cairn
import CairnMapping
import Foundation
import Testing

/// Import upserts records by unique key in one save, converting values as the attributes ask,
/// and reports what it did.
@Suite struct ImportTests {
    let model: Model
    let mapping: Mapping

    init() throws {
        model = try MapperFixtures.model()
        mapping = try MapperFixtures.mapping(model)
    }

    func store() -> Store { Store(inMemory: model) }

    @Test func flatRecordsImportWithTheirValuesConverted() async throws {
        let store = store()
        let result = try await store.importJSON(try MapperFixtures.json("people.json"), into: "Person", mapping: mapping)
        #expect(result.inserted == 3 && result.updated == 0 && result.unchanged == 0 && result.records == 3 && result.saves == 1)
        let people = try store.viewContext.objects(with: result.objectIDs)
        #expect(try people.map { try $0.value(forKey: "ticket", as: Int.self) } == [1001, 1002, 1003])
        let grace = people[1]
        #expect(try grace.value(forKey: "salary", as: Decimal.self) == Decimal(string: "6100"))
        #expect(try grace.value(forKey: "active", as: Bool.self) == false)
        #expect(try grace.value(forKey: "visits", as: Int.self) == 3)
        // 17:05:12.250 at +01:00 is 16:05:12.250 UTC.
        #expect(try grace.value(forKey: "hired", as: Date.self) == ISO8601DateParser.date("2020-11-30T16:05:12.250Z"))
        #expect(try people[0].value(forKey: "salary", as: Decimal.self) == Decimal(string: "5400.50"))
        #expect(try people[0].value(forKey: "active", as: Bool.self) == true)
        #expect(try people[2].value(forKey: "hired", as: Date.self) == ISO8601DateParser.date("2021-01-15T00:00:00Z"))
        #expect(try people[2].value(forKey: "salary", as: Decimal.self) == Decimal(string: "4999.99"), "a decimal is read exactly")
    }

    @Test func theSameKeyUpdatesInPlaceAndAnIdenticalReimportWritesNothing() async throws {
        let store = store()
        let first = try await store.importJSON(try MapperFixtures.json("people.json"), into: "Person", mapping: mapping)
        let lsn = store.lastSaveLSN
        let again = try await store.importJSON(try MapperFixtures.json("people.json"), into: "Person", mapping: mapping)
        #expect(again.unchanged == 3 && again.inserted == 0 && again.updated == 0 && again.saves == 0)
        #expect(store.lastSaveLSN == lsn, "an identical re-import appends nothing")
        #expect(again.objectIDs == first.objectIDs)
        let changed = try await store.importJSON(
            MapperFixtures.bytes(#"[{"ticket": 1002, "name": "Rear Admiral Hopper"}]"#), into: "Person", mapping: mapping)
        #expect(changed.updated == 1 && changed.inserted == 0 && changed.objectIDs == [first.objectIDs[1]])
        let grace = try #require(store.viewContext.object(with: first.objectIDs[1]))
        #expect(try grace.value(forKey: "name", as: String.self) == "Rear Admiral Hopper")
        #expect(try grace.value(forKey: "visits", as: Int.self) == 3, "a missing key leaves the value alone")
        #expect(try store.viewContext.count(FetchRequest("Person")) == 3)
    }

    @Test func duplicateKeysInOneInputCollapseWithLaterValuesApplied() async throws {
        let store = store()
        let input = #"[{"ticket": 7, "name": "First", "visits": 1}, {"ticket": 8, "name": "Other"}, {"ticket": 7, "name": "Second"}]"#
        let result = try await store.importJSON(MapperFixtures.bytes(input), into: "Person", mapping: mapping)
        #expect(result.objectIDs.count == 2 && result.inserted == 2)
        let seven = try #require(try store.viewContext.one("Person", "ticket", 7))
        #expect(try seven.value(forKey: "name", as: String.self) == "Second")
        #expect(try seven.value(forKey: "visits", as: Int.self) == 1)
        #expect(result.objectIDs[0] == seven.objectID, "input order, first appearance")
    }

    @Test func missingNullAndNullNeverOverwrites() async throws {
        let store = store()
        _ = try await store.importJSON(MapperFixtures.bytes(#"{"ticket": 1, "name": "Ann", "nickname": "A", "visits": 4}"#), into: "Person", mapping: mapping)
        let view = store.viewContext
        // Missing leaves alone; null clears.
        _ = try await store.importJSON(MapperFixtures.bytes(#"{"ticket": 1, "nickname": null}"#), into: "Person", mapping: mapping)
        var ann = try #require(try view.one("Person", "ticket", 1))
        #expect(try ann.value(forKey: "name", as: String?.self) == "Ann")
        #expect(try ann.value(forKey: "nickname", as: String?.self) == nil)
        // Null never overwrites.
        var options = ImportOptions()
        options.nulls = .neverOverwrite
        _ = try await store.importJSON(MapperFixtures.bytes(#"{"ticket": 1, "name": null, "visits": 5}"#), into: "Person", mapping: mapping, options: options)
        ann = try #require(try view.one("Person", "ticket", 1))
        #expect(try ann.value(forKey: "name", as: String?.self) == "Ann")
        #expect(try ann.value(forKey: "visits", as: Int?.self) == 5)
        // Missing means null.
        options = ImportOptions()
        options.missingKeys = .clear
        _ = try await store.importJSON(MapperFixtures.bytes(#"{"ticket": 1, "visits": 6}"#), into: "Person", mapping: mapping, options: options)
        ann = try #require(try view.one("Person", "ticket", 1))
        #expect(try ann.value(forKey: "name", as: String?.self) == nil)
        #expect(try ann.value(forKey: "visits", as: Int?.self) == 6)
    }

    @Test func aRecordWithoutItsKeyFailsTheImportOrIsSkippedWhenLenient() async throws {
        let store = store()
        let input = MapperFixtures.bytes(#"[{"ticket": 1, "name": "A"}, {"name": "no key"}, {"ticket": 3, "name": "C"}]"#)
        await #expect {
            try await store.importJSON(input, into: "Person", mapping: mapping)
        } throws: { error in
            guard let error = error as? MappingError else { return false }
            return error.code == .missingKey && error.path == "$[1]" && error.property == "ticket"
        }
        #expect(try store.viewContext.count(FetchRequest("Person")) == 0, "strict: nothing is written")
        var options = ImportOptions()
        options.lenient = true
        let result = try await store.importJSON(input, into: "Person", mapping: mapping, options: options)
        #expect(result.inserted == 2 && result.warnings.count == 1 && result.warnings[0].path == "$[1]")
    }

    @Test func valuesThatDoNotFitNameTheirPath() async throws {
        let store = store()
        func failure(_ text: String) async -> MappingError? {
            do {
                _ = try await store.importJSON(MapperFixtures.bytes(text), into: "Person", mapping: mapping)
                return nil
            } catch {
                return error as? MappingError
            }
        }
        let array = await failure(#"[{"ticket": 1}, {"ticket": 2, "name": ["a"]}]"#)
        #expect(array?.code == .invalidValue && array?.path == "$[1].name" && array?.message.contains("an array where a string belongs") == true)
        let object = await failure(#"[{"ticket": 1, "visits": {"n": 1}}]"#)
        #expect(object?.path == "$[0].visits" && object?.message.contains("an object") == true)
        let range = await failure(#"[{"ticket": 1, "visits": 3000000000}]"#)
        #expect(range?.message.contains("out of the range of integer32") == true)
        let date = await failure(#"[{"ticket": 1, "hired": "yesterday"}]"#)
        #expect(date?.path == "$[0].hired" && date?.message.contains("\"yesterday\" is not a date") == true)
        let fraction = await failure(#"[{"ticket": 1.5}]"#)
        #expect(fraction?.message.contains("not an integer") == true)
        let invalid = await failure("[{\"ticket\": 1},\n {\"ticket\": 2,}]")
        #expect(invalid?.code == .invalidJSON && invalid?.message.contains("line 2") == true)
        #expect(try store.viewContext.count(FetchRequest("Person")) == 0)
        // Lenient: the field is set to nil and the warning says where.
        var options = ImportOptions()
        options.lenient = true
        let result = try await store.importJSON(
            MapperFixtures.bytes(#"[{"ticket": 1, "name": ["a"], "visits": 2}]"#), into: "Person", mapping: mapping, options: options)
        #expect(result.inserted == 1 && result.warnings.map(\.path) == ["$[0].name"])
    }

    @Test func inputShapes() async throws {
        let store = store()
        // One object; JSON Lines; records under a root key path.
        #expect(try await store.importJSON(MapperFixtures.bytes(#"{"ticket": 1}"#), into: "Person", mapping: mapping).inserted == 1)
        let lines = "{\"ticket\": 2}\n{\"ticket\": 3}\n"
        #expect(try await store.importJSON(MapperFixtures.bytes(lines), into: "Person", mapping: mapping).inserted == 2)
        var options = ImportOptions()
        options.root = "data.people"
        let nested = #"{"meta": {"page": 1}, "data": {"count": 2, "people": [{"ticket": 4}, {"ticket": 5}], "after": [1, 2]}}"#
        #expect(try await store.importJSON(MapperFixtures.bytes(nested), into: "Person", mapping: mapping, options: options).inserted == 2)
        await #expect(throws: MappingError.self) {
            try await store.importJSON(MapperFixtures.bytes(#"{"data": {}}"#), into: "Person", mapping: mapping, options: options)
        }
        #expect(try store.viewContext.count(FetchRequest("Person")) == 5)
    }

    @Test func theUniqueKeyCanComeThroughAKeyPath() async throws {
        let store = store()
        let keyed = try Mapping(model: model) {
            EntityMapping("Person") { AttributeMap("ticket", from: "meta.id") }
        }
        let input = #"[{"meta": {"id": 5}, "name": "A"}, {"name": "B", "meta": {"id": 5, "x": [1]}}]"#
        let result = try await store.importJSON(MapperFixtures.bytes(input), into: "Person", mapping: keyed)
        #expect(result.inserted == 1 && result.objectIDs.count == 1)
        #expect(try store.viewContext.one("Person", "ticket", 5)?.value(forKey: "name", as: String.self) == "B")
    }

    @Test func existingObjectsCanBeLeftUntouched() async throws {
        let store = store()
        _ = try await store.importJSON(MapperFixtures.bytes(#"{"ticket": 1, "name": "A"}"#), into: "Person", mapping: mapping)
        var options = ImportOptions()
        options.updatesExisting = false
        let result = try await store.importJSON(
            MapperFixtures.bytes(#"[{"ticket": 1, "name": "B"}, {"ticket": 2, "name": "C"}]"#), into: "Person", mapping: mapping, options: options)
        #expect(result.inserted == 1 && result.unchanged == 1)
        #expect(try store.viewContext.one("Person", "ticket", 1)?.value(forKey: "name", as: String.self) == "A")
    }
}
