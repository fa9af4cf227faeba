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
        #expect(fromXML.xcodeModelXML() == model.xcodeModelXML(), "\(name): written XML is stable")
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
                #expect(model.entities.reduce(0) { $0 + $1.attributes.count } == Self.occurrences(of: "<attribute ", in: xml), "\(contents): attributes")
                #expect(model.entities.reduce(0) { $0 + $1.relationships.count } == Self.occurrences(of: "<relationship ", in: xml),
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
