import CairnTestSupport
import Foundation
import Testing

@testable import CairnMapping

/// A pattern of fixed places (``FixedDateLayout``) reads exactly the dates its fields read one
/// by one (``DateFieldList/date(_:offset:)``): the same date, or nil alike, for dates written in
/// the pattern and for texts damaged at every byte.
@Suite struct FixedDateLayoutTests {
    /// Which patterns have a fixed layout.
    @Test func onlyPatternsOfDigitsOfOneWidthAndLiteralsHaveOne() throws {
        let fixed = [
            "dd/MM/yyyy HH:mm", "yyyy-MM-dd", "yyyyMMdd", "yyyy-MM-dd HH:mm:ss", "dd.MM.yy", "MM/dd/yyyy", "yyyy-MM-dd'T'HH:mm:ss",
            "yyy-MM-dd", "HH:mm:ss dd-MM-yyyy", "yyyy年MM月dd日", "'at 'HH:mm' on 'dd/MM/yy", "yyyyMMddHHmmss", "MM/yyyy  "
        ]
        for pattern in fixed { #expect(try DatePattern(pattern).fixed != nil, "\(pattern)") }
        let other = [
            "d/M/yyyy",  // one or two digits
            "y-MM-dd",  // one or more
            "yyyy-MM-dd HH:mm:ss.SSS",  // a fraction
            "EEE, dd MMM yyyy",  // names
            "yyyy-MM-dd'T'HH:mm:ssZ",  // a zone
            "hh:mm a dd/MM/yyyy",  // twelve hours
            "dd/MM/yyyy dd",  // a field twice
            "MM/yy",  // shorter than eight bytes
            "yyyy-MM-dd HH:mm:ss 'and some text'",  // longer than 24
            "yyyy-MM-dd G"  // DateFormatter's
        ]
        for pattern in other { #expect(try DatePattern(pattern).fixed == nil, "\(pattern)") }
    }

    @Test func itReadsWhatTheFieldsReadOneByOne() throws {
        let patterns = [
            "dd/MM/yyyy HH:mm", "yyyy-MM-dd", "yyyyMMdd", "yyyy-MM-dd HH:mm:ss", "dd.MM.yy", "MM/dd/yyyy", "yyyy-MM-dd'T'HH:mm:ss",
            "yyy-MM-dd", "yyyy年MM月dd日", "yyyyMMddHHmmss", "'at 'HH:mm' on 'dd/MM/yy", "HH:mm:ss", "HH:mm:ss dd/MM", "MM/yyyy  "
        ]
        var generator = SeededRandom(seed: 77)
        let replacements: [UInt8] = Array("0159/:- Ta".utf8) + [0x00, 0x7F, 0xFF, 0xE5, 0x3A, 0x2F]
        var compared = 0
        for text in patterns {
            let pattern = try DatePattern(text)
            let layout = try #require(pattern.fixed, "\(text)")
            func agree(_ bytes: [UInt8], offset: Int) {
                let (fixed, fields) = bytes.withUnsafeBytes { (layout.date($0, offset: offset), pattern.fields.date($0, offset: offset)) }
                #expect(fixed == fields, "\(text): \(String(decoding: bytes, as: UTF8.self).debugDescription) at \(offset)")
                compared += 1
            }
            for _ in 0..<400 {
                // Any instant of years 1 to 9999, written in the pattern; then damaged.
                let seconds = Double(Int64.random(in: -62_135_596_800..<253_402_300_800, using: &generator))
                let offset = [0, 3600, -18_000, 19_800][Int.random(in: 0..<4, using: &generator)]
                let written = Array(pattern.string(from: Date(timeIntervalSince1970: seconds), offset: offset).utf8)
                agree(written, offset: offset)
                var damaged = written
                damaged[Int.random(in: 0..<damaged.count, using: &generator)] = replacements.randomElement(using: &generator) ?? 0
                agree(damaged, offset: offset)
                agree(Array(written.dropLast()), offset: offset)
                agree(written + [UInt8(ascii: "0")], offset: offset)
            }
            // Every byte value at every place of a leap day and of a day of year 987 (so that a
            // field goes out of range, a digit is replaced by anything, a literal changes).
            for seconds in [951_782_400.0, -31_007_009_693] {  // 2000-02-29 00:00:00, 0987-06-05 13:45:07
                let sample = Array(pattern.string(from: Date(timeIntervalSince1970: seconds)).utf8)
                for at in sample.indices {
                    for byte in UInt8.min...UInt8.max {
                        var text = sample
                        text[at] = byte
                        agree(text, offset: 0)
                    }
                }
            }
        }
        #expect(compared > 100_000)
    }

    /// The instant of civil fields (``DateRange/date(year:month:day:hour:minute:second:nanoseconds:offset:defaultOffset:)``)
    /// is in the range exactly when ``DateRange/contains(secondsSince1970:offset:)`` says so,
    /// at its edges, with and without a fraction and an offset; an offset past the range's span
    /// leaves every date out, without overflowing.
    @Test func theInstantOfCivilFieldsIsCheckedAsTheRangeSays() {
        let edges: [(year: Int, month: Int, day: Int, seconds: Int)] = [
            (1, 1, 1, 0), (1, 1, 1, 59), (9999, 12, 31, 86_399), (9999, 12, 31, 86_340), (1970, 1, 1, 0)
        ]
        for edge in edges {
            for offset in [-86_399, -1, 0, 1, 86_399] {
                for defaultOffset in [-86_399, 0, 86_399] {
                    for nanoseconds in [0, 1, 999_999_999] {
                        let date = DateRange.date(
                            year: edge.year, month: edge.month, day: edge.day, hour: edge.seconds / 3600, minute: edge.seconds / 60 % 60,
                            second: edge.seconds % 60, nanoseconds: nanoseconds, offset: offset, defaultOffset: defaultOffset)
                        let days = ISO8601DateParser.daysSince1970(year: edge.year, month: edge.month, day: edge.day)
                        let seconds = Double(days * 86_400 + edge.seconds - offset) + Double(nanoseconds) / 1e9
                        let inRange = DateRange.contains(secondsSince1970: seconds, offset: defaultOffset)
                        #expect(date == (inRange ? Date(timeIntervalSince1970: seconds) : nil), "\(edge) \(offset) \(defaultOffset) \(nanoseconds)")
                    }
                }
            }
        }
        for offset in [Int.max, Int.min, 1 << 40, -(1 << 40)] {
            #expect(DateRange.date(year: 2024, month: 5, day: 1, hour: 9, minute: 30, second: 0, nanoseconds: 0, offset: 0, defaultOffset: offset) == nil)
            #expect(DateRange.date(year: 1, month: 1, day: 1, hour: 0, minute: 0, second: 0, nanoseconds: 0, offset: offset, defaultOffset: offset) == nil)
        }
    }

    /// The dates a reader of fixed places takes at the edges: leap days, the last minute of a
    /// day, a two-digit year's century, and years 1 and 9999 (with an offset that leaves them).
    @Test func edgesOfTheCalendarAndTheRange() throws {
        let european = try #require(try DatePattern("dd/MM/yyyy HH:mm").fixed)
        let short = try #require(try DatePattern("dd.MM.yy").fixed)
        func date(_ layout: FixedDateLayout, _ text: String, offset: Int = 0) -> Double? {
            Array(text.utf8).withUnsafeBytes { layout.date($0, offset: offset)?.timeIntervalSince1970 }
        }
        #expect(date(european, "29/02/2000 23:59") == 951_868_740)
        #expect(date(european, "29/02/1900 00:00") == nil)
        #expect(date(european, "31/04/2024 00:00") == nil)
        #expect(date(european, "01/01/2024 24:00") == nil)
        #expect(date(european, "01/01/2024 12:60") == nil)
        #expect(date(european, "00/01/2024 12:00") == nil)
        #expect(date(european, "01/13/2024 12:00") == nil)
        #expect(date(european, "01/01/0000 00:00") == nil)
        #expect(date(european, "01/01/0001 00:00") == -62_135_596_800)
        #expect(date(european, "01/01/0001 00:00", offset: 3600) == nil)
        #expect(date(european, "31/12/9999 23:59") == 253_402_300_740)
        #expect(date(european, "01/05/2024 14:00", offset: 7200) == 1_714_564_800)
        #expect(date(european, "01/05/2024 14:00 ") == nil)
        #expect(date(european, "01-05-2024 14:00") == nil)
        #expect(date(short, "01.05.69") == 3_134_592_000)
        #expect(date(short, "01.05.70") == 10_368_000)
    }
}
