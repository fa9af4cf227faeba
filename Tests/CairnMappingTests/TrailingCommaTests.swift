import Cairn
import Foundation
import Testing

@testable import CairnMapping

/// A comma that ends an array or an object (`[1,2,]`, `{"a":1,}`) is read only when asked
/// (``ImportOptions/allowsTrailingCommas``), by the scanner, the stream check and every import
/// path alike; otherwise it is an error at the comma that names the option. A comma with no
/// value before it is refused either way.
@Suite struct TrailingCommaTests {
    /// The tokens of `text` (as ``JSONScannerTests`` writes them), or the error.
    static func tokens(_ text: String, allowing: Bool) -> Result<[String], JSONSyntaxError> {
        JSONScannerTests.tokens(Array(text.utf8), sequence: true, trailingCommas: allowing)
    }

    /// Each input with trailing commas, and the same without them.
    static let withAndWithout: [(String, String)] = [
        ("[1,2,]", "[1,2]"),
        (#"{"a":1,}"#, #"{"a":1}"#),
        ("[1 , \n\t]", "[1]"),
        (#"{"a": [1, {"b": [],},], "c": {"d": "x,]",},}"#, #"{"a": [1, {"b": []}], "c": {"d": "x,]"}}"#),
        ("[[1,],[2,],]\n{\"e\":{},}\n", "[[1],[2]]\n{\"e\":{}}\n")
    ]

    @Test(arguments: withAndWithout.indices)
    func allowedTheyReadAsIfAbsent(index: Int) throws {
        let (with, without) = Self.withAndWithout[index]
        #expect(try Self.tokens(with, allowing: true).get() == Self.tokens(without, allowing: false).get())
        // Strict: an error at the first trailing comma, naming the option both ways it is given.
        guard case .failure(let error) = Self.tokens(with, allowing: false) else {
            Issue.record("\(with.debugDescription) was read without the option")
            return
        }
        #expect(error.message.contains("trailing comma") && error.isTrailingComma, "\(error)")
        #expect(error.importDescription.contains("allowsTrailingCommas") && error.importDescription.contains("--allow-trailing-commas"), "\(error)")
        #expect(Array(with.utf8)[error.offset] == UInt8(ascii: ","), "\(with.debugDescription): \(error)")
    }

    @Test(arguments: ["[,]", "{,}", "[1,,2]", "[1,,]", #"{"a":1,,}"#, #"{"a":,}"#, #"{"a",}"#, "[,1]", "1,", "[1],", #"{"a":1},"#, "[1,]]"])
    func aCommaWithNoValueBeforeItIsRefusedEitherWay(text: String) {
        for allowing in [false, true] {
            guard case .failure(let error) = Self.tokens(text, allowing: allowing) else {
                Issue.record("\(text.debugDescription) was read (allowing: \(allowing))")
                continue
            }
            if allowing { #expect(!error.message.contains("trailing comma"), "\(text.debugDescription): \(error)") }
        }
    }

    @Test func theStreamCheckReadsThemWhenAllowedHoweverTheStreamIsCut() {
        let text = "[{\"a\": 1, \"b\": [1, 2 ,],},\n{\"a\": 2,}\n,\n]\n{\"c\": [],}"
        let bytes = Array(text.utf8)
        guard case .failure(let whole) = Self.tokens(text, allowing: false) else {
            Issue.record("read without the option")
            return
        }
        for allowing in [false, true] {
            for cut in 0...bytes.count {
                var check = JSONStreamCheck(allowsTrailingCommas: allowing)
                var refused: JSONSyntaxError?
                for (start, end, atEnd) in [(0, cut, false), (-1, bytes.count, true)] {
                    let from = start < 0 ? check.checkedUpTo : start
                    refused = bytes.withUnsafeBytes { buffer -> JSONSyntaxError? in
                        do throws(JSONSyntaxError) {
                            try check.check(UnsafeRawBufferPointer(rebasing: buffer[from..<end]), atEnd: atEnd)
                            return nil
                        } catch {
                            return error
                        }
                    }
                    if refused != nil { break }
                }
                if allowing {
                    #expect(refused == nil, "cut at \(cut): \(String(describing: refused))")
                } else {
                    // At the first trailing comma, as the scanner says of the whole input.
                    #expect(refused?.offset == whole.offset && refused?.message == whole.message, "cut at \(cut): \(String(describing: refused))")
                }
            }
        }
    }

    static let flatRecords = "[{\"ticket\": 1, \"name\": \"Ada\",},\n {\"ticket\": 2, \"name\": \"Bob\", \"visits\": 3,},\n]"
    static let nestedRecords = "[{\"ticket\": 1, \"employer\": {\"code\": \"C\", \"name\": \"Co\",},},\n {\"ticket\": 2, \"employer\": \"C\",},]"

    /// The export of every person and company after importing `input` with `options`, or the error.
    static func imported(_ input: String, _ options: ImportOptions, chunks: Bool = false) async throws -> Result<[UInt8], MappingError> {
        let model = try MapperFixtures.model()
        let mapping = try Mapping(model: model) { EntityMapping("Person") { RelationshipMap("employer", from: "employer") } }
        let store = Store(inMemory: model)
        do {
            if chunks {
                let pieces = AsyncStream<[UInt8]> { continuation in
                    for byte in input.utf8 { continuation.yield([byte]) }
                    continuation.finish()
                }
                _ = try await store.importJSON(from: pieces, into: "Person", mapping: mapping, options: options)
            } else {
                _ = try await store.importJSON(Array(input.utf8), into: "Person", mapping: mapping, options: options)
            }
        } catch let error as MappingError {
            return .failure(error)
        }
        var export = try store.viewContext.exportJSON(FetchRequest("Person", sortKeys: [SortKey("ticket")]), mapping: mapping)
        export += try store.viewContext.exportJSON(FetchRequest("Company", sortKeys: [SortKey("code")]), mapping: mapping)
        return .success(export)
    }

    /// Flat records (read straight into rows) and records with a relationship (applied in a
    /// context, and read again from their bytes), from bytes and from a stream of chunks.
    @Test(arguments: [(flatRecords, false), (nestedRecords, false), (flatRecords, true), (nestedRecords, true)])
    func bothImportPathsReadThemWhenAllowed(input: String, chunks: Bool) async throws {
        let without = input.replacingOccurrences(of: ",}", with: "}").replacingOccurrences(of: ",\n]", with: "]").replacingOccurrences(of: ",]", with: "]")
        var allowing = ImportOptions()
        allowing.allowsTrailingCommas = true
        let expected = try await Self.imported(without, ImportOptions()).get()
        #expect(try await Self.imported(input, allowing, chunks: chunks).get() == expected)
        var lenient = allowing
        lenient.lenient = true
        #expect(try await Self.imported(input, lenient, chunks: chunks).get() == expected)
        guard case .failure(let error) = try await Self.imported(input, ImportOptions(), chunks: chunks) else {
            Issue.record("imported without the option")
            return
        }
        #expect(error.code == .invalidJSON && error.message.contains("allowsTrailingCommas"), "\(error)")
        #expect(error.offset.map { Array(input.utf8)[$0] } == UInt8(ascii: ","), "\(error)")
    }

    /// A large input read on two cores: the second reader reads trailing commas as the first does.
    @Test func theSecondReaderReadsThemToo() async throws {
        let records = TwoCoreReadTests.records(count: 6_000).map { $0.replacingOccurrences(of: "}", with: ",}") }
        let input = "[" + records.joined(separator: ",\n") + ",\n]"
        var options = ImportOptions()
        options.allowsTrailingCommas = true
        let model = try MapperFixtures.model()
        let mapping = try MapperFixtures.mapping(model)
        let two = Store(inMemory: model)
        let result = try await two.importJSON(Array(input.utf8), into: "Person", mapping: mapping, options: options)
        if ProcessInfo.processInfo.activeProcessorCount >= 2 { #expect(result.recordsReadOnSecondCore > 0, "the second reader's work was dropped") }
        options.chunkSize = .max  // one reader
        let one = Store(inMemory: model)
        let serial = try await one.importJSON(Array(input.utf8), into: "Person", mapping: mapping, options: options)
        TwoCoreReadTests.expectSame(
            (result, try two.viewContext.exportJSON(FetchRequest("Person", sortKeys: [SortKey("ticket")]), mapping: mapping)),
            (serial, try one.viewContext.exportJSON(FetchRequest("Person", sortKeys: [SortKey("ticket")]), mapping: mapping)), "two readers")
        // Strict, both readers name the same comma.
        var strict = ImportOptions()
        strict.chunkSize = nil
        await #expect {
            _ = try await Store(inMemory: model).importJSON(Array(input.utf8), into: "Person", mapping: mapping, options: strict)
        } throws: { error in
            (error as? MappingError)?.code == .invalidJSON && (error as? MappingError)?.message.contains("allowsTrailingCommas") == true
        }
    }
}
