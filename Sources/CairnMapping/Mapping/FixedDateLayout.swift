import CairnSupport
import Foundation

/// A compiled date pattern whose every field is digits of one width (`yyyy`, `yyy`, `yy` and
/// `uuuu`, `MM` and `LL`, `dd`, `HH`, `mm`, `ss`) and whose other text is literal
/// (`dd/MM/yyyy HH:mm`, `yyyy-MM-dd`, `yyyyMMdd`): its dates have one length and each field one
/// place. A date is read by checking its bytes eight at a time (the literal bytes equal, the
/// others digits) and taking each field's digits from its place, where
/// ``DateFieldList/date(_:offset:)`` goes field by field.
/// Both read the same dates (`FixedDateLayoutTests`).
///
/// A plain value of 96 bytes; a pattern of another kind (a name, a fraction, a zone, a
/// field of one or more digits, a field given twice) or of a length outside 8 to 24 bytes has
/// none.
struct FixedDateLayout: BitwiseCopyable {
    /// The shortest and longest texts read this way (at least 8: ``word(_:_:)`` loads eight
    /// bytes).
    static let lengths = 8...24

    /// The text's length in bytes.
    let length: Int
    /// Per eight bytes of text (the first in the lowest byte): the literal bytes, zero at the
    /// others.
    private var literals = InlineArray<3, UInt64>(repeating: 0)
    /// Per eight bytes: 0xFF at each literal byte.
    private var literalMask = InlineArray<3, UInt64>(repeating: 0)
    /// Per eight bytes: 0xFF at each digit.
    private var digitMask = InlineArray<3, UInt64>(repeating: 0)
    /// The first byte of the year, month, day, hour, minute and second (``absent``: not in the
    /// pattern, which leaves the field at its default: 1970-01-01 00:00:00).
    private let places: InlineArray<6, UInt8>
    /// The year's digits (2: `yy`, the years 1970 to 2069; 3; 4).
    private let yearWidth: Int

    /// A field's place when the pattern has no such field.
    private static let absent: UInt8 = 0xFF
    /// The fields, in the order of ``places``.
    private enum Part: Int { case year, month, day, hour, minute, second }

    /// The layout of `list`, or nil when it is not of fixed places.
    init?(_ list: some DateFieldList) {
        var length = 0
        var places = InlineArray<6, UInt8>(repeating: Self.absent)
        var yearWidth = 4
        for index in 0..<list.count {
            let part: Part
            let width: Int
            switch list[index] {
            case .year(let digits) where (2...4).contains(digits):
                (part, width) = (.year, Int(digits))
                yearWidth = width
            case .month(let digits) where digits == 2: (part, width) = (.month, 2)
            case .day(let digits) where digits == 2: (part, width) = (.day, 2)
            case .hour24(let digits) where digits == 2: (part, width) = (.hour, 2)
            case .minute(let digits) where digits == 2: (part, width) = (.minute, 2)
            case .second(let digits) where digits == 2: (part, width) = (.second, 2)
            case .literal(let start, let count):
                guard length + Int(count) <= Self.lengths.upperBound else { return nil }
                for at in 0..<Int(count) {
                    let place = length + at
                    literals[place / 8] |= UInt64(list.literal(Int(start) + at)) << Self.shift(place)
                    literalMask[place / 8] |= 0xFF << Self.shift(place)
                }
                length += Int(count)
                continue
            default:
                return nil
            }
            guard places[part.rawValue] == Self.absent, length + width <= Self.lengths.upperBound else { return nil }
            places[part.rawValue] = UInt8(truncatingIfNeeded: length)
            length += width
        }
        guard Self.lengths.contains(length) else { return nil }
        self.length = length
        self.places = places
        self.yearWidth = yearWidth
        // Every byte of the text that is not literal is a field's digit.
        for at in 0..<length where literalMask[at / 8] >> Self.shift(at) & 0xFF == 0 { digitMask[at / 8] |= 0xFF << Self.shift(at) }
    }

    /// The date the bytes write, or nil: as ``DateFieldList/date(_:offset:)`` reads it.
    func date(_ bytes: UnsafeRawBufferPointer, offset: Int) -> Date? {
        guard bytes.count == length else { return nil }
        // Eight bytes at once: the literal ones equal, the others digits (high half 3: 0x30 to
        // 0x3F; and with 6 added still 3: 0x30 to 0x39). Once every high half is 3, no byte
        // plus 6 carries into the next; when one is not, the date is refused whatever the sum.
        let highHalves: UInt64 = 0xF0F0_F0F0_F0F0_F0F0
        let threes: UInt64 = 0x3030_3030_3030_3030
        let sixes: UInt64 = 0x0606_0606_0606_0606
        for word in 0..<((length + 7) / 8) {
            let text = Self.word(bytes, word)
            let digits = text & digitMask[word]
            guard (text ^ literals[word]) & literalMask[word] == 0, digits & highHalves == threes & digitMask[word],
                (digits &+ sixes) & highHalves == threes & digitMask[word]
            else { return nil }
        }
        func number(_ part: Part, _ width: Int, default value: Int) -> Int {
            let place = Int(places[part.rawValue])
            guard place != Int(Self.absent) else { return value }
            var number = 0
            for at in place..<(place + width) { number = number * 10 + Int(bytes[at] &- UInt8(ascii: "0")) }
            return number
        }
        let written = number(.year, yearWidth, default: 1970)
        let year = yearWidth == 2 ? DatePattern.year(twoDigits: written) : written
        return DateRange.date(
            year: year, month: number(.month, 2, default: 1), day: number(.day, 2, default: 1), hour: number(.hour, 2, default: 0),
            minute: number(.minute, 2, default: 0), second: number(.second, 2, default: 0), nanoseconds: 0, offset: offset, defaultOffset: offset)
    }

    /// Where byte `place` of the text sits in its word of eight.
    private static func shift(_ place: Int) -> UInt64 { UInt64(place % 8 * 8) }

    /// Bytes `8 * index` up to 8 more of `bytes` (at least 8 bytes long), the first in the lowest
    /// byte, zero past the end.
    @inline(__always)
    private static func word(_ bytes: UnsafeRawBufferPointer, _ index: Int) -> UInt64 {
        assert(bytes.count >= 8)
        let start = index * 8
        guard start + 8 > bytes.count else { return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: start, as: UInt64.self)) }
        // The last eight bytes, shifted down past those before `start`.
        let last = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: bytes.count - 8, as: UInt64.self))
        return last >> UInt64((start + 8 - bytes.count) * 8)
    }
}
