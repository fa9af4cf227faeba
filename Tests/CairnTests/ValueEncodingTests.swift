import CairnSupport
import Foundation
import Testing
@testable import Cairn

/// The encoding room (`Sources/Cairn/Encoding/`) is the one place that knows a value's bytes:
/// its writers agree with each other, its in-place readers with its decoder, and no source file
/// outside it names a tag.
@Suite struct ValueEncodingTests {
    static func bytes(_ write: (inout ByteWriter) -> Void) -> [UInt8] {
        var writer = ByteWriter()
        write(&writer)
        return writer.bytes
    }

    @Test func theScalarWritersWriteWhatTheValueWriterWrites() {
        for number: Int64 in [0, 1, -1, 63, -64, 64, Int64.max, Int64.min] {
            #expect(Self.bytes { ValueEncoding.writeInteger(number, &$0) } == ValueEncoding.encoded(.integer(number)))
        }
        for number in [0.0, -0.0, 1.5, .nan, .infinity] {
            #expect(Self.bytes { ValueEncoding.writeDouble(number, &$0) } == ValueEncoding.encoded(.double(number)))
        }
        let date = Date(timeIntervalSince1970: 1_234_567.891)
        #expect(Self.bytes { ValueEncoding.writeDate(date, &$0) } == ValueEncoding.encoded(.date(date)))
        #expect(Self.bytes { ValueEncoding.writeBoolean(true, &$0) } == ValueEncoding.encoded(.boolean(true)))
        #expect(Self.bytes { ValueEncoding.writeNull(&$0) } == ValueEncoding.encoded(.null))
        for text in ["", "é", String(repeating: "x", count: 300)] {
            let utf8 = Array(text.utf8)
            #expect(Self.bytes { writer in utf8.withUnsafeBytes { ValueEncoding.writeString(utf8: $0, &writer) } } == ValueEncoding.encoded(.string(text)))
            #expect(ValueEncoding.encoded(.string(text)).withUnsafeBytes { ValueEncoding.decode($0) } == .string(text))
            #expect(ValueEncoding.withEncoded(.string(text)) { Array($0) } == ValueEncoding.encoded(.string(text)))
        }
    }

    /// Every kind of value, read in place, gives what decoding gives; other kinds give nil.
    @Test func theInPlaceReadersAgreeWithTheDecoder() {
        let values: [Value] = [
            .null, .string("ascii"), .string("é日本"), .integer(-5), .integer(.max), .double(-2.5), .double(.infinity), .float(1.5),
            .decimal(Decimal(string: "12.50")!), .boolean(true), .boolean(false), .date(Date(timeIntervalSince1970: -3.25)), .binary([1, 2]),
            .uuid(UUID()), .uri("https://example.com")
        ]
        for value in values {
            ValueEncoding.encoded(value).withUnsafeBytes { bytes in
                #expect(ValueEncoding.decode(bytes) == value)
                #expect(bytes.baseAddress.map { ValueEncoding.length($0, available: bytes.count) } == bytes.count, "\(value)")
                #expect(ValueEncoding.isNull(bytes) == (value == .null))
                #expect(ValueEncoding.integer(bytes) == { if case .integer(let n) = value { n } else { nil } }())
                #expect(ValueEncoding.boolean(bytes) == { if case .boolean(let b) = value { b } else { nil } }())
                #expect(ValueEncoding.double(bytes) == { if case .double(let d) = value { d } else { nil } }())
                let seconds: Double? = if case .date(let d) = value { d.timeIntervalSinceReferenceDate } else { nil }
                #expect(ValueEncoding.dateSeconds(bytes) == seconds)
                #expect(ValueEncoding.number(bytes) == ValueEncoding.double(bytes) ?? seconds)
                #expect(ValueEncoding.text(bytes).map { String(decoding: $0, as: UTF8.self) } == { if case .string(let t) = value { t } else { nil } }())
                let scalar: Value? =
                    switch ValueEncoding.scalar(bytes) {
                    case .null: .null
                    case .boolean(let flag): .boolean(flag)
                    case .integer(let number): .integer(number)
                    case .string(let utf8): .string(String(decoding: utf8, as: UTF8.self))
                    case .double(let number): .double(number)
                    case .date(let seconds): .date(Date(timeIntervalSinceReferenceDate: seconds))
                    case .other: nil
                    }
                if let scalar { #expect(scalar == value) } else { #expect(value.isReadByDecoding, "\(value)") }
            }
        }
    }

    /// The bytes of the file format (docs/FORMAT.md §9), fixed: a change to any writer is a
    /// change of format and fails here.
    @Test func valuesAreWrittenAsTheFormatSays() {
        let cases: [(Value, [UInt8])] = [
            (.null, [0]), (.string("é"), [1, 2, 0xC3, 0xA9]), (.integer(-1), [2, 1]), (.integer(64), [2, 0x80, 0x01]),
            (.double(1.5), [3, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F]), (.float(1.5), [4, 0, 0, 0xC0, 0x3F]),
            (.decimal(Decimal(string: "-1.50")!), [5, 4, 0x2D, 0x31, 0x2E, 0x35]), (.boolean(false), [6]), (.boolean(true), [7]),
            (.date(Date(timeIntervalSinceReferenceDate: 1.5)), [8, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F]), (.binary([9, 8]), [9, 2, 9, 8]),
            (.uuid(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))), [10] + Array(1...16)),
            (.uri("a:b"), [11, 3, 0x61, 0x3A, 0x62])
        ]
        for (value, bytes) in cases { #expect(ValueEncoding.encoded(value) == bytes, "\(value)") }
        let links: [(PropertyValue, [UInt8])] = [
            (.toOne(nil), [12]), (.toOne(ObjectID(entity: 1, key: 300)), [13, 1, 0xAC, 0x02]),
            (.toMany([ObjectID(entity: 0, key: 1), ObjectID(entity: 2, key: 3)]), [14, 2, 0, 1, 2, 3])
        ]
        for (value, bytes) in links { #expect(Self.bytes { ValueEncoding.write(value, &$0) } == bytes, "\(value)") }
    }

    /// Every tag checked against every kind of property: a value passes only where its kind
    /// belongs (null: any attribute; an integer only within its type's range; a target only of
    /// its relationship's entity).
    @Test func aValueIsCheckedAgainstWhatItsPropertyHolds() throws {
        let types: [AttributeType] = [.string, .uri, .binary, .integer16, .double, .float, .decimal, .boolean, .date, .uuid]
        let model = try Model {
            Entity(
                "Thing", attributes: types.map { Attribute("\($0)", $0) },
                relationships: [
                    Relationship("owner", to: "Thing", inverse: "items"), Relationship("items", to: "Thing", inverse: "owner", .toMany(ordered: false))
                ])
            Entity("Other", attributes: [Attribute("name", .string)])
        }
        let entity = try #require(model.entity(named: "Thing"))
        let owner = entity.propertyPosition(ofRelationship: try #require(entity.relationshipPosition("owner")))
        let items = entity.propertyPosition(ofRelationship: try #require(entity.relationshipPosition("items")))
        let thing = ObjectID(entity: entity.index, key: 1), other = ObjectID(entity: 1 - entity.index, key: 1)
        // Each sample, and the positions it belongs at.
        let samples: [(PropertyValue, Set<Int>)] = [
            (.attribute(.null), Set(0..<types.count)), (.attribute(.string("x")), [0]), (.attribute(.uri("a:b")), [1]),
            (.attribute(.binary([1])), [2]), (.attribute(.integer(7)), [3]), (.attribute(.integer(70_000)), []),
            (.attribute(.double(1)), [4]), (.attribute(.float(1)), [5]), (.attribute(.decimal(1)), [6]), (.attribute(.boolean(true)), [7]),
            (.attribute(.boolean(false)), [7]), (.attribute(.date(Date())), [8]), (.attribute(.uuid(UUID())), [9]), (.toOne(nil), [owner]),
            (.toOne(thing), [owner]), (.toOne(other), []), (.toMany([thing]), [items]), (.toMany([thing, other]), [])
        ]
        for (value, positions) in samples {
            let bytes = Self.bytes { ValueEncoding.write(value, &$0) }
            for position in 0..<entity.propertyCount {
                let passed = bytes.withUnsafeBytes { raw in
                    var reader = ByteReader(raw)
                    return (try? ValueEncoding.skipChecked(&reader, model: model, entity: entity, position: position)) != nil && reader.remaining == 0
                }
                #expect(passed == positions.contains(position), "\(value) at \(position)")
            }
        }
    }

    /// No source file outside `Sources/Cairn/Encoding/` names a tag of the encoding: the room
    /// is the only one that reads or writes a tag byte.
    @Test func noFileOutsideTheRoomNamesATag() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let sources = root.appendingPathComponent("Sources")
        let room = sources.appendingPathComponent("Cairn/Encoding").path + "/"
        guard let walker = FileManager.default.enumerator(atPath: sources.path) else {
            Issue.record("no Sources folder at \(sources.path)")
            return
        }
        var checked = 0
        var offenders: [String] = []
        for case let relative as String in walker where relative.hasSuffix(".swift") {
            let path = sources.appendingPathComponent(relative).path
            checked += 1
            guard !path.hasPrefix(room) else { continue }
            let text = try String(contentsOfFile: path, encoding: .utf8)
            if text.contains("ValueTag") || text.contains("fixedSize(ofTag") { offenders.append(relative) }
        }
        #expect(checked > 100, "the walk found the sources")
        #expect(offenders.isEmpty, "outside the encoding room: \(offenders)")
    }
}

extension Value {
    /// Whether export reads this kind by decoding it (``StoredScalar/other``).
    fileprivate var isReadByDecoding: Bool {
        switch self {
        case .decimal, .float, .binary, .uuid, .uri: true
        case .null, .string, .integer, .double, .boolean, .date: false
        }
    }
}
