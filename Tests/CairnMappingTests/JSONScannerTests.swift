import CairnTestSupport
import Foundation
import Testing
@testable import CairnMapping

/// The JSON scanner: the grammar, strings, numbers, and hostile input.
@Suite struct JSONScannerTests {
    /// The tokens of `text`, in a short written form (`{ k:a s:b n:1 }`), or the error.
    static func tokens(_ text: String, sequence: Bool = false) -> Result<[String], JSONSyntaxError> {
        tokens(Array(text.utf8), sequence: sequence)
    }

    static func tokens(
        _ bytes: [UInt8], sequence: Bool = false, depth: Int = JSONScanner.defaultMaximumDepth, trailingCommas: Bool = false
    ) -> Result<[String], JSONSyntaxError> {
        bytes.withUnsafeBytes { buffer in
            var scanner = JSONScanner(buffer, maximumDepth: depth, allowsValueSequence: sequence, allowsTrailingCommas: trailingCommas)
            var out: [String] = []
            do throws(JSONSyntaxError) {
                while let token = try scanner.next() {
                    switch token {
                    case .beginObject: out.append("{")
                    case .endObject: out.append("}")
                    case .beginArray: out.append("[")
                    case .endArray: out.append("]")
                    case .key(let text): out.append("k:" + scanner.string(text))
                    case .string(let text): out.append("s:" + scanner.string(text))
                    case .number(let number): out.append("n:" + scanner.text(number))
                    case .boolean(let flag): out.append(flag ? "true" : "false")
                    case .null: out.append("null")
                    }
                }
                return .success(out)
            } catch {
                return .failure(error)
            }
        }
    }

    static func error(_ text: String) -> JSONSyntaxError? {
        if case .failure(let error) = tokens(text) { return error }
        return nil
    }

    @Test func validDocumentsGiveTheirTokens() throws {
        #expect(
            try Self.tokens(#"{"a": [1, -2.5e3, true, false, null], "b": {"c": "d"}, "e": []}"#).get() == [
                "{", "k:a", "[", "n:1", "n:-2.5e3", "true", "false", "null", "]", "k:b", "{", "k:c", "s:d", "}", "k:e", "[", "]", "}"
            ])
        #expect(try Self.tokens(" \n\t\"top\"\r\n").get() == ["s:top"])
        #expect(try Self.tokens("0").get() == ["n:0"])
        #expect(try Self.tokens("{}").get() == ["{", "}"])
        #expect(try Self.tokens("{\"a\":1}\n{\"a\":2}\n", sequence: true).get() == ["{", "k:a", "n:1", "}", "{", "k:a", "n:2", "}"])
        #expect(try Self.tokens("", sequence: true).get() == [])
        // White space after every ':' and ',' (read without a second call for the token after them).
        #expect(
            try Self.tokens("{\"a\" :\n 1 ,\r\n\t\"b\":[ 2 ,3,\n\"x\" ],\"c\":{ }}").get() == [
                "{", "k:a", "n:1", "k:b", "[", "n:2", "n:3", "s:x", "]", "k:c", "{", "}", "}"
            ])
    }

    @Test(arguments: [
        ("", "no JSON value", 0),
        ("[1, 2", "ends inside an array", 5),
        ("{\"a\" 1}", "expected ':'", 5),
        ("{\"a\":1,}", "a trailing comma before '}'", 6),
        ("[1,]", "a trailing comma before ']'", 2),
        ("[1 2]", "expected ',' or ']'", 3),
        ("{a:1}", "expected a string key", 1),
        ("tru", "ends inside a literal", 0),
        ("nul!", "expected null", 3),
        ("01", "may not start with 0", 0),
        ("-", "must be followed by a digit", 1),
        ("1.", "'.' in a number", 2),
        ("1e", "exponent needs a digit", 2),
        ("1e+", "exponent needs a digit", 3),
        ("1.5E-", "exponent needs a digit", 5),
        ("-01", "may not start with 0", 0),
        ("[1, -01]", "may not start with 0", 4),
        ("[1, 2e]", "exponent needs a digit", 6),
        ("-x", "must be followed by a digit", 1),
        ("1.e5", "'.' in a number", 2),
        ("[1] 2", "after the JSON value", 4),
        ("+1", "expected a value", 0),
        ("\"a\nb\"", "control character", 2),
        ("\"\\x\"", "invalid escape", 1),
        ("\"\\u12G4\"", "four hex digits", 5),
        ("\"\\ud800\"", "high surrogate", 1),
        ("\"\\udc00\"", "low surrogate", 1),
        ("\"abc", "ends inside a string", 0),
        ("1 2", "after the JSON value", 2),
        ("[1]]", "after the JSON value", 3),
        ("{\"a\":1, b:2}", "expected a string key", 8),
        ("{\"a\":1, ", "ends inside an object", 8),
        ("[1, ", "ends inside an array", 4),
        ("{\"a\": ", "ends inside an object", 6),
        ("[1, ,2]", "expected a value", 4),
        ("{\"a\": }", "expected a value", 6)
    ])
    func malformedTextIsAnErrorAtItsOffset(text: String, message: String, offset: Int) {
        let error = Self.error(text)
        #expect(error?.message.contains(message) == true, "\(text.debugDescription): \(String(describing: error))")
        #expect(error?.offset == offset, "\(text.debugDescription): \(String(describing: error))")
    }

    @Test func errorsGiveLineAndColumn() {
        let error = Self.error("{\n  \"a\": 1,\n  \"b\" 2\n}")
        #expect(error?.line == 3 && error?.column == 7)
        #expect(error?.description.hasPrefix("line 3, column 7 (byte 18): expected ':'") == true)
    }

    @Test func stringsAreUnescapedAndCheckedAsUTF8() throws {
        #expect(
            try Self.tokens(#"["a\"b\\c\/d\b\f\n\r\t", "\u00e9\u4e2d\ud83d\ude00", "é中😀"]"#).get() == [
                "[", "s:a\"b\\c/d\u{8}\u{c}\n\r\t", "s:é中😀", "s:é中😀", "]"
            ])
        // Invalid UTF-8: a stray continuation byte, an overlong form, a surrogate, above U+10FFFF, truncated.
        for bytes: [UInt8] in [[0x80], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE4, 0xB8]] {
            let text = [UInt8(ascii: "\"")] + bytes + [UInt8(ascii: "\"")]
            guard case .failure(let error) = Self.tokens(text) else {
                Issue.record("\(bytes) should be refused")
                continue
            }
            #expect(error.message.contains("UTF-8"), "\(bytes): \(error)")
            #expect(error.offset >= 1)
        }
        let keyed = Array(#"{"name": "x"}"#.utf8)
        keyed.withUnsafeBytes { buffer in
            var scanner = JSONScanner(buffer)
            _ = try? scanner.next()
            if case .key(let key)? = try? scanner.next() {
                #expect(scanner.string(key, equals: "name") && !scanner.string(key, equals: "nam"))
            } else {
                Issue.record("expected a key")
            }
        }
    }

    @Test func numbersConvertExactlyOrNotAtAll() throws {
        let text = Array(
            "[0, -0, 9223372036854775807, -9223372036854775808, 9223372036854775808, 1.5, 1e3, 1e400, 12.50, 123456789012345678901234567890123456789012]".utf8)
        try text.withUnsafeBytes { buffer in
            var scanner = JSONScanner(buffer)
            var numbers: [JSONNumberText] = []
            while let token = try scanner.next() { if case .number(let number) = token { numbers.append(number) } }
            #expect(numbers.map { scanner.integer($0) } == [0, 0, Int64.max, Int64.min, nil, nil, nil, nil, nil, nil])
            #expect(scanner.double(numbers[5]) == 1.5 && scanner.double(numbers[6]) == 1000 && scanner.double(numbers[7]) == nil)
            #expect(scanner.decimal(numbers[8]) == Decimal(string: "12.5"))
            #expect(scanner.decimal(numbers[4]) == Decimal(string: "9223372036854775808"))
            #expect(scanner.decimal(numbers[9]) == nil, "42 significant digits do not fit a Decimal exactly")
        }
    }

    @Test func nestingPastSixtyFourLevelsKeepsEachContainersKind() throws {
        // Objects and arrays by turns 200 deep (the stack keeps the first 64 in a word): each
        // closes with its own bracket, and a wrong one is an error at every depth.
        let depth = 200
        var text = ""
        for level in 0..<depth { text += level % 3 == 0 ? #"{"k":"# : "[" }
        text += "1"
        for level in (0..<depth).reversed() { text += level % 3 == 0 ? "}" : "]" }
        guard case .success(let tokens) = Self.tokens(Array(text.utf8)) else {
            Issue.record("a valid document refused")
            return
        }
        #expect(tokens.filter { $0 == "}" }.count == (depth + 2) / 3)
        #expect(tokens.filter { $0 == "]" }.count == depth - (depth + 2) / 3)
        for wrong in [1, 64, 65, 130, depth] {
            var bytes = Array(text.utf8)
            let closer = bytes.count - wrong
            bytes[closer] = bytes[closer] == UInt8(ascii: "}") ? UInt8(ascii: "]") : UInt8(ascii: "}")
            guard case .failure(let error) = Self.tokens(bytes) else {
                Issue.record("a wrong closer \(wrong) from the end accepted")
                continue
            }
            #expect(error.offset == closer, "closer \(wrong) from the end")
        }
    }

    /// Skipping an array of plain values in one loop (`skipFlatArray`) ends where reading it
    /// token by token ends, in the same state, and leaves every error to the token reader: random
    /// arrays of numbers, strings, literals, nested containers, white space, escapes, DEL and
    /// stray bytes. What it says it read (white space, plain strings) is what the array holds.
    @Test func skippingAnArrayAgreesWithReadingItTokenByToken() {
        // The one loop reads plain arrays itself (else the comparison below would hold trivially).
        let plain: [(String, JSONScanner.FlatArrayText?)] = [
            (#"[1,"a",true,null, -2.5e3 ,false]"#, .init(spaces: 2, plainStrings: true)), ("[]", .init()), ("[ ]", .init(spaces: 1)),
            ("[\n\t1 ,\r\"b\\\"c\"]", .init(spaces: 4, plainStrings: false)), ("[\"\u{7F}\"]", .init(plainStrings: false)),
            ("[1,[2]]", nil), ("[1,]", nil), ("[01]", nil), ("[1.]", nil), ("[1e]", nil), ("[-]", nil)
        ]
        for (text, read) in plain {
            Array(text.utf8).withUnsafeBytes { buffer in
                var scanner = JSONScanner(buffer)
                #expect((try? scanner.next()) == .beginArray)
                #expect(scanner.skipFlatArray() == read, "\(text)")
                #expect(scanner.offset == (read != nil ? buffer.count : 1) && scanner.depth == (read != nil ? 0 : 1), "\(text)")
            }
        }
        var generator = SeededRandom(seed: 41)
        let pieces = [
            "1", "-2.5e3", "0", "01", "-", "\"a\"", "\"b\\\"c\"", "\"\\x\"", "true", "false", "null", "nul", "[]", "[1,2]", "{}", "{\"k\":1}", " ",
            "\n", ",", "]", "x", "\"d\u{7F}\"", "1.5", "-0", "2E+7", "0.e1"
        ]
        for _ in 0..<5_000 {
            var text = "{\"a\":["
            for _ in 0..<Int.random(in: 0...6, using: &generator) {
                text += pieces.randomElement(using: &generator) ?? ""
                if Bool.random(using: &generator) { text += "," }
            }
            text += Bool.random(using: &generator) ? "]" : ""
            text += ",\"b\":2}"
            for trailingCommas in [false, true] {
                let outcomes = Array(text.utf8).withUnsafeBytes { buffer in
                    [true, false].map { skipping -> String in
                        var scanner = JSONScanner(buffer, allowsTrailingCommas: trailingCommas)
                        do throws(JSONSyntaxError) {
                            _ = try scanner.next()  // {
                            _ = try scanner.next()  // "a"
                            guard try scanner.next() == .beginArray else { return "no array" }
                            if skipping {
                                let open = scanner.offset - 1
                                if let flat = scanner.skipFlatArray() {
                                    let counted = Self.flatArrayText(Array(buffer[open..<scanner.offset]))
                                    guard flat == counted else { return "skipFlatArray read \(flat), the array holds \(counted)" }
                                } else {
                                    try scanner.skip(.beginArray)
                                }
                            } else {
                                while let token = try scanner.next(), !(token == .endArray && scanner.depth == 1) {}
                            }
                            var rest: [String] = ["\(scanner.offset) \(scanner.depth)"]
                            while let token = try scanner.next() { rest.append("\(token)") }
                            return rest.joined(separator: " ")
                        } catch {
                            return "\(error)"
                        }
                    }
                }
                #expect(outcomes[0] == outcomes[1], "\(text.debugDescription) trailing commas: \(trailingCommas)")
            }
        }
    }

    /// An array's white space between tokens and whether its strings are plain, counted byte by
    /// byte (the array valid JSON).
    private static func flatArrayText(_ bytes: [UInt8]) -> JSONScanner.FlatArrayText {
        var text = JSONScanner.FlatArrayText()
        var inString = false
        var escaped = false
        for byte in bytes {
            if !inString {
                if [0x20, 0x0A, 0x0D, 0x09].contains(byte) { text.spaces += 1 }
                inString = byte == UInt8(ascii: "\"")
            } else if escaped {
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
                text.plainStrings = false
            } else if byte == 0x7F {
                text.plainStrings = false
            } else if byte == UInt8(ascii: "\"") {
                inString = false
            }
        }
        return text
    }

    @Test func hostileInputEndsInAnErrorNotATrapOrAHang() {
        // Nesting 100,000 deep.
        let deep = [UInt8](repeating: UInt8(ascii: "["), count: 100_000)
        guard case .failure(let error) = Self.tokens(deep) else {
            Issue.record("deep nesting accepted")
            return
        }
        #expect(error.message.contains("nest deeper than 512") && error.offset == 512)
        #expect((try? Self.tokens(Array(repeating: UInt8(ascii: "["), count: 10) + Array(repeating: UInt8(ascii: "]"), count: 10), depth: 10).get()) != nil)
        // Truncated at every byte of a document: an error, never a trap.
        let document = Array(#"{"a": [1, "x\u00e9", {"b": null}], "c": -1.5e-3}"#.utf8)
        for end in 0..<document.count {
            guard case .failure = Self.tokens(Array(document[0..<end])) else {
                Issue.record("truncation at \(end) accepted")
                return
            }
        }
        // Every single byte value in place of each byte: a result or an error, never a trap.
        var random = TestSeed.generator()
        for _ in 0..<2_000 {
            var bytes = document
            bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            _ = Self.tokens(bytes)
        }
        // Many keys in one object, streamed: memory does not grow with them.
        var many = Array("{".utf8)
        for index in 0..<200_000 { many += Array("\"k\(index)\":\(index),".utf8) }
        many[many.count - 1] = UInt8(ascii: "}")
        many.withUnsafeBytes { buffer in
            var scanner = JSONScanner(buffer)
            var keys = 0
            while let token = try? scanner.next() { if case .key = token { keys += 1 } }
            #expect(keys == 200_000)
        }
    }
}

/// Number text read without a String agrees with Swift's own reading.
@Suite struct NumberTextTests {
    @Test func doublesAgreeWithSwift() {
        var generator = SystemRandomNumberGenerator()
        var texts = ["0", "-0", "1", "1.5", "-2.25e-3", "1e308", "4.9e-324", "123456789012345678901234567890", "0.1", "2.2250738585072014e-308"]
        for _ in 0..<2000 { texts.append(Double.random(in: -1e12...1e12, using: &generator).description) }
        for text in texts {
            let bytes = Array(text.utf8)
            #expect(bytes.withUnsafeBytes { NumberText.double($0) } == Double(text), "\(text)")
        }
        #expect(Array("1e400".utf8).withUnsafeBytes { NumberText.double($0) } == nil)
        #expect(Array(String(repeating: "1", count: 80).utf8).withUnsafeBytes { NumberText.double($0) } == nil)
    }
}
