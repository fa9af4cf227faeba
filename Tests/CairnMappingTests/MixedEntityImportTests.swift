import Cairn
import CairnMapping
import Foundation
import Testing

/// A file of several entities imports in one run, each record's entity named by a
/// discriminator (a Django fixture's `model`, a mapping file's key), references by key resolved
/// whatever the order of the records; a type field picks a sub-entity; a value that names no
/// entity fails naming its JSON path and the record's offset.
@Suite struct MixedEntityImportTests {
    static let models = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/Models")

    static func chinook() throws -> Model { try Model(contentsOf: models.appendingPathComponent("Chinook.json").path) }

    static func djangoMapping(_ model: Model) throws -> Mapping { try Mapping(model: model, keyStyle: .snakeCase, layout: .django) }

    @Test func aDjangoFixtureImportsEveryEntityInOneRunWithForwardReferences() async throws {
        let model = try Self.chinook()
        let store = Store(inMemory: model)
        let result = try await store.importJSON(MapperFixtures.json("chinook-django.json"), mapping: try Self.djangoMapping(model))
        #expect(result.records == 12 && result.inserted == 12 && result.saves == 1, "\(result)")
        let view = store.viewContext
        for (entity, count) in [("Artist", 2), ("Album", 3), ("Genre", 1), ("Track", 3), ("Playlist", 1), ("PlaylistTrack", 2)] {
            #expect(try view.count(FetchRequest(entity)) == count, "\(entity)")
        }
        // Records named targets that came later in the file.
        let restless = try #require(try view.one("Album", "albumId", 3))
        #expect(try restless.value(forKey: "title", as: String.self) == "Restless and Wild")
        #expect(try restless.object(forKey: "artist")?.value(forKey: "name", as: String.self) == "Accept")
        let shark = try #require(try view.one("Track", "trackId", 3))
        #expect(try shark.object(forKey: "album") == restless)
        #expect(try shark.object(forKey: "genre")?.value(forKey: "name", as: String.self) == "Rock")
        #expect(try shark.value(forKey: "unitPrice", as: Decimal.self) == Decimal(string: "0.99"))
        let join = try #require(try view.one("PlaylistTrack", "playlistTrackId", 1))
        #expect(try join.object(forKey: "track") == shark)
        #expect(try join.object(forKey: "playlist")?.value(forKey: "name", as: String.self) == "Music")
        let playlist = try #require(try view.one("Playlist", "playlistId", 1))
        #expect(Set(try playlist.objects(forKey: "favourites").map { try $0.value(forKey: "trackId", as: Int.self) }) == [1, 3], "a to-many as keys")
        // Again: nothing changes, nothing is written.
        let lsn = store.lastSaveLSN
        let again = try await store.importJSON(MapperFixtures.json("chinook-django.json"), mapping: try Self.djangoMapping(model))
        #expect(again.unchanged == 12 && again.inserted == 0 && again.updated == 0 && store.lastSaveLSN == lsn, "\(again)")
    }

    @Test func anImportIntoOneEntityTakesOnlyItsFamilysRecords() async throws {
        let model = try Self.chinook()
        let store = Store(inMemory: model)
        let artists = #"[{"model": "chinook.artist", "pk": 7, "fields": {"name": "Aerosmith"}}, {"pk": 8, "fields": {"name": "No model"}}]"#
        let result = try await store.importJSON(MapperFixtures.bytes(artists), into: "Artist", mapping: try Self.djangoMapping(model))
        #expect(result.inserted == 2, "a record without model is the entity imported")
        let album = #"[{"model": "chinook.album", "pk": 1, "fields": {"title": "T"}}]"#
        await #expect(throws: MappingError.self) {
            try await store.importJSON(MapperFixtures.bytes(album), into: "Artist", mapping: try Self.djangoMapping(model))
        }
    }

    @Test func aModelNameThatNamesNoEntityFailsNamingThePathAndTheRecordsOffset() async throws {
        let model = try Self.chinook()
        let store = Store(inMemory: model)
        let text = #"[{"model": "chinook.artist", "pk": 1, "fields": {"name": "A"}}, {"model": "chinook.robot", "pk": 2, "fields": {}}]"#
        do {
            _ = try await store.importJSON(MapperFixtures.bytes(text), mapping: try Self.djangoMapping(model))
            Issue.record("an unknown model imported")
        } catch let error as MappingError {
            #expect(error.code == .unknownName && error.path == "$[1].model", "\(error)")
            let robot = try #require(text.range(of: #"{"model": "chinook.robot""#))
            #expect(error.offset == text.utf8.distance(from: text.startIndex, to: robot.lowerBound), "the record's first byte")
            #expect(error.message.contains("chinook.robot"))
        }
        #expect(try store.viewContext.count(FetchRequest("Artist")) == 0, "nothing is written")
        // Without the key and without an entity to fall back on.
        await #expect(throws: MappingError.self) {
            try await store.importJSON(MapperFixtures.bytes(#"[{"pk": 1, "fields": {}}]"#), mapping: try Self.djangoMapping(model))
        }
        // No entity and no discriminator: nothing says what the records are.
        await #expect(throws: MappingError.self) { try await store.importJSON(MapperFixtures.bytes("[]"), mapping: try Mapping(model: model)) }
    }

    @Test func aMappingFilesDiscriminatorImportsAMixedFileWithForwardReferences() async throws {
        let model = try MapperFixtures.model()
        let file = #"""
            {"discriminator": {"key": "kind", "entities": {"person": "Person"}},
             "entities": {"Person": {"attributes": {"ticket": "ticket_number"}, "relationships": {"employer": "employer_code"}}}}
            """#
        let mapping = try Mapping(model: model, file: Array(file.utf8))
        let records = #"""
            [{"kind": "person", "ticket_number": 1, "name": "Ada", "employer_code": "ACME"},
             {"kind": "COMPANY", "code": "ACME", "name": "Acme"}]
            """#
        let store = Store(inMemory: model)
        let result = try await store.importJSON(MapperFixtures.bytes(records), mapping: mapping)
        #expect(result.inserted == 2)
        let ada = try #require(try store.viewContext.one("Person", "ticket", 1))
        #expect(try ada.object(forKey: "employer")?.value(forKey: "name", as: String.self) == "Acme", "a listed value, then an entity's name in any case")
    }

    static func vehicles() throws -> Model {
        try Model {
            Entity("Vehicle") {
                Attribute("plate", .string, optional: false)
                Attribute("wheels", .integer16)
                Unique("plate")
            }
            Entity("Car", parent: "Vehicle") { Attribute("seats", .integer16) }
            Entity("Truck", parent: "Vehicle") { Attribute("load", .double) }
            Entity("Garage") {
                Attribute("name", .string)
                Relationship("vehicles", to: "Vehicle", .toMany(ordered: false))
                Unique("name")
            }
        }
    }

    @Test(arguments: [false, true]) func aTypeFieldPicksTheSubEntity(fromFile: Bool) async throws {
        let model = try Self.vehicles()
        let mapping =
            fromFile
            ? try Mapping(model: model, file: Array(#"{"entities": {"Vehicle": {"discriminator": {"key": "type", "entities": {"car": "Car"}}}}}"#.utf8))
            : try Mapping(model: model) { EntityMapping("Vehicle", discriminator: EntityDiscriminator(key: "type", entities: ["car": "Car"])) }
        let store = Store(inMemory: model)
        let records = #"""
            [{"type": "car", "plate": "A", "seats": 5}, {"type": "truck", "plate": "B", "load": 7.5}, {"plate": "C", "wheels": 3}]
            """#
        _ = try await store.importJSON(MapperFixtures.bytes(records), into: "Vehicle", mapping: mapping)
        let view = store.viewContext
        let car = try #require(try view.one("Vehicle", "plate", "A"))
        #expect(car.entity.name == "Car")
        #expect(try car.value(forKey: "seats", as: Int.self) == 5)
        let truck = try #require(try view.one("Vehicle", "plate", "B"))
        #expect(truck.entity.name == "Truck")
        #expect(try truck.value(forKey: "load", as: Double.self) == 7.5)
        #expect(try view.one("Vehicle", "plate", "C")?.entity.name == "Vehicle", "no type: the entity imported")
        // Nested records too.
        let garage = #"{"name": "G", "vehicles": [{"type": "car", "plate": "D"}, {"type": "truck", "plate": "E"}]}"#
        _ = try await store.importJSON(MapperFixtures.bytes(garage), into: "Garage", mapping: mapping)
        #expect(try view.one("Vehicle", "plate", "D")?.entity.name == "Car")
        #expect(try view.one("Vehicle", "plate", "E")?.entity.name == "Truck")
        // A type outside the family, or naming nothing.
        for wrong in [#"{"type": "garage", "plate": "F"}"#, #"{"type": "boat", "plate": "F"}"#] {
            await #expect(throws: MappingError.self) { try await store.importJSON(MapperFixtures.bytes(wrong), into: "Vehicle", mapping: mapping) }
        }
    }

    @Test func aDiscriminatorNamingAnEntityOutsideTheFamilyIsRefusedWhenTheMappingIsBuilt() throws {
        let model = try Self.vehicles()
        #expect(throws: MappingError.self) {
            try Mapping(model: model) { EntityMapping("Vehicle", discriminator: EntityDiscriminator(key: "type", entities: ["g": "Garage"])) }
        }
        #expect(throws: MappingError.self) { try Mapping(model: model, discriminator: EntityDiscriminator(key: "k", entities: ["x": "Nope"])) }
        #expect(throws: MappingError.self) { try Mapping(model: model, file: Array(#"{"layout": "rails"}"#.utf8)) }
    }
}
