import Cairn
import CairnMapping
import Foundation

/// One file of the value matrix: flat records `{"key":"K-…","v1":…,…,"v6":…}` whose six values
/// are of one attribute type, written in one JSON convention, and how the model and mapping say
/// so. Value `k` of the file is value `v(k % 6 + 1)` of record `k / 6`.
struct ValueVariant: Sendable {
    /// The row's name.
    var name: String
    /// The entity the file imports into (one per variant).
    var entity: String
    /// The type of `v1`…`v6`.
    var type: AttributeType
    /// The date format declared for `v1`…`v6` in Swift (`AttributeMap(date:)`), if any.
    var date: DateFormat? = nil
    /// The userInfo of `v1`…`v6` in the model (WTAData's `DateFormat`), if any.
    var userInfo: [String: String] = [:]
    /// The transformer declared for `v1`…`v6` (`AttributeMap(transformer:)`), if any.
    var transformer: String? = nil
    /// What the row's note says of the variant.
    var note: String = ""
    /// The JSON text of value `k`.
    var json: @Sendable (Int) -> String
    /// The value the store must hold for value `k`.
    var expected: @Sendable (Int) -> Value

    /// The pattern the variant's dates are read by, when it has one.
    var pattern: String? {
        if case .pattern(let pattern, _)? = date { return pattern }
        return userInfo["DateFormat"]
    }

    /// Whether the variant's pattern is read through `DateFormatter` (not compiled by
    /// ``DatePattern``): such a row is reported apart, on fewer records.
    var isFallback: Bool { pattern.map { (try? DatePattern($0)).map { !$0.isCompiled } ?? true } ?? false }

    /// The entity of the variant: a unique string key and six values.
    var modelEntity: Entity {
        Entity(
            entity,
            attributes: [Attribute("key", .string, optional: false)] + (1...6).map { Attribute("v\($0)", type, userInfo: userInfo) },
            uniquenessConstraints: [["key"]])
    }

    /// The variant's declared mapping (nil: the model's userInfo and defaults say it all).
    var entityMapping: EntityMapping? {
        guard date != nil || transformer != nil else { return nil }
        var mapping = EntityMapping(entity)
        mapping.attributes = (1...6).map { AttributeMap("v\($0)", date: date, transformer: transformer) }
        return mapping
    }

    /// Writes `count` records; returns the file's size in bytes.
    func write(count: Int, to path: String) throws -> Int {
        var text = "[\n"
        text.reserveCapacity(count * 160)
        for record in 0..<count {
            text += #"{"key":"K-\#(1_000_000 + record)""#
            for value in 1...6 { text += #","v\#(value)":"# + json(record * 6 + value - 1) }
            text += record == count - 1 ? "}\n]\n" : "},\n"
        }
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return text.utf8.count
    }
}

extension ValueVariant {
    /// The all-string file this variant's row is compared with: the same records (the same
    /// keys), each value replaced by a JSON string of the same byte length as the value's JSON
    /// token (`1234.56` → `"12345"`; a token of one byte, the `0`/`1` booleans, by `""`), its
    /// text cut from prose at a place that varies with the value, without escapes; in an entity
    /// of six string attributes.
    var sizeMatchedStrings: ValueVariant {
        let json = self.json
        return ValueVariant(
            name: "strings the size of \(name)", entity: "StringValues", type: .string,
            json: { "\"\(Self.prose(json($0).utf8.count - 2, $0))\"" }, expected: { .string(Self.prose(json($0).utf8.count - 2, $0)) })
    }

    /// Every type and date convention of the matrix, in the order reported.
    static let all: [ValueVariant] = numbers + others + dates + [ordinalDate]

    /// A pattern `DatePattern` leaves to `DateFormatter` (day of the year, `D`).
    private static let ordinalDate = ValueVariant(
        name: "date, yyyy-DDD (day of the year)", entity: "DateOrdinalValues", type: .date, date: .pattern("yyyy-DDD"), note: "1944-128",
        json: { value in
            let time = CivilTime(seconds: instant(value))
            return "\"\(CivilTime.padded(time.year, 4))-\(CivilTime.padded(time.dayOfYear, 3))\""
        }, expected: { .date(date(floor(instant($0), 86_400), 0)) })

    private static let numbers: [ValueVariant] = [
        ValueVariant(name: "integer64", entity: "IntegerValues", type: .integer64, json: { String(integer($0)) }, expected: { .integer(Int64(integer($0))) }),
        ValueVariant(
            name: "integer64 given as a string", entity: "IntegerTextValues", type: .integer64, json: { "\"\(integer($0))\"" },
            expected: { .integer(Int64(integer($0))) }),
        ValueVariant(name: "double", entity: "DoubleValues", type: .double, json: { double($0) }, expected: { .double(Double(double($0)) ?? .nan) }),
        ValueVariant(
            name: "decimal, money as a JSON number", entity: "DecimalValues", type: .decimal, note: "1234.56", json: { money($0) },
            expected: { .decimal(Decimal(string: money($0)) ?? .nan) }),
        ValueVariant(
            name: "decimal, money as a JSON string", entity: "DecimalTextValues", type: .decimal, note: "\"1234.56\" (coercesText, the default)",
            json: { "\"\(money($0))\"" }, expected: { .decimal(Decimal(string: money($0)) ?? .nan) })
    ]

    private static let others: [ValueVariant] = [
        ValueVariant(name: "boolean", entity: "BooleanValues", type: .boolean, json: { $0 % 3 == 0 ? "false" : "true" }, expected: { .boolean($0 % 3 != 0) }),
        ValueVariant(
            name: "boolean given as a string", entity: "BooleanTextValues", type: .boolean, note: "\"true\" \"false\" \"yes\" \"no\"",
            json: { "\"\(["true", "false", "yes", "no"][$0 % 4])\"" }, expected: { .boolean($0 % 2 == 0) }),
        ValueVariant(
            name: "boolean given as 0/1", entity: "BooleanNumberValues", type: .boolean, json: { $0 % 3 == 0 ? "0" : "1" },
            expected: { .boolean($0 % 3 != 0) }),
        ValueVariant(
            name: "UUID", entity: "UUIDValues", type: .uuid, json: { "\"\(uuid($0))\"" }, expected: { UUID(uuidString: uuid($0)).map(Value.uuid) ?? .null }),
        ValueVariant(name: "URI", entity: "URIValues", type: .uri, json: { "\"\(uri($0))\"" }, expected: { .uri(uri($0)) }),
        ValueVariant(
            name: "binary, base64", entity: "BinaryValues", type: .binary, note: "12–27 bytes", json: { "\"\(Data(bytes($0)).base64EncodedString())\"" },
            expected: { .binary(bytes($0)) }),
        jsonArray
    ]

    /// A JSON array of numbers kept as its JSON text in a string attribute: through the built-in
    /// `json` transformer, else (a library without it) through the benchmark's own.
    private static var jsonArray: ValueVariant {
        let builtIn = MappingTransformers.transformer(named: "json") != nil
        if !builtIn { JSONArrayText.register() }
        return ValueVariant(
            name: "JSON array through a transformer", entity: "TransformedValues", type: .string, transformer: builtIn ? "json" : JSONArrayText.name,
            note: builtIn ? "the built-in json transformer: a string attribute holding the JSON text" : "the benchmark's own transformer (no built-in json)",
            json: { array($0) }, expected: { .string(array($0)) })
    }

    private static let dates: [ValueVariant] = [
        ValueVariant(
            name: "date, ISO 8601 with Z and milliseconds", entity: "DateISOValues", type: .date, note: "1944-05-07T12:34:56.789Z",
            json: { "\"\(iso(instant($0), milliseconds: milliseconds($0), offset: nil))\"" }, expected: { .date(date(instant($0), milliseconds($0))) }),
        ValueVariant(
            name: "date, ISO 8601 date only", entity: "DateISODayValues", type: .date, note: "1944-05-07",
            json: { "\"\(CivilTime(seconds: instant($0)).dayText)\"" }, expected: { .date(date(floor(instant($0), 86_400), 0)) }),
        ValueVariant(
            name: "date, ISO 8601 with an offset", entity: "DateISOOffsetValues", type: .date, note: "1944-05-07T14:34:56+02:00",
            json: { "\"\(iso(instant($0), milliseconds: nil, offset: offset($0)))\"" }, expected: { .date(date(instant($0), 0)) }),
        ValueVariant(
            name: "date, yyyy-MM-dd (WTAData DateFormat userInfo)", entity: "DateDayPatternValues", type: .date,
            userInfo: ["DateFormat": "yyyy-MM-dd"], json: { "\"\(CivilTime(seconds: instant($0)).dayText)\"" },
            expected: { .date(date(floor(instant($0), 86_400), 0)) }),
        ValueVariant(
            name: "date, dd/MM/yyyy HH:mm", entity: "DateEuropeanValues", type: .date, date: .pattern("dd/MM/yyyy HH:mm"),
            json: { value in
                let time = CivilTime(seconds: instant(value))
                return "\"\(CivilTime.padded(time.day, 2))/\(CivilTime.padded(time.month, 2))/\(CivilTime.padded(time.year, 4)) "
                    + "\(CivilTime.padded(time.hour, 2)):\(CivilTime.padded(time.minute, 2))\""
            }, expected: { .date(date(floor(instant($0), 60), 0)) }),
        ValueVariant(
            name: "date, EEE, dd MMM yyyy HH:mm:ss Z", entity: "DateRFC822Values", type: .date, date: .pattern("EEE, dd MMM yyyy HH:mm:ss Z"),
            note: "Sun, 07 May 1944 14:34:56 +0200",
            json: { value in
                let time = CivilTime(seconds: instant(value), offset: offset(value))
                return "\"\(CivilTime.dayNames[time.weekday]), \(CivilTime.padded(time.day, 2)) \(CivilTime.monthNames[time.month - 1]) "
                    + "\(CivilTime.padded(time.year, 4)) \(time.timeText) \(CivilTime.offsetText(offset(value), colon: false))\""
            }, expected: { .date(date(instant($0), 0)) }),
        ValueVariant(
            name: "date, yyyy-MM-dd'T'HH:mm:ss.SSSZZZZZ", entity: "DateRFC3339PatternValues", type: .date,
            date: .pattern("yyyy-MM-dd'T'HH:mm:ss.SSSZZZZZ"), note: "1944-05-07T14:34:56.789+02:00",
            json: { "\"\(iso(instant($0), milliseconds: milliseconds($0), offset: offset($0)))\"" },
            expected: { .date(date(instant($0), milliseconds($0))) }),
        ValueVariant(
            name: "date, unix seconds (a number)", entity: "DateUnixValues", type: .date, date: .unixSeconds, json: { String(instant($0)) },
            expected: { .date(date(instant($0), 0)) }),
        ValueVariant(
            name: "date, unix milliseconds (a number)", entity: "DateUnixMillisecondsValues", type: .date, date: .unixMilliseconds,
            json: { String(instant($0) * 1000 + milliseconds($0)) }, expected: { .date(date(instant($0), milliseconds($0))) }),
        ValueVariant(
            name: "date, unix seconds given as a string", entity: "DateUnixTextValues", type: .date, date: .unixSeconds,
            json: { "\"\(instant($0))\"" }, expected: { .date(date(instant($0), 0)) })
    ]

    // The values, distinct and spread out: value k of a file.

    private static func mixed(_ value: Int) -> UInt64 {
        var state = UInt64(value) &+ 0x9E37_79B9_7F4A_7C15
        state = (state ^ (state >> 30)) &* 0xBF58_476D_1CE4_E5B9
        state = (state ^ (state >> 27)) &* 0x94D0_49BB_1331_11EB
        return state ^ (state >> 31)
    }
    /// The text the size-matched strings are cut from (no character JSON escapes).
    private static let proseBytes = Array(
        ("Cairn keeps a log of changes, 2024-05 to 2031; rows, keys and values (12 of 96) are read back "
            + "at open. A quick brown fox jumps over the lazy dog near Fjord Street 7, Amber Grove - 3041 Heath. ").utf8)
    /// `length` bytes of prose (none when `length` < 1), starting at a place chosen by `value`.
    private static func prose(_ length: Int, _ value: Int) -> String {
        guard length > 0 else { return "" }
        let start = Int(mixed(value) % UInt64(proseBytes.count))
        return String(decoding: (0..<length).map { proseBytes[(start + $0) % proseBytes.count] }, as: UTF8.self)
    }
    private static func integer(_ value: Int) -> Int { Int(mixed(value) % 20_000_000) - 10_000_000 }
    private static func double(_ value: Int) -> String { String(Double(Int(mixed(value) % 100_000_000) - 50_000_000) / 1024) }
    private static func money(_ value: Int) -> String {
        let cents = Int(mixed(value) % 10_000_000)
        return "\(cents / 100).\(CivilTime.padded(cents % 100, 2))"
    }
    private static func uuid(_ value: Int) -> String {
        let high = mixed(value)
        let low = mixed(value &+ 1_000_000_007)
        func hex(_ bits: UInt64, _ digits: Int) -> String {
            let text = String(bits, radix: 16)
            return String(repeating: "0", count: max(0, digits - text.count)) + text
        }
        return "\(hex(high >> 32, 8))-\(hex(high >> 16 & 0xFFFF, 4))-4\(hex(high & 0xFFF, 3))-a\(hex(low >> 52 & 0xFFF, 3))-\(hex(low & 0xFFFF_FFFF_FFFF, 12))"
    }
    private static func uri(_ value: Int) -> String { "https://example.com/items/\(mixed(value) % 10_000_000)?page=\(value % 7)" }
    private static func bytes(_ value: Int) -> [UInt8] {
        let bits = mixed(value)
        return (0..<(12 + value % 16)).map { UInt8(truncatingIfNeeded: bits >> (($0 % 8) * 8) &+ UInt64($0)) }
    }
    private static func array(_ value: Int) -> String {
        let bits = mixed(value)
        return "[\(bits % 1000),\(bits >> 10 % 100),\(bits >> 20 % 10_000)]"
    }
    /// Seconds since 1970: from 1944 to 2020.
    private static func instant(_ value: Int) -> Int { -800_000_000 + Int(mixed(value) % 2_400_000_000) }
    private static func milliseconds(_ value: Int) -> Int { Int(mixed(value &+ 77) % 1000) }
    private static func offset(_ value: Int) -> Int { [7200, -18_000, 19_800, 0, 3600, -25_200][value % 6] }
    private static func floor(_ seconds: Int, _ unit: Int) -> Int { seconds >= 0 ? seconds / unit * unit : -((-seconds + unit - 1) / unit * unit) }
    private static func date(_ seconds: Int, _ milliseconds: Int) -> Date { Date(timeIntervalSince1970: Double(seconds) + Double(milliseconds) / 1000) }
    /// ISO 8601 / RFC 3339: `Z` when `offset` is nil, else the local time and `±hh:mm` (`Z` for 0).
    private static func iso(_ seconds: Int, milliseconds: Int?, offset: Int?) -> String {
        let time = CivilTime(seconds: seconds, offset: offset ?? 0)
        let fraction = milliseconds.map { "." + CivilTime.padded($0, 3) } ?? ""
        let zone = offset.map { $0 == 0 ? "Z" : CivilTime.offsetText($0, colon: true) } ?? "Z"
        return "\(time.dayText)T\(time.timeText)\(fraction)\(zone)"
    }
}

/// The benchmark's transformer of a JSON array of numbers into its JSON text in a string
/// attribute, for a library without the built-in `json` transformer.
enum JSONArrayText {
    static let name = "CairnBenchmarks.JSONArrayText"

    struct Failure: Error { let description: String }

    /// Registers it (idempotent).
    static func register() {
        MappingTransformers.register(
            name: name,
            import: { json in
                guard case .array(let items) = json else { throw Failure(description: "a JSON array was expected") }
                var text = "["
                for (index, item) in items.enumerated() {
                    guard case .number(let number) = item else { throw Failure(description: "an array of numbers was expected") }
                    text += (index == 0 ? "" : ",") + number
                }
                return .string(text + "]")
            },
            export: { value in
                guard case .string(let text) = value else { return .null }
                return .array(text.dropFirst().dropLast().split(separator: ",").map { .number(String($0)) })
            })
    }
}
