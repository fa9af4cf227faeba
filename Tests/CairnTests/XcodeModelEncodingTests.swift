import Foundation
import Testing
@testable import Cairn

/// The model reader decodes a document before it checks it: a document type or entity declared
/// in any encoding is refused, and the parser reads exactly the text that was checked.
@Suite struct XcodeModelEncodingTests {
    static let hostile = """
        <?xml version="1.0" encoding="ENCODING"?>
        <!DOCTYPE model [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>
        <model><entity name="E"><attribute name="x" attributeType="String" defaultValueString="&b;"/></entity></model>

        """
    static let plain = """
        <?xml version="1.0" encoding="ENCODING"?>
        <model>
            <entity name="Café"><attribute name="x" optional="YES" attributeType="String" defaultValueString="naïve"/></entity>
        </model>

        """

    /// The text in an encoding, with a byte order mark or without.
    static func encode(_ text: String, _ encoding: String.Encoding, declared: String, bom: [UInt8] = []) throws -> Data {
        let declaredText = text.replacingOccurrences(of: "ENCODING", with: declared)
        return Data(bom) + (try #require(declaredText.data(using: encoding)))
    }

    static let encodings: [(name: String, encoding: String.Encoding, bom: [UInt8])] = [
        ("UTF-8", .utf8, []),
        ("UTF-8", .utf8, [0xEF, 0xBB, 0xBF]),
        ("UTF-16", .utf16LittleEndian, [0xFF, 0xFE]),
        ("UTF-16", .utf16BigEndian, [0xFE, 0xFF]),
        ("UTF-16LE", .utf16LittleEndian, []),
        ("UTF-16BE", .utf16BigEndian, []),
        ("UTF-32", .utf32LittleEndian, [0xFF, 0xFE, 0x00, 0x00]),
        ("UTF-32", .utf32BigEndian, [0x00, 0x00, 0xFE, 0xFF]),
        ("UTF-32LE", .utf32LittleEndian, []),
        ("UTF-32BE", .utf32BigEndian, []),
        ("ISO-8859-1", .isoLatin1, []),
        ("windows-1252", .windowsCP1252, [])
    ]

    @Test func aDocumentTypeIsRefusedInEveryEncoding() throws {
        for (name, encoding, bom) in Self.encodings {
            let data = try Self.encode(Self.hostile, encoding, declared: name, bom: bom)
            #expect("\(name) \(bom)") { try Model(xcodeModelXML: data, file: "hostile.xml") } throws: { error in
                let error = try #require(error as? ModelError)
                return error.code == .invalidFormat && error.line == 2 && error.file == "hostile.xml"
                    && error.message.contains("declares a document type")
            }
        }
    }

    @Test func aDocumentTypeHiddenBetweenNulCharactersIsRefused() throws {
        // Valid UTF-8 whose characters are NUL-padded reads, to a parser guessing from the first
        // bytes, as UTF-32 or UTF-16 holding a document type that no byte sequence shows.
        let body = Self.hostile.replacingOccurrences(of: "<?xml version=\"1.0\" encoding=\"ENCODING\"?>\n", with: "")
        let padded: [(String, [UInt8])] = [
            ("UTF-32BE", body.utf8.flatMap { [0, 0, 0, $0] }), ("UTF-16LE", body.utf8.flatMap { [$0, 0] })
        ]
        for (name, bytes) in padded {
            for prefix in [[0xEF, 0xBB, 0xBF], Array(#"<?xml version="1.0"?>"#.utf8)] as [[UInt8]] {
                #expect("\(name) after \(prefix.count) bytes") { try Model(xcodeModelXML: Data(prefix + bytes), file: "nul.xml") } throws: { error in
                    let error = try #require(error as? ModelError)
                    return error.code == .invalidFormat && error.file == "nul.xml" && error.message.contains("U+0")
                }
            }
        }
    }

    @Test func everyEncodingReadsTheSameModel() throws {
        let expected = try Model(xcodeModelXML: Data(Self.plain.replacingOccurrences(of: "ENCODING", with: "UTF-8").utf8))
        #expect(expected.entities[0].name == "Café" && expected.entities[0].attributes[0].defaultValue == .string("naïve"))
        for (name, encoding, bom) in Self.encodings {
            let data = try Self.encode(Self.plain, encoding, declared: name, bom: bom)
            #expect(try Model(xcodeModelXML: data) == expected, "\(name) \(bom)")
        }
        // Lines keep their numbers whatever the encoding: the entity without a name is on line 4.
        let broken = Self.plain.replacingOccurrences(of: "</model>", with: "<entity representedClassName=\"Café\"/>\n</model>")
        for (name, encoding, bom) in Self.encodings {
            let data = try Self.encode(broken, encoding, declared: name, bom: bom)
            #expect("\(name) \(bom)") { try Model(xcodeModelXML: data) } throws: { ($0 as? ModelError)?.line == 4 }
        }
    }

    @Test func anEncodingCairnDoesNotReadIsNamed() throws {
        for declared in ["EBCDIC-US", "UTF-7", "Shift_JIS", "UTF-16"] {
            let data = Data(Self.plain.replacingOccurrences(of: "ENCODING", with: declared).utf8)
            #expect("\(declared)") { try Model(xcodeModelXML: data, file: "odd.xml") } throws: { error in
                let error = try #require(error as? ModelError)
                return error.code == .invalidFormat && error.message.contains(declared) && error.file == "odd.xml"
            }
        }
        // Bytes that are not text in the document's encoding name the line.
        var bytes = Array(Self.plain.replacingOccurrences(of: "ENCODING", with: "UTF-8").utf8)
        let third = try #require(bytes.indices.filter { bytes[$0] == UInt8(ascii: "\n") }.dropFirst(1).first)
        bytes.insert(0xFF, at: third + 5)
        #expect { try Model(xcodeModelXML: Data(bytes), file: "bad.xml") } throws: { error in
            let error = try #require(error as? ModelError)
            return error.line == 3 && error.message.contains("not valid UTF-8")
        }
    }
}
