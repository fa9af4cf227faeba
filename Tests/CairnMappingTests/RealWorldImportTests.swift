import Cairn
import CairnMapping
import Foundation
import Testing

/// The models and JSON of Vokoder, Modelmatic and MagicalRecord in `../shared/real-world`,
/// imported through their models' userInfo (or a mapping written for them), checked against what
/// the test computes from the JSON itself. Skipped, with a message, when the folder is absent.
@Suite struct RealWorldImportTests {
    static let folder = MapperFixtures.folder.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("shared/real-world").path

    static func available(_ path: String) -> Bool {
        guard FileManager.default.fileExists(atPath: folder + "/" + path) else {
            print("skipped: \(folder)/\(path) is absent (real-world inputs live beside the project, not in it)")
            return false
        }
        return true
    }

    static func bytes(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/" + path))) }

    static func jsonObject(_ path: String) throws -> Any { try JSONSerialization.jsonObject(with: Data(try bytes(path))) }

    static func model(_ path: String) throws -> Model { try Model(contentsOf: folder + "/" + path) }

    @Test func vokoderStationsAndStops() async throws {
        guard Self.available("vokoder/CTA_stations.json") else { return }
        let model = try Self.model("vokoder/CoreDataModel.xcdatamodeld")
        // Vokoder's sample maps the stops file in code; here, a mapping file says the same.
        let file = """
            {"entities": {
              "Station": {"identity": "identifier", "mapsUnlisted": false, "attributes": {
                 "identifier": "MAP_ID", "name": "STATION_NAME", "descriptiveName": "STATION_DESCRIPTIVE_NAME",
                 "accessible": "ADA", "locationString": "Location"}},
              "Stop": {"identity": "identifier", "mapsUnlisted": false,
                 "attributes": {"identifier": "STOP_ID", "name": "STOP_NAME", "directionString": "DIRECTION_ID"},
                 "relationships": {"station": {"key": "MAP_ID", "policy": "merge"}}}
            }}
            """
        let mapping = try Mapping(model: model, file: Array(file.utf8))
        let store = Store(inMemory: model)
        let input = try Self.bytes("vokoder/CTA_stations.json")
        let records = try #require(try Self.jsonObject("vokoder/CTA_stations.json") as? [[String: Any]])
        let stations = try await store.importJSON(input, into: "Station", mapping: mapping)
        let stops = try await store.importJSON(input, into: "Stop", mapping: mapping)
        let mapIDs = Set(records.compactMap { $0["MAP_ID"] as? Int })
        let stopIDs = Set(records.compactMap { $0["STOP_ID"] as? Int })
        #expect(stations.inserted == mapIDs.count && stations.objectIDs.count == mapIDs.count)
        #expect(stops.inserted == stopIDs.count)
        let view = store.viewContext
        for record in records.prefix(40) {
            let stop = try #require(try view.one("Stop", "identifier", .integer(Int64(record["STOP_ID"] as! Int))))
            #expect(stop["name"] == .string(record["STOP_NAME"] as! String))
            let station = try #require(try stop.object(forKey: "station"))
            #expect(try station.value(forKey: "identifier", as: Int.self) == record["MAP_ID"] as? Int)
            #expect(try station.value(forKey: "accessible", as: Bool.self) == record["ADA"] as? Bool)
            let expectedStops = records.filter { $0["MAP_ID"] as? Int == record["MAP_ID"] as? Int }.count
            #expect(try station.objects(forKey: "stops").count == expectedStops)
        }
        let again = try await store.importJSON(input, into: "Stop", mapping: mapping)
        #expect(again.unchanged == stopIDs.count && again.saves == 0)
    }

    @Test func modelmaticAuthorsThroughJSONKeyPath() async throws {
        guard Self.available("modelmatic/Authors.json") else { return }
        let model = try Self.model("modelmatic/Authors.xcdatamodeld")
        // Modelmatic's transformable attributes name value transformers the app registers.
        MappingTransformers.register(
            name: "Date",
            import: { json in
                guard case .string(let text) = json, let date = ISO8601DateParser.date(text) else { throw MappingError(.invalidValue, "not a date") }
                return .binary(Array(withUnsafeBytes(of: date.timeIntervalSince1970.bitPattern) { Array($0) }))
            }, export: { _ in .null })
        MappingTransformers.register(
            name: "StringArray",
            import: { json in
                guard case .string(let text) = json else { throw MappingError(.invalidValue, "not a list") }
                return .binary(Array(text.utf8))
            }, export: { _ in .null })
        let mapping = try Mapping(model: model)
        let store = Store(inMemory: model)
        var options = ImportOptions()
        options.root = "authors"
        let result = try await store.importJSON(try Self.bytes("modelmatic/Authors.json"), into: "Author", mapping: mapping, options: options)
        let root = try #require(try Self.jsonObject("modelmatic/Authors.json") as? [String: Any])
        let authors = try #require(root["authors"] as? [[String: Any]])
        let books = authors.flatMap { ($0["books"] as? [[String: Any]]) ?? [] }
        #expect(result.objectIDs.count == authors.count)
        let view = store.viewContext
        #expect(try view.count(FetchRequest("Book")) == books.count)
        for (author, object) in zip(authors, try view.objects(with: result.objectIDs)) {
            #expect(try object.value(forKey: "authorId", as: Int.self) == Int(author["author_id"] as! String))
            #expect(object["lastName"] == .string(author["lastName"] as! String))
            let given = (author["books"] as? [[String: Any]]) ?? []
            let imported = try object.objects(forKey: "books")
            #expect(imported.count == given.count)
            for book in imported {
                let id = try book.value(forKey: "bookId", as: Int.self)
                let source = try #require(given.first { Int($0["book_id"] as! String) == id })
                let price = Double(((source["pricing"] as? [String: Any])?["retail_price"] as? String) ?? "")
                let retail = try book.value(forKey: "retailPrice", as: Double?.self)
                #expect(retail == price ?? 0, "jsonKeyPath pricing.retail_price (the model's default, 0, when absent)")
                if let price {
                    #expect(try book.object(forKey: "pricing")?.value(forKey: "retailPrice", as: Double?.self) == price)
                } else {
                    #expect(try book.object(forKey: "pricing") == nil)
                }
                #expect(try book.object(forKey: "author") == object)
            }
        }
    }

    @Test func magicalRecordFixtures() async throws {
        guard Self.available("magicalrecord/TestModel.xcdatamodeld") else { return }
        let model = try Self.model("magicalrecord/TestModel.xcdatamodeld")
        // Its MappedEntity names `mapped` as its key, an attribute it lacks: refused, naming both.
        #expect(throws: MappingError.self) { try Mapping(model: model) }
        let mapping = try Mapping(model: model) {
            EntityMapping("MappedEntity", identity: "testMappedEntityID")
            // Its first fixture has no testPrimaryKey (its userInfo key): keyless, every record inserts.
            EntityMapping("SingleEntityRelatedToManyMappedEntitiesUsingMappedPrimaryKey", identity: [])
            EntityMapping("SingleEntityWithNoRelationships") { Ignore("colorTestAttribute") }
        }
        let store = Store(inMemory: model)
        let flat = try await store.importJSON(
            try Self.bytes("magicalrecord/SingleEntityWithNoRelationships.json"), into: "SingleEntityWithNoRelationships", mapping: mapping)
        let source = try #require(try Self.jsonObject("magicalrecord/SingleEntityWithNoRelationships.json") as? [String: Any])
        let object = try #require(try store.viewContext.objects(with: flat.objectIDs).first)
        #expect(try object.value(forKey: "int64TestAttribute", as: Int64.self) == (source["int64TestAttribute"] as! NSNumber).int64Value)
        #expect(try object.value(forKey: "decimalTestAttribute", as: Decimal.self) == Decimal(string: "1.2"))
        #expect(try object.value(forKey: "floatTestAttribute", as: Float.self) == 10_000_000_000)
        #expect(try object.value(forKey: "booleanAsStringTestAttribute", as: Bool.self) == true)
        #expect(try object.value(forKey: "numberAsStringTestAttribute", as: String.self) == "10248909829")
        #expect(try object.value(forKey: "mappedStringAttribute", as: String.self) == "Mapped value")
        #expect(try object.value(forKey: "nullTestAttribute", as: Int?.self) == nil)
        #expect(try object.value(forKey: "notInJsonAttribute", as: String.self) == "Set From Core Data Model Editor")
        #expect(try object.value(forKey: "dateTestAttribute", as: Date.self) == ISO8601DateParser.date("2011-07-23T22:30:40Z"))
        #expect(try object.value(forKey: "dateWithCustomFormat", as: Date.self) == ISO8601DateParser.date("2011-08-05T01:56:04Z"))
        #expect(try object.value(forKey: "unixTimeTestAttribute", as: Date.self) == Date(timeIntervalSince1970: 1_388_349_428))
        #expect(try object.value(forKey: "unixTime13TestAttribute", as: Date.self) == Date(timeIntervalSince1970: 1_388_349_427.543))

        let nested = try await store.importJSON(
            try Self.bytes("magicalrecord/SingleEntityRelatedToManyMappedEntitiesUsingMappedPrimaryKey.json"),
            into: "SingleEntityRelatedToManyMappedEntitiesUsingMappedPrimaryKey", mapping: mapping)
        let owner = try #require(try store.viewContext.objects(with: nested.objectIDs).first)
        let mapped = try owner.objects(forKey: "mappedEntities")
        #expect(Set(try mapped.map { try $0.value(forKey: "testMappedEntityID", as: Int.self) }) == [1, 2, 3, 4])
        #expect(try mapped.allSatisfy { try $0.value(forKey: "sampleAttribute", as: String.self).hasPrefix("Sample Attribute Value") })

        // A list of keys links the objects the first import made.
        let listed = try await store.importJSON(
            try Self.bytes("magicalrecord/SingleEntityRelatedToManyMappedEntitiesUsingListOfPrimaryKeys.json"),
            into: "SingleEntityRelatedToManyMappedEntitiesUsingMappedPrimaryKey", mapping: mapping)
        let second = try #require(try store.viewContext.objects(with: listed.objectIDs).first)
        #expect(try second.value(forKey: "testPrimaryKey", as: Int.self) == 84)
        #expect(Set(try second.objects(forKey: "mappedEntities").map(\.objectID)) == Set(mapped.map(\.objectID)))

        let secondary = try await store.importJSON(
            try Self.bytes("magicalrecord/SingleEntityRelatedToMappedEntityWithSecondaryMappings.json"),
            into: "SingleEntityRelatedToMappedEntityWithSecondaryMappings", mapping: mapping)
        let withFallbacks = try #require(try store.viewContext.objects(with: secondary.objectIDs).first)
        #expect(withFallbacks["secondaryMappedAttribute"] == "mapped value from sample json file")
        #expect(try withFallbacks.object(forKey: "mappedRelationship")?.value(forKey: "testMappedEntityID", as: Int.self) == 50)

        // This file keys MappedEntity by mappedEntityID (MagicalRecord's <entity>ID default).
        let byEntityID = try Mapping(model: model) { EntityMapping("MappedEntity", identity: "mappedEntityID") }
        let deep = try await store.importJSON(
            try Self.bytes("magicalrecord/SingleEntityRelatedToMappedEntityWithNestedMappedAttributes.json"),
            into: "SingleEntityRelatedToMappedEntityWithNestedMappedAttributes", mapping: byEntityID)
        let holder = try #require(try store.viewContext.objects(with: deep.objectIDs).first)
        #expect(try holder.object(forKey: "mappedEntity")?.value(forKey: "nestedAttribute", as: String.self) == "This is a nested value")

        // Its file with trailing commas is not JSON: the error says where (the comma) and names
        // the option that reads it.
        await #expect {
            try await store.importJSON(
                try Self.bytes("magicalrecord/MultipleEntitiesWithNoPrimaryKey.json"), into: "SingleEntityWithNoRelationships", mapping: mapping)
        } throws: { error in
            (error as? MappingError)?.code == .invalidJSON && (error as? MappingError)?.message.contains("line 3") == true
                && (error as? MappingError)?.message.contains("allowsTrailingCommas") == true
        }
        var trailing = ImportOptions()
        trailing.allowsTrailingCommas = true
        let read = try await store.importJSON(
            try Self.bytes("magicalrecord/MultipleEntitiesWithNoPrimaryKey.json"), into: "SingleEntityWithNoRelationships", mapping: mapping,
            options: trailing)
        #expect(read.records > 0)
    }
}
