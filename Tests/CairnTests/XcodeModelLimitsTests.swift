import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// Every limit of the model reader is Cairn's own error, naming the limit and the file, and is
/// met as soon as the document goes past it.
@Suite struct XcodeModelLimitsTests {
    static let head = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">

        """

    /// An entity as Xcode writes it: four lines.
    static func entity(_ number: Int) -> String {
        """
            <entity name="Entity\(number)" representedClassName="Entity\(number)" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
                <attribute name="count" optional="YES" attributeType="Integer 32" defaultValueString="0" usesScalarValueType="YES"/>
            </entity>

        """
    }

    static func expectLimit(_ data: Data, _ file: String, code: ModelError.Code = .invalidFormat, line: Int? = nil, mentions: String...) {
        #expect { try Model(xcodeModelXML: data, file: file) } throws: { error in
            let error = try #require(error as? ModelError)
            let matches =
                error.code == code && error.file == file && (line == nil || error.line == line)
                && mentions.allSatisfy { error.description.contains($0) } && !error.description.contains("NSXMLParserErrorDomain")
            if !matches { print("\(file): \(error)") }
            return matches
        }
    }

    @Test func aHundredThousandEntitiesStopAtTheEntityLimit() {
        // 29 MB: past what libxml2 takes in one piece, which made the parser fail with its error 1.
        let xml = Self.head + (0..<100_000).map(Self.entity).joined() + "</model>\n"
        #expect(xml.utf8.count > 10_000_000)
        // The 4,097th entity starts on line 3 + 4 × 4,096.
        Self.expectLimit(Data(xml.utf8), "huge.xml", line: 3 + 4 * 4096, mentions: "huge.xml", "4096 <entity>")
    }

    @Test func aLargeFileWithinTheLimitsLoads() throws {
        // 12 MB of layout elements, which the reader skips, around one entity.
        let layout = (0..<150_000).map { #"<element name="Entity0" positionX="\#($0)" positionY="-45" width="128" height="118"/>"# }
        let xml = Self.head + Self.entity(0) + "<elements>\n" + layout.joined(separator: "\n") + "\n</elements>\n</model>\n"
        #expect(xml.utf8.count > 10_000_000)
        #expect(try Model(xcodeModelXML: Data(xml.utf8)).entities.map(\.name) == ["Entity0"])
    }

    @Test func everyOtherLimitIsNamed() throws {
        // Composites.
        let composites = (0...Model.maximumCompositeCount).map { #"<composite name="C\#($0)"><attribute name="x" attributeType="String"/></composite>"# }
        Self.expectLimit(Data((Self.head + composites.joined(separator: "\n") + "</model>").utf8), "composites.xml", mentions: "4096 <composite>")
        // Elements in all.
        let many = String(repeating: "<element/>", count: (1 << 20) + 1)
        Self.expectLimit(Data((Self.head + "<elements>" + many + "</elements></model>").utf8), "many.xml", line: 3, mentions: "1048576 elements")
        // Nesting.
        let deep = String(repeating: "<userInfo>", count: 70) + String(repeating: "</userInfo>", count: 70)
        Self.expectLimit(Data((Self.head + "<entity name=\"E\">" + deep + "</entity></model>").utf8), "deep.xml", line: 3, mentions: "64 levels")
        // Attributes in all (inherited ones and composite elements counted).
        let attributes = (0...Model.maximumAttributeCount).map { #"<attribute name="a\#($0)" optional="YES" attributeType="String"/>"# }
        let wide = Self.head + "<entity name=\"Wide\">\n" + attributes.joined(separator: "\n") + "\n</entity></model>"
        Self.expectLimit(Data(wide.utf8), "wide.xml", line: 3, mentions: "262144 attributes", "(Wide)")
        // Name lengths.
        let long = String(repeating: "n", count: Model.maximumNameLength + 1)
        Self.expectLimit(
            Data((Self.head + "<entity name=\"E\"><attribute name=\"\(long)\" attributeType=\"String\"/></entity></model>").utf8), "long.xml",
            code: .invalidName, line: 3, mentions: "1025 bytes", "more than the 1024")
        #expect(throws: ModelError.self) { try Model { Entity(String(repeating: "e", count: 2000)) {} } }
        #expect(try Model { Entity(String(repeating: "e", count: 1024)) {} }.entities.count == 1)
        // One value of more than libxml2's 10,000,000 bytes.
        let value = String(repeating: "v", count: 10_000_001)
        Self.expectLimit(
            Data((Self.head + "<entity name=\"E\"><userInfo><entry key=\"k\" value=\"\(value)\"/></userInfo></entity></model>").utf8), "value.xml",
            mentions: "10000000 bytes")
    }

    @Test func aFileOverTheSizeLimitIsRefusedBeforeItIsRead() throws {
        let folder = TemporaryDirectory()
        let path = folder.path + "/contents"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(Self.head.utf8)))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: UInt64(Model.maximumFileSize + 1))
        try handle.close()
        #expect { try Model(contentsOf: path) } throws: { error in
            let error = try #require(error as? ModelError)
            return error.file == path && error.message.contains("at most \(Model.maximumFileSize)")
        }
    }
}
