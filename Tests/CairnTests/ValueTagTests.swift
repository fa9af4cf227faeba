import CairnSupport
import Foundation
import Testing
@testable import Cairn

/// The value tag table is the one description of the value encoding: the codec writes every
/// tag it lists, the row reader measures each value from its layout alone, and the tag numbers
/// and sizes are those of the file format.
@Suite struct ValueTagTests {
    /// One value of every kind, with relationship values, each tag at least once.
    static let samples: [PropertyValue] = [
        .attribute(.null), .attribute(.string("")), .attribute(.string("short")), .attribute(.string(String(repeating: "long ", count: 60))),
        .attribute(.integer(0)), .attribute(.integer(-1)), .attribute(.integer(.max)), .attribute(.integer(.min)),
        .attribute(.double(-0.5)), .attribute(.float(3.25)), .attribute(.decimal(Decimal(string: "12.345") ?? 0)),
        .attribute(.boolean(false)), .attribute(.boolean(true)), .attribute(.date(Date(timeIntervalSinceReferenceDate: 1234.5))),
        .attribute(.binary([0, 1, 2, 255])), .attribute(.uuid(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)))),
        .attribute(.uri("https://example.com/a")),
        .toOne(nil), .toOne(ObjectID(entity: 3, key: 300)), .toMany([]), .toMany([ObjectID(entity: 1, key: 2), ObjectID(entity: 70_000, key: 1 << 40)])
    ]

    @Test func theTagNumbersAndFixedSizesAreTheFileFormats() {
        // docs/FORMAT.md §9: these numbers are on disk in every store.
        let names: [ValueTag] = [
            .null, .string, .integer, .double, .float, .decimal, .falseValue, .trueValue, .date, .binary, .uuid, .uri,
            .noObject, .object, .objects
        ]
        #expect(names.map(\.rawValue) == Array(0...14))
        #expect(ValueTag.allCases.count == 15)
        let sizes = (0..<16).map { ValueTag.fixedSize(ofTag: UInt8($0)) }
        #expect(sizes == [1, 0, 0, 9, 5, 0, 1, 1, 9, 0, 17, 0, 1, 0, 0, 0])
        #expect((16...255).allSatisfy { ValueTag.fixedSize(ofTag: UInt8($0)) == 0 })
        for tag in ValueTag.allCases { #expect(ValueTag.fixedSize(ofTag: tag.rawValue) == tag.fixedSize, "\(tag)") }
    }

    @Test func everyEncodedValueIsMeasuredByItsTagsLayoutAndReadsBack() {
        var written = Set<ValueTag>()
        for sample in Self.samples {
            var writer = ByteWriter(capacity: 64)
            ValueEncoding.write(sample, &writer)
            let bytes = writer.bytes
            guard let tag = bytes.first.flatMap(ValueTag.init(rawValue:)) else {
                Issue.record("\(sample) begins with no known tag")
                continue
            }
            written.insert(tag)
            bytes.withUnsafeBytes { raw in
                guard let base = raw.baseAddress else { return }
                #expect(ValueEncoding.length(base, available: raw.count) == raw.count, "\(sample): the layout \(tag.layout) measures the whole value")
                if tag.fixedSize != 0 { #expect(tag.fixedSize == raw.count, "\(sample)") }
                #expect(ValueEncoding.decodeProperty(raw) == sample, "\(sample) reads back")
            }
        }
        #expect(written == Set(ValueTag.allCases), "every tag is written by some value")
    }
}
