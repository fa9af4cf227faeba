import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// Real Xcode models that Core Data loads: integer defaults written as decimals, transient
/// attributes of undefined type, composite attributes, bundles with versions that cannot be read.
@Suite struct XcodeFirstContactTests {
    static func path(_ relative: String) -> String { FixturePaths.models + "/" + relative }

    @Test func integerDefaultsWrittenAsWholeDecimalsLoad() throws {
        let model = try Model(contentsOf: Self.path("Composite.xcdatamodel"))
        let place = try #require(model.entity(named: "Place"))
        #expect(place.attributes[place.attributePosition("visits")!].defaultValue == .integer(0))
        for (text, expected) in [("12.000", Int64(12)), ("-3.0", -3), ("7.", 7), ("+5.00", 5)] {
            let xml = XcodeFixtureTests.xml(#"<entity name="E"><attribute name="n" attributeType="Integer 64" defaultValueString="\#(text)"/></entity>"#)
            #expect(try Model(xcodeModelXML: xml).entities[0].attributes[0].defaultValue == .integer(expected), "\(text)")
        }
        // A real fraction, or a number past the type's range, leaves the attribute without a default.
        for text in ["0.5", "1e3", "12.0.0", "40000.0"] {
            let xml = XcodeFixtureTests.xml(#"<entity name="E"><attribute name="n" attributeType="Integer 16" defaultValueString="\#(text)"/></entity>"#)
            let model = try Model(xcodeModelXML: xml)
            #expect(model.entities[0].attributes[0].defaultValue == nil && model.warnings.count == 1, "\(text)")
        }
    }

    @Test func transientAttributesOfUndefinedTypeHoldAnyValueAndAreNeverStored() async throws {
        let model = try Model(contentsOf: Self.path("Composite.xcdatamodel"))
        let place = try #require(model.entity(named: "Place"))
        let scratch = place.attributes[try #require(place.attributePosition("scratch"))]
        #expect(scratch.type == .undefined && scratch.isTransient)
        try XcodeModelTests.checkRoundTrip(model, "Composite")
        let folder = TemporaryDirectory()
        let store = try Store(at: folder.store(), model: model)
        let object = try store.viewContext.insert("Place")
        try object.setValue("anything", forKey: "scratch")
        #expect(try object.value(forKey: "scratch", as: String.self) == "anything")
        try object.setValue(42, forKey: "scratch")
        try await store.viewContext.save()
        try await store.close()
        let reopened = try Store(at: folder.store(), model: model)
        let read = try #require(try reopened.viewContext.fetchFirst(FetchRequest("Place")))
        #expect(try read.value(forKey: "scratch", as: Value.self) == .null)
        try await reopened.close()
        // A stored attribute may not be undefined.
        #expect { try Model(contentsOf: Self.path("Unsupported/Undefined.xcdatamodel")) } throws: {
            ($0 as? ModelError)?.code == .unsupportedType
        }
        #expect(throws: ModelError.self) { try Model { Entity("E") { Attribute("x", .undefined) } } }
    }

    @Test func compositeAttributesLoadAndWriteBackEqual() throws {
        let model = try Model(contentsOf: Self.path("Composite.xcdatamodel"))
        #expect(model.composites.map(\.name) == ["Address", "Position"])
        let place = try #require(model.entity(named: "Place"))
        #expect(place.entity.attributes.map(\.name) == ["address", "label", "visits", "scratch"])
        #expect(
            place.attributes.map(\.name) == [
                "address.city", "address.postcode", "address.position.latitude", "address.position.longitude", "label", "visits", "scratch"
            ])
        // Elements of an optional composite are optional; element defaults carry over.
        let latitude = place.attributes[place.attributePosition("address.position.latitude")!]
        #expect(latitude.isOptional && latitude.defaultValue == .double(0) && latitude.type == .double)
        #expect(place.isComposite("address") && place.isComposite("address.position") && !place.isComposite("label"))
        try XcodeModelTests.checkRoundTrip(model, "Composite")
        let xml = String(decoding: try model.xcodeModelXML(), as: UTF8.self)
        #expect(xml.contains(#"attributeType="Composite" composite="Address""#))
        #expect(xml.contains(#"<composite name="Position">"#))
        let json = String(decoding: model.jsonData(), as: UTF8.self)
        #expect(json.contains(#""composite" : "Address""#))
        // Version 2 only for models that need it, so that readers of 1 refuse them by number.
        #expect(json.contains(#""version" : 2"#))
        let plain = try Model { Entity("E") { Attribute("x", .string) } }
        #expect(String(decoding: plain.jsonData(), as: UTF8.self).contains(#""version" : 1"#))
    }

    @Test func compositeModelsThatCannotBeResolvedAreRefused() throws {
        let location = Composite("Location", elements: [Attribute("latitude", .double)])
        #expect(throws: ModelError.self) { try Model { Entity("E") { Attribute("l", .composite("Missing")) } } }
        #expect(throws: ModelError.self) {
            try Model(composites: [Composite("Loop", elements: [Attribute("again", .composite("Loop"))])]) {
                Entity("E") { Attribute("l", .composite("Loop")) }
            }
        }
        #expect(throws: ModelError.self) { try Model(composites: [Composite("Empty", elements: [])]) { Entity("E") {} } }
        #expect(throws: ModelError.self) { try Model(composites: [location, location]) { Entity("E") {} } }
        #expect(throws: ModelError.self) {
            try Model(composites: [Composite("Bad", elements: [Attribute("a.b", .double)])]) { Entity("E") {} }
        }
        let xml = XcodeFixtureTests.xml(#"<entity name="E"><attribute name="l" attributeType="Composite"/></entity>"#)
        // From Xcode, a composite attribute naming no composite type holds nothing, as in Core Data.
        let loaded = try Model(xcodeModelXML: xml)
        #expect(loaded.entities[0].attributes.isEmpty && loaded.warnings.map(\.line) == [2])
    }

    @Test func compositeValuesAreStoredReadFetchedAndSorted() async throws {
        let model = try Model(contentsOf: Self.path("Composite.xcdatamodel"))
        let folder = TemporaryDirectory()
        let store = try Store(at: folder.store(), model: model)
        let context = store.viewContext
        let cities = [("Paris", 48.85, 2.35), ("Oslo", 59.91, 10.75), ("Quito", -0.18, -78.47), ("Lima", -12.05, -77.04)]
        for (city, latitude, longitude) in cities {
            let place = try context.insert("Place")
            try place.setValue(city, forKey: "label")
            try place.setCompositeValue(
                ["city": .string(city), "position.latitude": .double(latitude), "position.longitude": .double(longitude)], forKey: "address")
        }
        try await context.save()
        try await store.close()

        let reopened = try Store(at: folder.store(), model: model)
        let view = reopened.viewContext
        let paris = try #require(try view.fetchFirst(FetchRequest("Place", predicate: .equal("address.city", "Paris"))))
        #expect(try paris.value(forKey: "address.position.latitude", as: Double.self) == 48.85)
        #expect(
            try paris.compositeValue(forKey: "address") == [
                "city": .string("Paris"), "postcode": .null, "position.latitude": .double(48.85), "position.longitude": .double(2.35)
            ])
        #expect(try paris.compositeValue(forKey: "address.position") == ["latitude": .double(48.85), "longitude": .double(2.35)])
        let north = try view.fetch(
            FetchRequest("Place", predicate: try FetchPredicate(format: "address.position.latitude > %@", 0), sortKeys: [SortKey("address.city")]))
        #expect(try north.map { try $0.value(forKey: "label", as: String.self) } == ["Oslo", "Paris"])
        let byLatitude = try view.fetch(FetchRequest("Place", sortKeys: [SortKey("address.position.latitude", ascending: false)]))
        #expect(try byLatitude.map { try $0.value(forKey: "label", as: String.self) } == ["Oslo", "Paris", "Quito", "Lima"])

        // Whole-value writes replace every element; a bad key or value changes nothing.
        try paris.setCompositeValue(["city": "Lyon"], forKey: "address")
        #expect(try paris.value(forKey: "address.position.latitude", as: Double?.self) == nil)
        #expect(throws: StoreError.self) { try paris.setCompositeValue(["town": "Nice"], forKey: "address") }
        #expect(throws: StoreError.self) { try paris.setCompositeValue(["city": .integer(3)], forKey: "address") }
        #expect(try paris.value(forKey: "address.city", as: String.self) == "Lyon")
        #expect { try paris.value(forKey: "address", as: Value.self) } throws: { error in
            (error as? StoreError)?.message.contains("composite") == true
        }
        #expect { try view.fetch(FetchRequest("Place", predicate: .equal("address.country", "FR"))) } throws: { error in
            (error as? StoreError)?.message.contains("no element country") == true
        }
        #expect { try view.fetch(FetchRequest("Place", sortKeys: [SortKey("address.position")])) } throws: { error in
            (error as? StoreError)?.message.contains("address.position is a composite") == true
        }
        try await reopened.close()
    }

    @Test func addingAndRemovingCompositeElementsMigrates() async throws {
        let bundle = try XcodeModelBundle(at: Self.path("Places.xcdatamodeld"))
        let first = try #require(bundle.model(version: "Places"))
        let folder = TemporaryDirectory()
        let store = try Store(at: folder.store(), model: first)
        let place = try store.viewContext.insert("Place")
        try place.setCompositeValue(["latitude": 1.5, "longitude": 2.5, "altitude": 300], forKey: "location")
        try await store.viewContext.save()
        try await store.close()

        let migrated = try Store(at: folder.store(), model: bundle.current, options: bundle.migrationOptions())
        let read = try #require(try migrated.viewContext.fetchFirst(FetchRequest("Place")))
        #expect(try read.compositeValue(forKey: "location") == ["latitude": .double(1.5), "longitude": .double(2.5), "accuracy": .float(10)])
        try await migrated.close()
    }

    @Test func aVersionInXcodesOldBinaryFormatIsListedNotFatal() throws {
        let path = Self.path("Notes.xcdatamodeld")
        let bundle = try XcodeModelBundle(at: path)
        #expect(bundle.versions.map(\.name) == ["Notes 2"])
        #expect(bundle.currentVersionName == "Notes 2")
        #expect(bundle.current.entities.map(\.name) == ["Note"])
        #expect(bundle.unreadableVersions.map(\.name) == ["Notes"])
        #expect(bundle.unreadableVersions.first?.problem.code == .unsupportedFormat)
        #expect(bundle.warnings.count == 1 && bundle.warnings[0].contains("old binary format"))
        #expect(try Model(contentsOf: path).entities.map(\.name) == ["Note"])
        // Asked for by name, it fails with the reason.
        #expect { try Model(contentsOf: path, version: "Notes") } throws: { ($0 as? ModelError)?.code == .unsupportedFormat }
    }

    @Test func anOlderVersionsProblemIsAWarningUntilAMigrationNeedsIt() async throws {
        let path = Self.path("Shop.xcdatamodeld")
        let bundle = try XcodeModelBundle(at: path)
        #expect(bundle.versions.map(\.name) == ["Shop", "Shop 3"])
        #expect(bundle.unreadableVersions.map(\.name) == ["Shop 2"])
        #expect(bundle.unreadableVersions.first?.problem.code == .duplicateName)
        #expect(bundle.unreadableVersions.first?.position == 1)
        #expect(bundle.warnings.first?.contains("Shop 2") == true)

        // A store at the current version opens; one written with v1 must pass through v2.
        let options = bundle.migrationOptions()
        let current = TemporaryDirectory()
        try await Store(at: current.store(), model: bundle.current, options: options).close()
        try await Store(at: current.store(), model: bundle.current, options: options).close()
        let old = TemporaryDirectory()
        try await Store(at: old.store(), model: try #require(bundle.model(version: "Shop")), options: options).close()
        #expect { try Store(at: old.store(), model: bundle.current, options: options) } throws: { error in
            let error = error as? StoreError
            return error?.code == .cannotMigrate && error?.message.contains("Shop 2") == true
        }
        // The current version must load.
        let broken = TemporaryDirectory()
        let copy = broken.path + "/Shop.xcdatamodeld"
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>Shop 2.xcdatamodel</string></dict></plist>
            """.utf8
        ).write(to: URL(fileURLWithPath: copy + "/.xccurrentversion"))
        #expect { try XcodeModelBundle(at: copy) } throws: { ($0 as? ModelError)?.code == .duplicateName }
        // A readable version asked for by name still loads.
        #expect(try Model(contentsOf: copy, version: "Shop 3").entities.map(\.name) == ["Product"])
        // One version folder in the old binary format says so.
        #expect { try Model(contentsOf: Self.path("Notes.xcdatamodeld/Notes.xcdatamodel")) } throws: {
            ($0 as? ModelError)?.code == .unsupportedFormat
        }
    }

    struct Place: StoredModel, Equatable {
        var label: String?
        var city: String?
        var latitude: Double?
        enum CodingKeys: String, CodingKey {
            case label, city = "address.city", latitude = "address.position.latitude"
        }
    }

    @Test func typedModelsNameCompositeElementsByKeyPath() async throws {
        let store = Store(inMemory: try Model(contentsOf: Self.path("Composite.xcdatamodel")))
        try store.viewContext.upsert(Place(label: "Home", city: "Lyon", latitude: 45.76))
        try await store.viewContext.save()
        #expect(try store.viewContext.fetch(Place.self) == [Place(label: "Home", city: "Lyon", latitude: 45.76)])
    }

    @Test func anUndefinedAttributeTakesNoDefault() {
        #expect { try Model { Entity("E") { Attribute("x", .undefined, default: 5, transient: true) } } } throws: {
            ($0 as? ModelError)?.code == .invalidDefault
        }
        let element = Composite("C", elements: [Attribute("any", .undefined)])
        #expect { try Model(composites: [element]) { Entity("E") { Attribute("c", .composite("C"), transient: true) } } } throws: {
            ($0 as? ModelError)?.code == .unsupportedType
        }
    }

    @Test func compositesThatExpandWithoutBoundAreRefusedAtOnce() {
        // Each level doubles: 2^40 stored elements if expanded.
        let composites =
            (0..<40).map { level in
                Composite("C\(level)", elements: [Attribute("a", .composite("C\(level + 1)")), Attribute("b", .composite("C\(level + 1)"))])
            } + [Composite("C40", elements: [Attribute("x", .double)])]
        #expect { try Model(composites: composites) { Entity("E") { Attribute("c", .composite("C0")) } } } throws: {
            ($0 as? ModelError)?.message.contains("more than") == true
        }
    }

    @Test func anElementRenamedInXcodeKeepsItsValuesThroughMigration() async throws {
        func model(_ element: Attribute) throws -> Model {
            try Model(composites: [Composite("Location", elements: [element, Attribute("longitude", .double)])]) {
                Entity("Place") { Attribute("location", .composite("Location")) }
            }
        }
        let before = try model(Attribute("lat", .double))
        // Xcode writes the Renaming ID as elementID.
        let after = try model(Attribute("latitude", .double, elementID: "lat"))
        #expect(after.entity(named: "Place")?.attributes.first?.renamingIdentifier == "location.lat")
        let folder = TemporaryDirectory()
        let store = try Store(at: folder.store(), model: before)
        try store.viewContext.insert("Place").setCompositeValue(["lat": 45.5, "longitude": 1], forKey: "location")
        try await store.viewContext.save()
        try await store.close()
        let migrated = try Store(at: folder.store(), model: after)
        let place = try #require(try migrated.viewContext.fetchFirst(FetchRequest("Place")))
        #expect(try place.value(forKey: "location.latitude", as: Double.self) == 45.5)
        try await migrated.close()
    }
}
