import Cairn
import CairnMapping
import Foundation
import Testing

/// Groot's and Sync's import by identifiers: keys as the records of an entity (`["R", "G"]`) or
/// as a to-many relationship's value (`"lines": ["R", "G"]`). A key names the object holding
/// it; one nothing holds fails the import, unless `insertsMissingReferences` (an import option,
/// or the mapping's) makes an object holding only that key.
@Suite struct ImportByIdentifiersTests {
    static func options(inserting: Bool, lenient: Bool = false) -> ImportOptions {
        var options = ImportOptions()
        options.insertsMissingReferences = inserting
        options.lenient = lenient
        return options
    }

    @Test func keysAsRecordsNameObjectsAndMakeTheMissingOnlyWhenAsked() async throws {
        let model = try MapperFixtures.model()
        let store = Store(inMemory: model)
        let mapping = try Mapping(model: model)
        let keys = MapperFixtures.bytes(#"["R", "G"]"#)
        do {
            _ = try await store.importJSON(keys, into: "Line", mapping: mapping)
            Issue.record("keys nothing holds imported without the option")
        } catch let error as MappingError {
            #expect(error.code == .unresolvedReference && error.path == "$[0]" && error.offset == 1, "\(error)")
        }
        let skipped = try await store.importJSON(keys, into: "Line", mapping: mapping, options: Self.options(inserting: false, lenient: true))
        #expect(skipped.inserted == 0 && skipped.warnings.count == 2, "\(skipped.warnings)")

        let made = try await store.importJSON(keys, into: "Line", mapping: mapping, options: Self.options(inserting: true))
        #expect(made.inserted == 2 && made.objectIDs.count == 2)
        let red = try #require(try store.viewContext.one("Line", "code", "R"))
        #expect(try red.value(forKey: "name", as: String?.self) == nil, "only its key")
        _ = try await store.importJSON(MapperFixtures.bytes(#"{"code": "R", "name": "Red"}"#), into: "Line", mapping: mapping)
        // A key alone names the object and changes nothing, whatever the options say of missing keys.
        var clearing = ImportOptions()
        clearing.missingKeys = .clear
        let named = try await store.importJSON(MapperFixtures.bytes(#"["R", "G"]"#), into: "Line", mapping: mapping, options: clearing)
        #expect(named.unchanged == 2 && named.inserted == 0 && named.objectIDs.count == 2, "\(named)")
        #expect(try store.viewContext.one("Line", "code", "R")?.value(forKey: "name", as: String.self) == "Red")
    }

    @Test(arguments: [false, true]) func keysAsAToManyValueMakeTheMissingWithTheMappingFilesOption(fromFile: Bool) async throws {
        let model = try MapperFixtures.model()
        let station = MapperFixtures.bytes(#"[{"stopID": 1, "name": "Clark", "lines": ["R", "G"]}]"#)
        let strict = Store(inMemory: model)
        await #expect(throws: MappingError.self) { try await strict.importJSON(station, into: "Station", mapping: try Mapping(model: model)) }

        let store = Store(inMemory: model)
        let result: ImportResult
        if fromFile {
            let mapping = try Mapping(model: model, file: Array(#"{"insertsMissingReferences": true}"#.utf8))
            #expect(mapping.insertsMissingReferences)
            result = try await store.importJSON(station, into: "Station", mapping: mapping)
        } else {
            result = try await store.importJSON(station, into: "Station", mapping: try Mapping(model: model), options: Self.options(inserting: true))
        }
        #expect(result.inserted == 3, "\(result)")
        let clark = try #require(try store.viewContext.one("Station", "stopID", 1))
        #expect(Set(try clark.objects(forKey: "lines").map { try $0.value(forKey: "code", as: String.self) }) == ["R", "G"])
    }

    @Test func aKeyThatDoesNotFitIsSkippedWhenLenient() async throws {
        let model = try MapperFixtures.model()
        let store = Store(inMemory: model)
        let mapping = try Mapping(model: model)
        let keys = MapperFixtures.bytes(#"[1.5, "x", 3]"#)
        await #expect {
            _ = try await store.importJSON(keys, into: "Person", mapping: mapping, options: Self.options(inserting: true))
        } throws: { error in
            (error as? MappingError)?.code == .invalidValue && (error as? MappingError)?.path == "$[0]"
        }
        let lenient = try await store.importJSON(keys, into: "Person", mapping: mapping, options: Self.options(inserting: true, lenient: true))
        #expect(lenient.inserted == 1, "only the key that fits: \(lenient.warnings)")
        #expect(lenient.warnings.count >= 2 && lenient.warnings[0].path == "$[0]", "\(lenient.warnings)")
    }
}
