import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// Xcode models that Core Data loads load in Cairn too: a default the model compiler converts is
/// converted, one it drops is dropped, an inverse that does not point back is left out, a
/// composite type without elements holds nothing; each with a warning naming the file, the line
/// and the property.
@Suite struct XcodeCoreDataLoadsTests {
    static func path(_ name: String) -> String { FixturePaths.models + "/CoreDataLoads/" + name }

    static func attribute(_ model: Model, _ entity: String, _ name: String) throws -> Attribute {
        let description = try #require(model.entity(named: entity))
        return description.attributes[try #require(description.attributePosition(name))]
    }

    /// The warnings' properties, lines and elements, in order.
    static func places(_ model: Model) -> [String] {
        model.warnings.map { "\($0.entity.map { $0 + "." } ?? "")\($0.property ?? ""):\($0.line ?? 0):\($0.element ?? "")" }
    }

    @Test func everyRealWorldModelVersionLoads() throws {
        guard FileManager.default.fileExists(atPath: FixturePaths.realWorld) else {
            print("skipped: \(FixturePaths.realWorld) is absent (real-world models live beside the project, not in it)")
            return
        }
        let names = (FileManager.default.enumerator(atPath: FixturePaths.realWorld)?.allObjects as? [String]) ?? []
        let versions = names.filter { $0.hasSuffix(".xcdatamodel/contents") }.sorted()
        #expect(versions.count >= 48)
        var warnings: [String: [ModelWarning]] = [:]
        for version in versions {
            let folder = FixturePaths.realWorld + "/" + String(version.dropLast("/contents".count))
            do {
                let model = try Model(contentsOf: folder)
                warnings[version] = model.warnings
                // Every warning names the file and a line in it.
                for warning in model.warnings {
                    #expect(warning.file?.hasSuffix(version) == true && warning.line != nil, "\(warning)")
                }
                try XcodeModelTests.checkRoundTrip(model, version)
            } catch {
                Issue.record("\(version) does not load: \(error)")
            }
        }
        for bundle in FixturePaths.bundles(under: FixturePaths.realWorld) {
            let loaded = try XcodeModelBundle(at: bundle)
            #expect(loaded.unreadableVersions.isEmpty, "\(bundle): \(loaded.warnings)")
        }
        // Artsy's older versions: Image.artist names Artist.thumbnail, the inverse of Image.thumbnail.
        let artsy = warnings["models/artsy__energy/ArtsyPartner.xcdatamodeld/ArtsyPartner.xcdatamodel/contents"] ?? []
        #expect(artsy.contains { $0.entity == "Image" && $0.property == "artist" && $0.line == 69 && $0.element == "relationship" })
        // momcom writes a date default both ways; the interval is read, as the model compiler reads it.
        let momcom = try Model(contentsOf: FixturePaths.realWorld + "/models/atomicbird__momcom/momcomTests.xcdatamodeld/momcTests.xcdatamodel")
        #expect(try Self.attribute(momcom, "Entity", "dateAttribute").defaultValue == .date(Date(timeIntervalSinceReferenceDate: 388_411_200)))
        #expect(!momcom.warnings.contains { $0.message.contains("default") })
    }

    @Test func yesAndNoOnANumberAreOneAndZero() async throws {
        let model = try Model(contentsOf: Self.path("number-default-yes-no.xml"))
        #expect(try Self.attribute(model, "Order", "isPaid").defaultValue == .integer(0))
        #expect(try Self.attribute(model, "Order", "isShipped").defaultValue == .integer(1))
        #expect(try Self.attribute(model, "Order", "discount").defaultValue == .double(0))
        #expect(try Self.attribute(model, "Order", "total").defaultValue == .decimal(1))
        #expect(try Self.attribute(model, "Order", "isGift").defaultValue == .boolean(false))
        #expect(try Self.attribute(model, "Order", "quantity").defaultValue == .integer(3))
        #expect(
            Self.places(model) == [
                "Order.isPaid:4:attribute", "Order.isShipped:5:attribute", "Order.discount:6:attribute", "Order.total:7:attribute",
                "Order.isGift:8:attribute"
            ])
        #expect(model.warnings.allSatisfy { $0.file?.hasSuffix("number-default-yes-no.xml") == true })
        #expect(
            model.warnings[0].description.hasSuffix(
                #"number-default-yes-no.xml:4, <attribute>: default "NO" is read as 0 (type Integer 16), as Core Data's model compiler reads it (Order.isPaid)"#
            ))
        // A new object starts with the converted values.
        let store = Store(inMemory: model)
        let order = try store.viewContext.insert("Order")
        #expect(try order.value(forKey: "isShipped", as: Int.self) == 1)
        #expect(try order.value(forKey: "isPaid", as: Int.self) == 0)
        try await store.viewContext.save()
    }

    @Test func aDefaultThatIsNotOfItsTypeIsDropped() throws {
        let model = try Model(contentsOf: Self.path("default-not-of-its-type.xml"))
        for name in ["identifier", "year", "level", "port", "ratio"] {
            #expect(try Self.attribute(model, "Device", name).defaultValue == nil, "\(name)")
        }
        #expect(try Self.attribute(model, "Device", "name").defaultValue == .string("Unnamed"))
        #expect(
            Self.places(model) == [
                "Device.identifier:4:attribute", "Device.year:5:attribute", "Device.level:6:attribute", "Device.port:7:attribute",
                "Device.ratio:8:attribute"
            ])
        #expect(model.warnings[0].message.contains(#""not-a-uuid" is not a valid UUID"#))
        // A model built in Swift or read from JSON is still checked strictly.
        #expect { try Model { Entity("E") { Attribute("x", .uuid, default: .string("not-a-uuid")) } } } throws: {
            ($0 as? ModelError)?.code == .invalidDefault
        }
    }

    @Test func aDateDefaultWrittenAsTextIsThatDate() throws {
        let model = try Model(contentsOf: Self.path("date-default-as-text.xml"))
        let date = Value.date(Date(timeIntervalSinceReferenceDate: 388_411_200))
        #expect(try Self.attribute(model, "Event", "both").defaultValue == date)
        #expect(try Self.attribute(model, "Event", "textOnly").defaultValue == date)
        #expect(try Self.attribute(model, "Event", "seconds").defaultValue == date)
        #expect(try Self.attribute(model, "Event", "nonsense").defaultValue == nil)
        // Only what was converted or dropped is named.
        #expect(Self.places(model) == ["Event.textOnly:5:attribute", "Event.nonsense:7:attribute"])
    }

    @Test func aCompositeWithoutElementsHoldsNothing() throws {
        let model = try Model(contentsOf: Self.path("composite-without-elements.xml"))
        let person = try #require(model.entity(named: "Person"))
        #expect(person.entity.attributes.map(\.name) == ["name", "place"])
        #expect(person.attributes.map(\.name) == ["name", "place.label"])
        #expect(model.composites.map(\.name) == ["Place"])
        #expect(
            Self.places(model) == ["Address:9:composite", "Place.address:11:attribute", "Person.home:4:attribute", "Person.work:6:attribute"])
        try XcodeModelTests.checkRoundTrip(model, "composite-without-elements")
    }

    @Test func anInverseThatDoesNotPointBackIsLeftOut() async throws {
        let model = try Model(contentsOf: Self.path("inverse-does-not-point-back.xml"))
        #expect(Self.places(model) == ["Image.artist:14:relationship"])
        #expect(model.warnings[0].message.contains("does not point back"))
        let image = try #require(model.entity(named: "Image"))
        #expect(image.entity.relationships.first { $0.name == "artist" }?.inverse == nil)
        #expect(image.entity.relationships.first { $0.name == "thumbnail" }?.inverse == "thumbnail")
        try XcodeModelTests.checkRoundTrip(model, "inverse-does-not-point-back")

        // Setting Image.artist never touches Artist.thumbnail, which belongs to another pair.
        let folder = TemporaryDirectory()
        let store = try Store(at: folder.store(), model: model)
        let context = store.viewContext
        let artist = try context.insert("Artist")
        let thumbnail = try context.insert("Image")
        let other = try context.insert("Image")
        try artist.setObject(thumbnail, forKey: "thumbnail")
        #expect(try thumbnail.object(forKey: "thumbnail")?.objectID == artist.objectID)
        try other.setObject(artist, forKey: "artist")
        #expect(try artist.object(forKey: "thumbnail")?.objectID == thumbnail.objectID)
        #expect(try thumbnail.object(forKey: "thumbnail")?.objectID == artist.objectID)
        try await context.save()
        try await store.close()
        let reopened = try Store(at: folder.store(), model: model)
        let images = try reopened.viewContext.fetch(FetchRequest("Image"))
        let read = try #require(try reopened.viewContext.fetchFirst(FetchRequest("Artist")))
        let thumb = try #require(try read.object(forKey: "thumbnail"))
        #expect(try thumb.object(forKey: "thumbnail")?.objectID == read.objectID)
        #expect(try images.filter { try $0.object(forKey: "artist") != nil }.count == 1)
        try await reopened.close()

        // A model built in Swift is still refused.
        #expect {
            try Model {
                Entity("A") {
                    Relationship("b", to: "B", inverse: "a")
                    Relationship("c", to: "B", inverse: "a")
                }
                Entity("B") { Relationship("a", to: "A", inverse: "b") }
            }
        } throws: { ($0 as? ModelError)?.code == .invalidInverse }
    }

    @Test func everyInverseShapeCoreDataLoadsLoads() throws {
        // An inverse naming no relationship of the destination.
        let missing = try Model(
            xcodeModelXML: XcodeFixtureTests.xml(
                """
                <entity name="A"><relationship name="b" optional="YES" maxCount="1" destinationEntity="B" inverseName="nothing"/></entity>
                <entity name="B"><attribute name="x" optional="YES" attributeType="String"/></entity>
                """))
        #expect(Self.places(missing) == ["A.b:2:relationship"])
        #expect(missing.entity(named: "A")?.entity.relationships[0].inverse == nil)
        // Two relationships naming the same one, which names neither: neither is kept in step by it.
        let claimed = try Model(
            xcodeModelXML: XcodeFixtureTests.xml(
                """
                <entity name="A">
                <relationship name="first" optional="YES" maxCount="1" destinationEntity="B" inverseName="a"/>
                <relationship name="second" optional="YES" maxCount="1" destinationEntity="B" inverseName="a"/>
                </entity>
                <entity name="B"><relationship name="a" optional="YES" toMany="YES" destinationEntity="A"/></entity>
                """))
        #expect(Set(Self.places(claimed)) == ["A.first:3:relationship", "A.second:4:relationship"])
        #expect(claimed.entity(named: "B")?.inverses == [nil])
        // An inherited relationship whose inverse does not point back is named where it is declared, once.
        let inherited = try Model(
            xcodeModelXML: XcodeFixtureTests.xml(
                """
                <entity name="P" isAbstract="YES"><relationship name="b" optional="YES" maxCount="1" destinationEntity="B" inverseName="c"/></entity>
                <entity name="S1" parentEntity="P"/>
                <entity name="S2" parentEntity="P"/>
                <entity name="C"><relationship name="c" optional="YES" maxCount="1" destinationEntity="B" inverseName="c"/></entity>
                <entity name="B"><relationship name="c" optional="YES" maxCount="1" destinationEntity="C" inverseName="c"/></entity>
                """))
        #expect(Self.places(inherited) == ["P.b:2:relationship"])
    }

    @Test func whatCairnDoesNotApplyIsNamed() throws {
        let model = try Model(
            xcodeModelXML: XcodeFixtureTests.xml(
                """
                <entity name="Place">
                <attribute name="latitude" optional="YES" attributeType="Double" minValueString="-90" maxValueString="90"/>
                <attribute name="code" optional="YES" attributeType="String" regularExpressionString="[A-Z]+"/>
                <attribute name="now" attributeType="Double" derived="YES" derivationExpression="now()"/>
                <attribute name="longitude" optional="YES" attributeType="Double"/>
                <fetchIndex name="byLocation"><fetchIndexElement property="latitude" type="RTree" order="ascending"/></fetchIndex>
                <fetchIndex name="byCode"><fetchIndexElement property="code" type="Binary" order="ascending"/></fetchIndex>
                <fetchedProperty name="nearby" optional="YES"><fetchRequest name="f" entity="Place" predicateString="TRUEPREDICATE"/></fetchedProperty>
                </entity>
                """), file: "place.xml")
        #expect(
            Self.places(model) == [
                "Place.latitude:3:attribute", "Place.code:4:attribute", "Place.now:5:attribute", "Place.:7:fetchIndex", "Place.nearby:9:fetchedProperty"
            ])
        #expect(model.entities[0].fetchIndexes.map(\.name) == ["byCode"])
        #expect(model.warnings[0].message.contains("minValueString, maxValueString"))
    }

    @Test func aBundleNamesEachVersionsWarnings() throws {
        let folder = TemporaryDirectory()
        let bundle = folder.path + "/Orders.xcdatamodeld"
        try FileManager.default.createDirectory(atPath: bundle + "/Orders.xcdatamodel", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Self.path("number-default-yes-no.xml"), toPath: bundle + "/Orders.xcdatamodel/contents")
        let loaded = try XcodeModelBundle(at: bundle)
        #expect(loaded.warnings.count == 5)
        #expect(loaded.warnings[0].contains("Orders.xcdatamodel/contents:4, <attribute>") && loaded.warnings[0].contains("(Order.isPaid)"))
        #expect(loaded.current.warnings.count == 5)
    }
}
