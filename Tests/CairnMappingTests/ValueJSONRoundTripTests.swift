import Cairn
import CairnMapping
import Foundation
import Testing

/// Every attribute type, with its edge values, saved, exported, and imported again into a new
/// store: each value comes back as it was (the one JSON rendering, ``ValueJSON``, and the
/// importer agree), for each date format.
@Suite struct ValueJSONRoundTripTests {
    /// The attributes (one per type) and the values each is tried with.
    static let samples: [(name: String, type: AttributeType, values: [Value])] = [
        (
            "text", .string,
            [.string(""), .string("plain"), .string("q\"b\\s/\n\r\t\u{8}\u{C}\u{0}\u{1F}\u{7F}é日本😀"), .string(String(repeating: "x", count: 300))]
        ),
        ("small", .integer16, [.integer(Int64(Int16.min)), .integer(-1), .integer(0), .integer(Int64(Int16.max))]),
        ("medium", .integer32, [.integer(Int64(Int32.min)), .integer(Int64(Int32.max))]),
        ("large", .integer64, [.integer(.min), .integer(.max), .integer(1 << 53 + 1)]),
        (
            "real", .double,
            [
                .double(0), .double(-0.0), .double(0.1), .double(-1.5), .double(1e15), .double(123_456_789_012_345.6), .double(.pi),
                .double(.greatestFiniteMagnitude), .double(.leastNonzeroMagnitude), .double(-.leastNormalMagnitude), .double(1e300),
                .double(.infinity), .double(-.infinity)
            ]
        ),
        ("single", .float, [.float(0.1), .float(-0.0), .float(3.4e38), .float(.leastNonzeroMagnitude), .float(.infinity), .float(-.infinity)]),
        (
            "money", .decimal,
            [
                .decimal(Decimal(string: "0")!), .decimal(Decimal(string: "19.99")!), .decimal(Decimal(string: "-0.000000000000000000000000000001")!),
                .decimal(Decimal(string: "12345678901234567890123456789012345678")!), .decimal(Decimal(string: "1e100")!),
                .decimal(Decimal(string: "123.4500")!)
            ]
        ),
        ("flag", .boolean, [.boolean(true), .boolean(false)]),
        (
            "when", .date,
            [
                .date(Date(timeIntervalSince1970: 0)), .date(Date(timeIntervalSince1970: 1_700_000_000.123)),
                .date(Date(timeIntervalSince1970: -62_135_596_800)), .date(Date(timeIntervalSince1970: 253_402_300_799)),
                .date(Date(timeIntervalSince1970: -1.5))
            ]
        ),
        ("blob", .binary, [.binary([]), .binary([0, 255, 1, 254]), .binary(Array(0...255))]),
        ("tag", .uuid, [.uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!), .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))]),
        ("link", .uri, [.uri("https://example.com/a?b=c&d=%20#e"), .uri("urn:isbn:0451450523")])
    ]

    static let model: Model = {
        do {
            return try Model {
                Entity("Thing", attributes: [Attribute("id", .integer64)] + samples.map { Attribute($0.name, $0.type) }, uniquenessConstraints: [["id"]])
            }
        } catch { preconditionFailure("\(error)") }
    }()

    /// Whether two values are the same, NaN equal to NaN and zeros told apart by sign.
    static func same(_ a: Value, _ b: Value) -> Bool {
        switch (a, b) {
        case (.double(let x), .double(let y)): x.isNaN ? y.isNaN : x == y && x.sign == y.sign
        case (.float(let x), .float(let y)): x.isNaN ? y.isNaN : x == y && x.sign == y.sign
        case (.decimal(let x), .decimal(let y)): x.isNaN ? y.isNaN : x == y
        default: a == b
        }
    }

    @Test(arguments: ["iso8601", "unix", "unixMilliseconds", "yyyy-MM-dd'T'HH:mm:ss.SSSZ"])
    func everyValueOfEveryTypeComesBack(dateFormat: String) async throws {
        let store = Store(inMemory: Self.model)
        let context = store.newBackgroundContext()
        var expected: [Int64: (String, Value)] = [:]
        var id: Int64 = 0
        for sample in Self.samples {
            for value in sample.values {
                id += 1
                let thing = try context.insert("Thing")
                try thing.setValue(id, forKey: "id")
                try thing.setValue(value, forKey: sample.name)
                expected[id] = (sample.name, value)
            }
        }
        try await context.save()
        let mapping = try Mapping(model: Self.model, dateFormat: DateFormat(name: dateFormat))
        let output = try store.viewContext.exportJSON(FetchRequest("Thing", sortKeys: [SortKey("id")]), mapping: mapping)
        let copy = Store(inMemory: Self.model)
        let result = try await copy.importJSON(output, into: "Thing", mapping: mapping)
        #expect(result.inserted == expected.count)
        for (id, (name, value)) in expected.sorted(by: { $0.key < $1.key }) {
            let back = try copy.viewContext.fetchFirst(FetchRequest("Thing", predicate: .equal("id", id)))
            let read = try back?.value(forKey: name, as: Value.self)
            #expect(read.map { Self.same($0, value) } == true, "\(name): \(value) came back as \(String(describing: read)) (\(dateFormat))")
        }
        // The same objects exported again give the same bytes.
        let again = try copy.viewContext.exportJSON(FetchRequest("Thing", sortKeys: [SortKey("id")]), mapping: mapping)
        #expect(String(decoding: again, as: UTF8.self) == String(decoding: output, as: UTF8.self))
    }

    @Test func notANumberIsRefusedNamingTheAttribute() async throws {
        // No attribute holds NaN (it equals nothing): its spelling is refused by name.
        let store = Store(inMemory: Self.model)
        let mapping = try Mapping(model: Self.model)
        for (name, json) in [("real", #""NaN""#), ("single", #""NaN""#), ("money", #""NaN""#)] {
            let input = Array(#"[{"id": 1, "\#(name)": \#(json)}]"#.utf8)
            await #expect { try await store.importJSON(input, into: "Thing", mapping: mapping) } throws: { error in
                (error as? MappingError).map { $0.property == name && $0.message.contains("NaN") } ?? false
            }
        }
        #expect(try store.viewContext.count(FetchRequest("Thing")) == 0)
    }

    @Test func eachTypeHasOneDocumentedSpelling() {
        let cases: [(Value, String)] = [
            (.double(.nan), #""NaN""#), (.double(.infinity), #""Infinity""#), (.float(-.infinity), #""-Infinity""#),
            (.double(-0.0), "-0"), (.double(3), "3"), (.double(0.1), "0.1"),
            (.decimal(Decimal(string: "12345678901234567890.123456789")!), "12345678901234567890.123456789"),
            (.decimal(.nan), #""NaN""#), (.binary([1, 2, 3]), #""AQID""#), (.boolean(false), "false"), (.null, "null"),
            (.string("a\"\u{7F}\u{1}"), #""a\"\u007f\u0001""#), (.date(Date(timeIntervalSince1970: 1.5)), #""1970-01-01T00:00:01.500Z""#)
        ]
        for (value, text) in cases { #expect(JSONWriter.text(ValueJSON.json(value)) == text, "\(value)") }
    }
}
