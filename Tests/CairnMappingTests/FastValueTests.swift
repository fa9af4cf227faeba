import Cairn
import CairnSupport
import CairnTestSupport
import Foundation
import Testing

@testable import CairnMapping

/// Flat records write each value straight from its bytes (`FastValue`); records read through a
/// context go through `ValueReader`. For every attribute type and date convention, the same
/// JSON values, good and bad, leave the same values and the same warnings both ways.
@Suite struct FastValueTests {
    static func model() throws -> Model {
        try Model {
            Entity("Thing") {
                Attribute("id", .integer64, optional: false)
                Attribute("text", .string)
                Attribute("small", .integer16)
                Attribute("count", .integer64)
                Attribute("ratio", .double)
                Attribute("money", .decimal)
                Attribute("flag", .boolean)
                Attribute("iso", .date)
                Attribute("day", .date)
                Attribute("stamp", .date)
                Attribute("seconds", .date)
                Attribute("millis", .date)
                Attribute("identifier", .uuid)
                Attribute("link", .uri)
                Attribute("blob", .binary)
                Attribute("json", .string)
                Attribute("jsonBytes", .binary)
                Attribute("blob64", .binary)
                Unique("id")
            }
        }
    }

    static func mapping(_ model: Model, coercing: Bool = true) throws -> Mapping {
        try Mapping(model: model) {
            EntityMapping("Thing") {
                AttributeMap("small", coercesText: coercing)
                AttributeMap("count", coercesText: coercing)
                AttributeMap("ratio", coercesText: coercing)
                AttributeMap("money", coercesText: coercing)
                AttributeMap("iso", date: .iso8601(defaultOffset: 3600))
                AttributeMap("day", date: .pattern("yyyy-MM-dd"))
                AttributeMap("stamp", date: .pattern("EEE, dd MMM yyyy HH:mm:ss Z"))
                AttributeMap("seconds", date: .unixSeconds)
                AttributeMap("millis", date: .unixMilliseconds)
                AttributeMap("json", transformer: "json")
                AttributeMap("jsonBytes", transformer: "json")
                AttributeMap("blob64", transformer: "base64")
            }
        }
    }

    /// Per attribute, JSON values to try: each the fast path takes, and some it leaves.
    static let values: [(attribute: String, json: [String])] = [
        ("text", [#""plain""#, #""with \"escape\"""#, #""ünïcödé""#, "12", "true", "null", "[1]"]),
        ("small", ["12", "-32768", "32768", "1.0", "2e3", #""42""#, #""-7""#, #""4.5""#, #""x""#, #""Infinity""#, "true", "null"]),
        ("count", ["9223372036854775807", "-9223372036854775808", "9223372036854775808", #""123""#, #""0012""#, "1e2", "0.5"]),
        (
            "ratio",
            [
                "1.5", "-0.0", "1e308", "1e309", "2", #""3.25""#, #""-Infinity""#, #""NaN""#, #""1,5""#, "false", "-0", #""-0""#, #""9007199254740993""#,
                "-9007199254740993", "9223372036854775807", #""12""#
            ]
        ),
        (
            "money",
            [
                "1234.56", "-0.10", "0", "1e3", "0.000123", "12345678901234567890123456789012345678", "123456789012345678901234567890123456789",
                "1e70", "1e-70", #""99.90""#, #""-1.5e2""#, #""12.x""#, #""Infinity""#, #""NaN""#, "true", "null"
            ]
        ),
        ("flag", ["true", "false", "0", "1", "2", #""yes""#, #""NO""#, #""Y""#, #""n""#, #""TRUE""#, #""1""#, #""maybe""#, #""""#, "null"]),
        ("iso", [#""2024-05-01""#, #""2024-05-01T09:30:00Z""#, #""2024-05-01T09:30:00.123+02:00""#, #""2024-13-01""#, "1700000000", "1.5"]),
        ("day", [#""2024-05-01""#, #""1969-12-31""#, #""2024-02-30""#, #""2024-5-1""#, #""0000-01-01""#, "86400", #""""#]),
        ("stamp", [#""Wed, 01 May 2024 09:30:00 +0200""#, #""Mon, 31 Dec 1999 23:59:59 Z""#, #""01 May 2024""#]),
        (
            "seconds",
            [
                "1700000000", "1700000000.25", "1700000000000", #""1700000000""#, #""17e8""#, "-62135596801", "1e20", #""soon""#, #""-0""#, "-0",
                #""0""#, #""9007199254740993""#, "-9007199254740993", #""-1700000000""#, #""007""#
            ]
        ),
        ("millis", ["1700000000123", "-1", #""1700000000123""#, "1e30"]),
        (
            "identifier",
            [
                #""E621E1F8-C36C-495A-93FC-0C247A3E6E5F""#, #""e621e1f8-c36c-495a-93fc-0c247a3e6e5f""#, #""E621E1F8C36C495A93FC0C247A3E6E5F""#,
                #""E621E1F8-C36C-495A-93FC-0C247A3E6E5G""#, #""{E621E1F8-C36C-495A-93FC-0C247A3E6E5F}""#
            ]
        ),
        ("link", [#""https://example.com/a/b?c=d&e=%20#f""#, #""http://localhost:8080""#, #""mailto:a@b.c""#, #""http://a b""#, #""http://[::1""#, #""""#]),
        ("blob", [#""QUJD""#, #""QQ==""#, #""QR==""#, #""""#, #""QUJ""#, #""Q===""#, #""QU JD""#, #""QUI-""#, #""+/+/""#, #""AAAA""#]),
        ("json", jsonValues),
        ("jsonBytes", jsonValues),
        ("blob64", [#""QUJD""#, #""QQ==""#, #""QR==""#, #""""#, #""QUJ""#, #""Q===""#, #""QU JD""#, "12", "[1]", "null"])
    ]

    /// Values for the built-in `json` transformer: compact and spaced arrays and objects, strings
    /// with escapes and DEL (which it writes otherwise), and values it refuses.
    static let jsonValues = [
        "[1,2,3]", "[1, 2 ,\n 3]", #"{"a": [1, {"b": "c d"}], "e": null, "a": true}"#, #"{"a":"x\"y"}"#, #"["\u00e9", "é"]"#,
        "[\"\u{7F}\"]", "[1.50,-0,2e3,-1E-2]", "[]", "{}", "[[[[]]],{}]", #""text""#, "12", "false", "null", #"[ "c d" , true ]"#,
        #"[ "a\"b" ]"#, "[\t]", "[1,[2]]"
    ]

    /// Records of one value each, in a file.
    static func input(_ attribute: String, _ json: [String]) -> [UInt8] {
        Array(("[" + json.enumerated().map { #"{"id": \#($0.offset), "\#(attribute)": \#($0.element)}"# }.joined(separator: ",\n") + "]").utf8)
    }

    @Test(arguments: [true, false]) func bothPathsReadEveryValueAlike(coercing: Bool) async throws {
        let model = try Self.model()
        let mapping = try Self.mapping(model, coercing: coercing)
        var lenient = ImportOptions()
        lenient.lenient = true
        var viaContext = lenient
        viaContext.afterImport = { _ in }  // a hook needs objects: the context path
        for (attribute, json) in Self.values {
            let fast = Store(inMemory: model)
            let slow = Store(inMemory: model)
            let input = Self.input(attribute, json)
            let a = try await fast.importJSON(input, into: "Thing", mapping: mapping, options: lenient)
            let b = try await slow.importJSON(input, into: "Thing", mapping: mapping, options: viaContext)
            #expect(a.warnings.map(\.description) == b.warnings.map(\.description), "\(attribute)")
            let request = FetchRequest("Thing", sortKeys: [SortKey("id")])
            let left = try fast.viewContext.fetch(request).map { "\($0[attribute] ?? .null)" }
            let right = try slow.viewContext.fetch(request).map { "\($0[attribute] ?? .null)" }
            #expect(left == right, "\(attribute): \(json)")
            #expect(left.count == json.count)
        }
    }

    /// The `json` transformer's value read in place gives up, the scanner back at the value's
    /// start, on what it does not copy: a syntax error inside (the same error both ways), a value
    /// over 1,000,000 bytes, a trailing comma (read when allowed).
    @Test func jsonTextGivesUpWhereTheTransformerDecides() async throws {
        let model = try Self.model()
        let mapping = try Self.mapping(model)
        let big = "[" + Array(repeating: "1", count: 600_000).joined(separator: ",") + "]"
        let inputs = [
            #"[{"id": 1, "json": [1, 2,, 3]}]"#, #"[{"id": 1, "json": {"a": [1}, "text": "x"}]"#, #"[{"id": 1, "json": \#(big), "text": "after"}]"#,
            #"[{"id": 1, "json": [1, [2, 3,], {"a": 4,}], "text": "after"}]"#
        ]
        for (index, text) in inputs.enumerated() {
            var outcomes: [String] = []
            for viaContext in [false, true] {
                var options = ImportOptions()
                options.allowsTrailingCommas = index == 3
                if viaContext { options.afterImport = { _ in } }
                let store = Store(inMemory: model)
                do {
                    _ = try await store.importJSON(Array(text.utf8), into: "Thing", mapping: mapping, options: options)
                    let thing = try store.viewContext.fetchFirst(FetchRequest("Thing"))
                    outcomes.append("\(thing?["json"] ?? .null) \(thing?["text"] ?? .null)")
                } catch {
                    outcomes.append("\(error)")
                }
            }
            #expect(outcomes[0] == outcomes[1], "input \(index)")
            if index >= 2 { #expect(outcomes[0].hasSuffix("\"after\""), "input \(index): \(outcomes[0].suffix(80))") }
        }
    }

    /// Number text read without `strtod` where it can be (Clinger's fast path) reads as
    /// `strtod` does, to the bit: random digits, points, exponents and signs.
    @Test func numberTextReadsAsStrtodDoes() {
        var generator = SeededRandom(seed: 34)
        var texts = ["0", "-0", "0.0", "-0.0", "1e22", "1e23", "123456789012345", "1234567890123456", "9007199254740993", "0.1", "1.7976931348623157e308"]
        texts += ["4.9e-324", "1e-22", "1e-23", "00.5", "1.", ".5", "1e", "1e+", "--1", "1.2.3", "0e400", "1e-400", "12345e-27", "1E5"]
        for _ in 0..<20_000 {
            var text = Bool.random(using: &generator) ? "-" : ""
            let digits = Int.random(in: 1...18, using: &generator)
            let point = Int.random(in: 0...digits, using: &generator)
            for index in 0..<digits {
                if index == point && index > 0 { text += "." }
                text += String(Int.random(in: (index == 0 ? 1 : 0)...9, using: &generator))
            }
            if Int.random(in: 0..<3, using: &generator) == 0 { text += "e\(Int.random(in: -30...30, using: &generator))" }
            texts.append(text)
        }
        for text in texts {
            let fast = Array(text.utf8).withUnsafeBytes { NumberText.double($0) }
            let expected = Double(text).flatMap { $0.isFinite ? $0 : nil }
            #expect(fast?.bitPattern == expected?.bitPattern, "\(text): \(String(describing: fast)) against \(String(describing: expected))")
        }
    }

    @Test func decimalsKeepEveryDigit() async throws {
        let model = try Self.model()
        let store = Store(inMemory: model)
        let input = Self.input("money", ["1234.56", "-0.10", #""99.90""#, "12345678901234567890123456789012345678", "1e3", "0.000123"])
        _ = try await store.importJSON(input, into: "Thing", mapping: try Self.mapping(model))
        let stored = try store.viewContext.fetch(FetchRequest("Thing", sortKeys: [SortKey("id")])).map { "\($0["money"] ?? .null)" }
        #expect(stored == ["1234.56", "-0.1", "99.9", "12345678901234567890123456789012345678", "1000", "0.000123"])
    }

    @Test func uuidTextReadsAsFoundationDoes() {
        let samples = [
            "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "e621e1f8-c36c-495a-93fc-0c247a3e6e5f", "E621E1F8C36C495A93FC0C247A3E6E5F",
            "E621E1F8-C36C-495A-93FC0C247A3E6E5F-",
            "g621e1f8-c36c-495a-93fc-0c247a3e6e5f", "", "00000000-0000-0000-0000-000000000000"
        ]
        for sample in samples + (0..<200).map({ _ in UUID().uuidString }) {
            let fast = Array(sample.utf8).withUnsafeBytes { UUIDText.uuid($0) }.map { UUID(uuid: $0) }
            #expect(fast == UUID(uuidString: sample), "\(sample)")
        }
    }

    @Test func base64TextDecodesAsFoundationDoes() {
        var generator = SeededRandom(seed: 64)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_ \n".utf8)
        var samples = ["", "QQ==", "QQ", "QR==", "QUI=", "QUJD", "QUJ", "QQ==QQ==", "Q===", "====", "QUJD\n", "QU JD", "QUI-", "QUI_", "AA=A"]
        for _ in 0..<3_000 {
            let length = Int.random(in: 0...12, using: &generator)
            samples.append(String(decoding: (0..<length).map { _ in alphabet.randomElement(using: &generator)! }, as: UTF8.self))
        }
        func fast(_ sample: String) -> [UInt8]? {
            Array(sample.utf8).withUnsafeBytes { text -> [UInt8]? in
                guard let count = Base64Text.decodedCount(text) else { return nil }
                var decoded = [UInt8](repeating: 0, count: count)
                decoded.withUnsafeMutableBytes { Base64Text.decode(text, into: $0) }
                return decoded
            }
        }
        // What the fast reader takes, it reads as Foundation does; what it leaves (Foundation on
        // Linux also reads some unpadded or oddly padded text: "====", "AA=A") goes to Foundation.
        for sample in samples {
            guard let decoded = fast(sample) else { continue }
            #expect(decoded == Data(base64Encoded: sample).map(Array.init), "\(sample.debugDescription)")
        }
        for _ in 0..<500 {
            let bytes = (0..<Int.random(in: 0...40, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(fast(Data(bytes).base64EncodedString()) == bytes)
        }
    }

    @Test func plainURIsAreURIsToFoundation() {
        let plain = [
            "https://example.com", "http://localhost:8080/", "https://a.b-c.d/path/to?q=1&r=%2F#frag", "ftp://files.example.org/pub/file.tar.gz",
            "https://example.com/~user/(x),;=*+$!@:'"
        ]
        for sample in plain {
            #expect(Array(sample.utf8).withUnsafeBytes(URIText.isPlain), "\(sample)")
            #expect(URL(string: sample) != nil, "\(sample)")
        }
        let others = [
            "", "x", "mailto:a@b.c", "http://[::1]/", "http://a b", "http://a:port/", "http://%/", "1http://a", "http://a:123456/", "http://a/%zz",
            "http://a/b c", "http://a/ä", "http:///x", "http://a/[b]", "urn:isbn:0451450523"
        ]
        for sample in others { #expect(!Array(sample.utf8).withUnsafeBytes(URIText.isPlain), "\(sample)") }
    }

    @Test func uriMasksHoldExactlyLettersDigitsAndTheListedCharacters() {
        for byte in UInt8.min...UInt8.max {
            let scalar = Unicode.Scalar(byte)
            let expected =
                scalar.isASCII
                && (("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                    || URIText.allowedCharacters.unicodeScalars.contains(scalar))
            #expect(URIText.isAllowed(byte) == expected, "byte \(byte)")
        }
    }

    @Test func booleanWords() {
        let words: [String: Bool?] = [
            "true": true, "TRUE": true, "Yes": true, "y": true, "1": true, "false": false, "No": false, "N": false, "0": false, "": nil, "maybe": nil,
            "truee": nil, "2": nil, "ja": nil
        ]
        for (word, value) in words { #expect(Array(word.utf8).withUnsafeBytes(BooleanWord.value) == value, "\(word)") }
    }
}
