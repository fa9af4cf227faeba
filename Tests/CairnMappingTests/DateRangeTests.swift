import Cairn
import CairnMapping
import Foundation
import Testing

/// One range for dates everywhere: every date reader (ISO 8601, patterns, epoch numbers) takes
/// the instants of years 1 to 9999, and the exporter writes only those, so that whatever an
/// import accepts, its export imports back, and an export never writes a date an import refuses.
@Suite struct DateRangeTests {
    static let model: Model = {
        do {
            return try Model {
                Entity(
                    "Event", attributes: [Attribute("code", .integer64), Attribute("when", .date)], uniquenessConstraints: [["code"]])
            }
        } catch {
            preconditionFailure("\(error)")
        }
    }()

    static func mapping(_ format: DateFormat) throws -> Mapping {
        try Mapping(model: model) { EntityMapping("Event") { AttributeMap("when", date: format) } }
    }

    /// Imports one value of `when` (JSON text); the error when it is refused.
    static func importing(_ json: String, _ format: DateFormat, into store: Store) async throws -> MappingError? {
        do {
            _ = try await store.importJSON(Array(#"{"code": 1, "when": \#(json)}"#.utf8), into: "Event", mapping: try mapping(format))
            return nil
        } catch let error as MappingError {
            return error
        }
    }

    @Test(arguments: [
        // (format, JSON value, accepted)
        ("yyyy-MM-dd", #""0000-01-01""#, false), ("yyyy-MM-dd", #""0001-01-01""#, true), ("yyyy-MM-dd", #""9999-12-31""#, true),
        ("yyyy-MM-dd", #""10000-01-01""#, false), ("yyyy-MM-dd", #""-0001-01-01""#, false), ("y-M-d", #""0-1-1""#, false),
        ("y-M-d", #""1-1-1""#, true), ("yyyy-MM-dd@+05:00", #""0001-01-01""#, false), ("yyyy-MM-dd@-05:00", #""9999-12-31""#, true),
        ("yyyy-MM-dd HH:mm@-05:00", #""9999-12-31 20:00""#, false), ("yyyy-MM-dd HH:mm@-05:00", #""9999-12-31 18:59""#, true),
        ("yyyy-MM-dd HH:mm Z@+05:00", #""9999-12-31 22:00 +0000""#, false), ("yyyy-MM-dd HH:mm Z@+05:00", #""9999-12-31 18:00 +0000""#, true),
        ("iso8601", #""0000-12-31T23:59:59.999Z""#, false), ("iso8601", #""0001-01-01T00:00:00Z""#, true),
        ("iso8601", #""0001-01-01T00:00:00+01:00""#, false), ("iso8601", #""0000-06-01""#, false),
        ("iso8601", #""9999-12-31T23:59:59.999Z""#, true), ("iso8601", #""9999-12-31T23:59:59-01:00""#, false),
        ("iso8601", #""+10000-01-01T00:00:00Z""#, false), ("iso8601", #""-0001-01-01T00:00:00Z""#, false),
        ("iso8601", "-62135596800", true), ("iso8601", "-62135596801", false), ("unix", "253402300799", true),
        ("unixMilliseconds", "253402300799999", true), ("unixMilliseconds", "253402300800000", false),
        ("unixMilliseconds", "-62135596800001", false),
        // Fractions export rounds to the millisecond: what would be written as year 10000 is refused.
        ("iso8601", #""9999-12-31T23:59:59.9995Z""#, false),
        ("unixMilliseconds", "253402300799999.6", false)
    ])
    func everyReaderTakesYearsOneToNineThousandNineHundredNinetyNine(format: String, json: String, accepted: Bool) async throws {
        let store = Store(inMemory: Self.model)
        let format = DateFormat(name: format)
        let error = try await Self.importing(json, format, into: store)
        #expect((error == nil) == accepted, "\(format) \(json): \(error.map { "\($0)" } ?? "accepted")")
        if let error { #expect(error.code == .invalidValue && error.path?.hasSuffix("when") == true, "\(error)") }
        guard accepted else { return }
        // What an import accepts, its export writes and imports back unchanged.
        let mapping = try Self.mapping(format)
        let output = try store.viewContext.exportJSON(FetchRequest("Event"), mapping: mapping)
        let again = try await store.importJSON(output, into: "Event", mapping: mapping)
        #expect(again.unchanged == 1 && again.saves == 0, "\(format) \(json) → \(String(decoding: output, as: UTF8.self))")
    }

    @Test func theExporterRefusesADateNoReaderTakesNamingIt() async throws {
        let store = Store(inMemory: Self.model)
        let context = store.newBackgroundContext()
        let edges: [(Int64, Double)] = [
            (1, -62_135_596_800), (2, -62_135_596_800.5), (3, 253_402_300_799.999), (4, 253_402_300_800), (5, -62_200_000_000)
        ]
        for (code, seconds) in edges {
            let event = try context.insert("Event")
            try event.setValue(code, forKey: "code")
            try event.setValue(Date(timeIntervalSince1970: seconds), forKey: "when")
        }
        try await context.save()
        for name in ["iso8601", "yyyy-MM-dd HH:mm:ss.SSS", "unix", "unixMilliseconds"] {
            let mapping = try Self.mapping(DateFormat(name: name))
            for code in Int64(1)...5 {
                let request = FetchRequest("Event", predicate: .equal("code", code))
                let inRange = code == 1 || code == 3
                do {
                    let output = try store.viewContext.exportJSON(request, mapping: mapping)
                    #expect(inRange, "\(name) wrote \(String(decoding: output, as: UTF8.self))")
                    let copy = Store(inMemory: Self.model)
                    let result = try await copy.importJSON(output, into: "Event", mapping: mapping)
                    #expect(result.inserted == 1)
                } catch let error as MappingError {
                    #expect(!inRange, "\(name), event \(code): \(error)")
                    #expect(error.code == .invalidValue && error.entity == "Event" && error.property == "when", "\(error)")
                    #expect(error.message.contains("years 1 to 9999"), "\(error)")
                }
            }
        }
        // A pattern written at an offset: the written year must be one the pattern reads back.
        let east = try Self.mapping(DateFormat(name: "yyyy-MM-dd HH:mm:ss.SSS@+05:00"))
        let last = FetchRequest("Event", predicate: .equal("code", 3))
        #expect(throws: MappingError.self) { try store.viewContext.exportJSON(last, mapping: east) }
    }
}
