import Cairn
import Foundation
import Synchronization
import Testing

@testable import CairnMapping

/// A large input of flat records is read on two cores: a second reader starts at a guessed
/// record boundary near the middle (``InputSplit``). Whatever the guess and whatever the second
/// reader meets, the import must equal the import by one reader: same objects, order, counts,
/// and the same error with the same JSON path.
@Suite struct TwoCoreReadTests {
    /// An unmapped field that makes records long, so that a few thousand records pass the
    /// size read on two cores.
    static let padding = String(repeating: "p", count: 1_000)

    /// Person records `0..<count`; tickets repeat (records from the second half name keys of
    /// the first, later values winning); `record` may replace any record's text.
    static func records(count: Int, record: (Int) -> String? = { _ in nil }) -> [String] {
        (0..<count).map { index in
            record(index)
                ?? #"{"ticket": \#(index % (count * 3 / 4)), "name": "n\#(index)", "visits": \#(index % 1000), "note": "\#(padding)"}"#
        }
    }

    /// Imports `input` into a new store by two readers (the default) or by one (`chunkSize`
    /// set, which reads serially); the result and the export of every person, or the error.
    static func importBothWays(
        _ input: String, prepare: (Store) async throws -> Void = { _ in }
    ) async throws -> (
        two: Result<(ImportResult, [UInt8]), any Error>, one: Result<(ImportResult, [UInt8]), any Error>
    ) {
        let model = try MapperFixtures.model()
        let mapping = try MapperFixtures.mapping(model)
        func run(_ options: ImportOptions) async throws -> Result<(ImportResult, [UInt8]), any Error> {
            let store = Store(inMemory: model)
            try await prepare(store)
            do {
                let result = try await store.importJSON(Array(input.utf8), into: "Person", mapping: mapping, options: options)
                let export = try store.viewContext.exportJSON(FetchRequest("Person", sortKeys: [SortKey("ticket")]), mapping: mapping)
                return .success((result, export))
            } catch {
                return .failure(error)
            }
        }
        var serial = ImportOptions()
        serial.chunkSize = .max
        return (try await run(ImportOptions()), try await run(serial))
    }

    static func expectSame(_ two: (ImportResult, [UInt8]), _ one: (ImportResult, [UInt8]), _ comment: Comment) {
        #expect(two.0.objectIDs == one.0.objectIDs, comment)
        #expect(two.0.inserted == one.0.inserted && two.0.updated == one.0.updated && two.0.unchanged == one.0.unchanged, comment)
        #expect(two.0.records == one.0.records && two.0.saves == one.0.saves, comment)
        #expect(two.1 == one.1, comment)
    }

    @Test(arguments: ["array", "json lines"])
    func twoReadersGiveWhatOneGives(shape: String) async throws {
        let records = Self.records(count: 6_000)
        let input = shape == "array" ? "[\n" + records.joined(separator: ",\n") + "\n]\n" : records.joined(separator: "\n") + "\n"
        #expect(Array(input.utf8).withUnsafeBytes { InputSplit.guess($0) }?.insideArray == (shape == "array"))
        let (two, one) = try await Self.importBothWays(input)
        let a = try two.get(), b = try one.get()
        Self.expectSame(a, b, "\(shape)")
        if ProcessInfo.processInfo.activeProcessorCount >= 2 {
            #expect(a.0.recordsReadOnSecondCore > 1_000, "the second core read part of the input")
        } else {
            #expect(a.0.recordsReadOnSecondCore == 0, "one core: one reader")
        }
        #expect(b.0.recordsReadOnSecondCore == 0)
        #expect(a.0.records == 6_000 && a.0.inserted == 4_500)
    }

    /// Progress counts the records of both readers as they go: counts only grow (the report at
    /// the end may repeat the last), a report before the end counts records past the split,
    /// and the last report counts them all.
    @Test func progressCountsBothReaders() async throws {
        let records = Self.records(count: 6_000)
        let model = try MapperFixtures.model()
        let reports = Reports()
        var options = ImportOptions()
        options.progressInterval = 100
        options.progress = { reports.add($0) }
        let result = try await Store(inMemory: model).importJSON(
            Array(("[" + records.joined(separator: ",\n") + "]").utf8), into: "Person", mapping: try MapperFixtures.mapping(model), options: options)
        let seen = reports.all
        let during = seen.dropLast()  // the report at the end may repeat the last count
        #expect(zip(during, during.dropFirst()).allSatisfy { $0.records < $1.records && $0.bytes <= $1.bytes }, "\(seen.map(\.records))")
        #expect(during.allSatisfy { $0.records <= 6_000 && $0.bytes <= seen.last?.bytes ?? 0 })
        #expect(seen.last?.records == 6_000 && seen.last?.bytes == seen.last?.totalBytes)
        if result.recordsReadOnSecondCore > 0 {
            #expect(seen.dropLast().contains { $0.records > 6_000 - result.recordsReadOnSecondCore }, "\(seen.map(\.records))")
        }
    }

    /// Records on one line each, with unmapped arrays of objects spread over lines inside
    /// them: every line break near the middle is inside a record. The first reader sees it
    /// passed, and its work alone counts.
    @Test func aGuessInsideARecordIsDroppedAndTheFirstReaderGoesOn() async throws {
        let records = Self.records(count: 6_000) { index in
            #"{"ticket": \#(index), "extra": [{"a": 1},"# + "\n" + #"{"a": 2},"# + "\n" + #"{"a": 3}], "note": "\#(Self.padding)"}"#
        }
        let input = "[" + records.joined(separator: ", ") + "]"
        let guess = try #require(Array(input.utf8).withUnsafeBytes { InputSplit.guess($0) })
        #expect(guess.insideArray, "the guess looks like a boundary between records")
        let (two, one) = try await Self.importBothWays(input)
        let a = try two.get(), b = try one.get()
        Self.expectSame(a, b, "a false boundary")
        #expect(a.0.recordsReadOnSecondCore == 0, "the second reader's work is dropped")
        #expect(a.0.inserted == 6_000)
    }

    /// A bad value in the second half: the error names the record by its number in the whole
    /// input, as one reader names it, and nothing is imported.
    @Test func anErrorInTheSecondHalfNamesItsRecordInTheWholeInput() async throws {
        let bad = 4_321
        let records = Self.records(count: 6_000) { index in
            index == bad ? #"{"ticket": \#(index), "visits": "many", "note": "\#(Self.padding)"}"# : nil
        }
        let (two, one) = try await Self.importBothWays("[" + records.joined(separator: ",\n") + "]")
        guard case .failure(let twoError) = two, case .failure(let oneError) = one else {
            Issue.record("the import did not fail")
            return
        }
        let a = try #require(twoError as? MappingError), b = try #require(oneError as? MappingError)
        #expect(a.path == "$[\(bad)].visits" && a.path == b.path && a.offset == b.offset, "\(a) against \(b)")
    }

    /// A record in the second half gives a relationship as a nested record (a reference by key
    /// is read flat): the records are not flat, and the whole input is read again through a
    /// context, as one reader would.
    @Test func aRelationshipInTheSecondHalfReadsTheInputThroughAContext() async throws {
        let records = Self.records(count: 6_000) { index in
            index == 5_000 ? #"{"ticket": 9999999, "employer_code": {"code": "ACME"}, "note": "\#(Self.padding)"}"# : nil
        }
        let (two, one) = try await Self.importBothWays("[" + records.joined(separator: ",\n") + "]") { store in
            try await store.batchInsert("Company", [["code": "ACME"]])
        }
        let a = try two.get(), b = try one.get()
        Self.expectSame(a, b, "not flat")
        #expect(a.0.recordsReadOnSecondCore == 0)
        #expect(a.0.inserted == 4_501)
    }

    /// Cairn's own transformers run on the second reader too; one registered by the app (user
    /// code, whose work a second reader may drop) keeps the read on one core.
    @Test func onlyBuiltInTransformersReadOnTwoCores() async throws {
        let model = try Model {
            Entity("Doc") {
                Attribute("docId", .integer64)
                Attribute("payload", .string)
                Unique("docId")
            }
        }
        MappingTransformers.register(name: "two-core-test-upper", import: { json in .string("\(json)".uppercased()) }, export: { _ in .null })
        let records = (0..<6_000).map { #"{"docId": \#($0), "payload": [\#($0), "\#(Self.padding)"]}"# }
        let input = Array(("[" + records.joined(separator: ",\n") + "]").utf8)
        for (name, twoCores) in [("json", true), ("two-core-test-upper", false)] {
            let mapping = try Mapping(model: model) { EntityMapping("Doc") { AttributeMap("payload", transformer: name) } }
            let result = try await Store(inMemory: model).importJSON(input, into: "Doc", mapping: mapping)
            #expect(result.inserted == 6_000 && result.recordsReadFlat == 6_000, "\(name)")
            if ProcessInfo.processInfo.activeProcessorCount >= 2 { #expect((result.recordsReadOnSecondCore > 0) == twoCores, "\(name)") }
        }
    }

    /// Guesses are looked for only near the middle of a large input, in one pass: a `{` after
    /// a line break, with a `,` or a `}` before it.
    @Test func guessesNeedALargeInputAndARecordStart() {
        func guess(_ text: String) -> InputSplit? { Array(text.utf8).withUnsafeBytes { InputSplit.guess($0) } }
        #expect(guess("[{\"a\": 1},\n{\"a\": 2}]") == nil, "a small input is read by one reader")
        let half = InputSplit.smallestInput / 2
        #expect(guess(String(repeating: " ", count: half + 10) + ",\n{" + String(repeating: " ", count: half))?.offset == half + 12)
        #expect(guess(String(repeating: "\n", count: 2 * half)) == nil)
        #expect(guess(String(repeating: " ", count: half + 10) + ":\n{" + String(repeating: " ", count: half)) == nil, "a value after a key")
        let lines = guess(String(repeating: " ", count: half + 10) + "}\n\n  {" + String(repeating: " ", count: half))
        #expect(lines?.insideArray == false && lines?.offset == half + 15)
        #expect(guess(String(repeating: " ", count: half + 10) + "} \t {" + String(repeating: " ", count: half)) == nil, "no line break")
    }
}

/// Progress reports, gathered from the callback.
private final class Reports: Sendable {
    private let reports = Mutex<[ImportProgress]>([])
    func add(_ report: ImportProgress) { reports.withLock { $0.append(report) } }
    var all: [ImportProgress] { reports.withLock { $0 } }
}
