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
                #expect(ValueEncoding.length(of: bytes) == bytes.count, "\(value)")
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

    /// A value checked against each kind: only its own passes (and null, for an attribute).
    @Test func aValueIsCheckedAgainstWhatItsPropertyHolds() throws {
        let model = try Model {
            Entity("Thing", attributes: [Attribute("n", .integer16), Attribute("s", .string), Attribute("d", .date)])
        }
        let entity = model.descriptions[0]
        for (position, good, bad) in [(0, Value.integer(7), Value.integer(70_000)), (1, .string("x"), .integer(1)), (2, .date(Date()), .double(1))] {
            for (value, passes) in [(good, true), (bad, false), (.null, true)] {
                let bytes = ValueEncoding.encoded(value)
                let passed = bytes.withUnsafeBytes { raw in
                    var reader = ByteReader(raw)
                    return (try? ValueEncoding.skipChecked(&reader, model: model, entity: entity, position: position)) != nil && reader.remaining == 0
                }
                #expect(passed == passes, "\(value) at \(position)")
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
