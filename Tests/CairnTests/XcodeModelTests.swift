import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// Paths of the repository's fixtures and of the real-world files beside the project.
enum FixturePaths {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let models = root.appendingPathComponent("Fixtures/Models").path
    static let realWorld = root.deletingLastPathComponent().appendingPathComponent("shared/real-world").path

    /// Every `.xcdatamodeld` bundle under a folder.
    static func bundles(under folder: String) -> [String] {
        let names = (FileManager.default.enumerator(atPath: folder)?.allObjects as? [String]) ?? []
        return names.filter { $0.hasSuffix(".xcdatamodeld") }.sorted().map { folder + "/" + $0 }
    }
}

@Suite struct XcodeModelTests {
    /// Loads, writes as XML and as JSON, and loads again: equal models each way.
    static func checkRoundTrip(_ model: Model, _ name: String) throws {
        let fromXML = try Model(xcodeModelXML: model.xcodeModelXML(), file: name)
        #expect(fromXML == model, "\(name): XML round trip\n\(fromXML.differences(from: model).joined(separator: "\n"))")
        let fromJSON = try Model(jsonData: model.jsonData())
        #expect(fromJSON == model, "\(name): JSON round trip\n\(fromJSON.differences(from: model).joined(separator: "\n"))")
        #expect(try fromXML.xcodeModelXML() == model.xcodeModelXML(), "\(name): written XML is stable")
    }

    @Test func realWorldModelsLoadWithTheCountsOfTheirXML() throws {
        guard FileManager.default.fileExists(atPath: FixturePaths.realWorld) else {
            print("skipped: \(FixturePaths.realWorld) is absent (real-world models live beside the project, not in it)")
            return
        }
        let bundles = FixturePaths.bundles(under: FixturePaths.realWorld)
        #expect(!bundles.isEmpty)
        var versionsChecked = 0
        for path in bundles {
            let bundle = try XcodeModelBundle(at: path)
            for version in bundle.versions {
                let contents = path + "/" + version.name + ".xcdatamodel/contents"
                let xml = try String(contentsOfFile: contents, encoding: .utf8)
                let model = version.model
                #expect(model.entities.count == Self.occurrences(of: "<entity ", in: xml), "\(contents): entities")
                let attributes = model.entities.reduce(0) { $0 + $1.attributes.count } + model.composites.reduce(0) { $0 + $1.elements.count }
                #expect(attributes == Self.occurrences(of: "<attribute ", in: xml), "\(contents): attributes")
                #expect(
                    model.entities.reduce(0) { $0 + $1.relationships.count } == Self.occurrences(of: "<relationship ", in: xml),
                    "\(contents): relationships")
                try Self.checkRoundTrip(model, contents)
                versionsChecked += 1
            }
            #expect(bundle.current == bundle.versions.first { $0.name == bundle.currentVersionName }?.model)
        }
        #expect(versionsChecked >= bundles.count)
    }

    @Test func aVersionCanBeChosenAndAMissingOneIsNamed() throws {
        guard FileManager.default.fileExists(atPath: FixturePaths.realWorld) else {
            print("skipped: \(FixturePaths.realWorld) is absent")
            return
        }
        let path = FixturePaths.realWorld + "/modelmatic/Authors.xcdatamodeld"
        let bundle = try XcodeModelBundle(at: path)
        #expect(bundle.versions.map(\.name) == ["Authors", "Authors 2", "Authors 3"])
        #expect(try Model(contentsOf: path, version: "Authors 2") == bundle.versions[1].model)
        #expect(try Model(contentsOf: path, version: "Authors 2.xcdatamodel") == bundle.versions[1].model)
        #expect(throws: ModelError.self) { try Model(contentsOf: path, version: "Authors 9") }
        #expect(try Model(contentsOf: path + "/Authors 2.xcdatamodel") == bundle.versions[1].model)
        #expect(try Model(contentsOf: path + "/Authors 2.xcdatamodel/contents") == bundle.versions[1].model)
    }

    static func occurrences(of needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }
}

@Suite struct XcodeFixtureTests {
    static func model(_ relative: String) throws -> Model { try Model(contentsOf: FixturePaths.models + "/" + relative) }

    @Test func everythingReadsEveryElementAndType() throws {
        let model = try Self.model("Everything.xcdatamodel")
        #expect(model.entities.map(\.name) == ["Gadget", "Item", "Note", "Owner", "Part"])
        let gadget = try #require(model.entity(named: "Gadget"))
        #expect(gadget.entity.parent == "Item")
        #expect(gadget.attributes.count == 14 && gadget.relationships.count == 2)
        let types = Dictionary(uniqueKeysWithValues: gadget.attributes.map { ($0.name, $0.type) })
        #expect(types["count16"] == .integer16 && types["count32"] == .integer32 && types["count64"] == .integer64)
        #expect(types["price"] == .decimal && types["weight"] == .double && types["ratio"] == .float)
        #expect(types["isActive"] == .boolean && types["payload"] == .binary && types["homepage"] == .uri)
        #expect(types["createdAt"] == .date && types["identifier"] == .uuid && types["title"] == .string)
        #expect(types["tags"] == .transformable(transformer: "NSSecureUnarchiveFromData"))
        func attribute(_ name: String) -> Attribute? { gadget.attributes.first { $0.name == name } }
        #expect(attribute("tags")?.customClassName == "[String]")
        #expect(attribute("count16")?.isOptional == false && attribute("count16")?.defaultValue == .integer(16))
        #expect(attribute("count32")?.isOptional == true && attribute("count32")?.isIndexed == true)
        #expect(attribute("displayName")?.isTransient == true)
        #expect(attribute("isActive")?.defaultValue == .boolean(true))
        #expect(attribute("price")?.defaultValue == .decimal(Decimal(string: "3.14")!))
        #expect(attribute("ratio")?.defaultValue == .float(0.5) && attribute("weight")?.defaultValue == .double(2.5))
        #expect(attribute("createdAt")?.defaultValue == .date(Date(timeIntervalSinceReferenceDate: 700_000_000)))
        #expect(attribute("identifier")?.defaultValue == .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!))
        #expect(attribute("title")?.defaultValue == .string("Untitled") && attribute("title")?.userInfo == ["jsonKey": "item_title"])
        #expect(gadget.entity.fetchIndexes == [FetchIndex("byCountAndWeight", [.init("count32"), .init("weight", ascending: false)])])

        let item = try #require(model.entity(named: "Item"))
        #expect(item.isAbstract && item.entity.userInfo == ["primaryKey": "identifier", "note": "abstract parent of Gadget"])
        let parts = try #require(gadget.relationships.first { $0.name == "parts" })
        #expect(parts.isOrdered && parts.deleteRule == .cascade && parts.minimumCount == 1 && parts.maximumCount == 10 && parts.inverse == "gadget")
        let owner = try #require(model.entity(named: "Owner"))
        #expect(owner.relationships.map(\.deleteRule) == [.noAction, .cascade, .deny])
        #expect(owner.relationships.first { $0.name == "favorite" }?.inverse == nil)
        #expect(owner.relationships.first { $0.name == "items" }?.userInfo == ["exportAs": "ownedItems"])
        #expect(owner.attributes.first { $0.name == "name" }?.elementID == "fullName")
        #expect(owner.entity.uniquenessConstraints == [["email"]])
        let note = try #require(model.entity(named: "Note"))
        #expect(note.relationships.first?.isOptional == false)
        let part = try #require(model.entity(named: "Part"))
        #expect(part.entity.uniquenessConstraints == [["code", "revision"]])
        #expect(part.relationships.first { $0.name == "replacement" }?.deleteRule == .nullify)
        #expect(model.configurations == ["Cloud": ["Gadget", "Item", "Owner", "Part"]])
        #expect(model.userInfo == ["fixture": "Everything"])
        try XcodeModelTests.checkRoundTrip(model, "Everything")
    }

    @Test func theLibraryChainLoadsInVersionOrder() throws {
        let bundle = try XcodeModelBundle(at: FixturePaths.models + "/Library.xcdatamodeld")
        #expect(bundle.versions.map(\.name) == ["Library", "Library 2", "Library 3"])
        #expect(bundle.currentVersionName == "Library 3")
        let counts = bundle.versions.map { version in version.model.entities.map { "\($0.name) \($0.attributes.count)/\($0.relationships.count)" } }
        #expect(counts == [["Author 2/1", "Book 2/1"], ["Author 1/1", "Book 4/2", "Publisher 1/0"], ["Author 1/1", "Book 4/2", "Publisher 1/0"]])
        for version in bundle.versions { try XcodeModelTests.checkRoundTrip(version.model, version.name) }
    }

    @Test(arguments: [
        ("Unsupported/ObjectID.xcdatamodel", 5, "target"),
        ("Unsupported/Undefined.xcdatamodel", 5, "value")
    ])
    func unsupportedTypesAreRefusedByName(path: String, line: Int, attribute: String) throws {
        #expect { try Self.model(path) } throws: { error in
            let error = try #require(error as? ModelError)
            return error.code == .unsupportedType && error.line == line && error.property == attribute && error.element == "attribute"
                && error.entity != nil && error.file?.hasSuffix("contents") == true
        }
    }

    @Test(arguments: [
        ("unclosed-element.xml", ModelError.Code.invalidFormat, 4, nil as String?),
        ("not-a-model.xml", .invalidFormat, 2, "plist"),
        ("unknown-attribute-type.xml", .unsupportedType, 4, "attribute"),
        ("relationship-unknown-destination.xml", .unknownDestination, 5, "relationship"),
        ("duplicate-attribute.xml", .duplicateName, 6, "attribute"),
        ("entity-without-name.xml", .invalidFormat, 6, "entity"),
        ("bad-min-count.xml", .invalidCount, 5, "relationship"),
        ("constraint-on-unknown-attribute.xml", .unknownConstraintAttribute, 7, "constraint"),
        ("unknown-parent-entity.xml", .unknownParent, 3, "entity")
    ])
    func brokenFilesNameTheLineAndElement(file: String, code: ModelError.Code, line: Int, element: String?) throws {
        #expect { try Self.model("Broken/" + file) } throws: { error in
            let error = try #require(error as? ModelError)
            let matches = error.code == code && error.line == line && error.element == element && error.file?.hasSuffix(file) == true
            if !matches { print("\(file): \(error)") }
            return matches && (error.description.contains("line \(line)") || error.description.contains(":\(line)"))
        }
    }

    @Test func aBundleWhoseCurrentVersionIsMissingSaysSo() throws {
        #expect { try Self.model("Broken/missing-current-version.xcdatamodeld") } throws: { error in
            let error = try #require(error as? ModelError)
            return error.message.contains("missing-current-version 2") && error.file?.hasSuffix(".xccurrentversion") == true
        }
    }

    static func xml(_ body: String) -> Data {
        Data(
            ("""
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            """ + body + "\n</model>\n").utf8)
    }

    @Test func hostileAndSloppyFilesAreRefused() throws {
        let laughs = Data(
            """
            <?xml version="1.0"?>
            <!DOCTYPE model [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>
            <model><entity name="E"><attribute name="x" attributeType="String" defaultValueString="&b;"/></entity></model>
            """.utf8)
        #expect { try Model(xcodeModelXML: laughs) } throws: { ($0 as? ModelError)?.line == 2 }
        // A decimal default that is not a plain decimal number leaves the attribute without one.
        for text in ["0x10", "nan", "1.5abc", ""] {
            let model = try Model(
                xcodeModelXML: Self.xml(#"<entity name="E"><attribute name="d" attributeType="Decimal" defaultValueString="\#(text)"/></entity>"#))
            #expect(model.entities[0].attributes[0].defaultValue == nil && model.warnings.count == 1, "decimal default \(text)")
        }
        #expect(
            try Model(xcodeModelXML: Self.xml(#"<entity name="E"><attribute name="d" attributeType="Decimal" defaultValueString="-12.50"/></entity>"#))
                .entities[0].attributes[0].defaultValue == .decimal(Decimal(string: "-12.5")!))
        let twice = Self.xml(#"<entity name="E"><userInfo><entry key="k" value="1"/><entry key="k" value="2"/></userInfo></entity>"#)
        #expect { try Model(xcodeModelXML: twice) } throws: { ($0 as? ModelError)?.line == 2 }
        #expect(throws: ModelError.self) { try Model(contentsOf: "/dev/zero") }
    }

    @Test func textXMLCannotHoldIsRefusedByTheWriter() throws {
        let model = try Model([Entity("E", attributes: [Attribute("x", .string, userInfo: ["note": "bell \u{7}"])])])
        #expect { try model.xcodeModelXML() } throws: { ($0 as? ModelError)?.property == "x" }
        let fine = try Model([Entity("E", attributes: [Attribute("x", .string, default: "two\nlines\tand \"quotes\" & <tags>")])])
        try XcodeModelTests.checkRoundTrip(fine, "escapes")
    }
}
