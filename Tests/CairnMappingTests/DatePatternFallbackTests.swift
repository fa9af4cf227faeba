import Cairn
import CairnMapping
import Foundation
import Testing

/// Patterns with letters the compiled reader does not read go to `DateFormatter`; the common
/// zone names are compiled.
@Suite struct DatePatternFallbackTests {
    private func date(_ pattern: DatePattern, _ text: String, offset: Int = 0) -> Date? {
        Array(text.utf8).withUnsafeBytes { pattern.date($0, offset: offset) }
    }

    @Test func universalZoneNamesAreCompiled() throws {
        let pattern = try DatePattern("EEE, dd MMM yyyy HH:mm:ss zzz")
        #expect(pattern.isCompiled)
        let noon = Date(timeIntervalSince1970: 1_714_564_800)  // 2024-05-01T12:00:00Z
        #expect(date(pattern, "Wed, 01 May 2024 12:00:00 GMT") == noon)
        #expect(date(pattern, "Wed, 01 May 2024 12:00:00 UTC") == noon)
        #expect(date(pattern, "Wed, 01 May 2024 14:00:00 GMT+02:00") == noon)
        #expect(date(pattern, "Wed, 01 May 2024 14:00:00 +02:00") == noon)
        #expect(date(pattern, "Wed, 01 May 2024 12:00:00 GMX") == nil)
    }

    /// A zone's offset is `±hh`, `±hhmm` or `±hh:mm`: a minute of one digit, or a colon without
    /// minutes, is refused, not read as no minutes.
    @Test func aZoneWithAPartialMinuteIsRefused() throws {
        let noon = Date(timeIntervalSince1970: 1_714_564_800)  // 2024-05-01T12:00:00Z
        for letters in ["Z", "ZZZZZ"] {
            let pattern = try DatePattern("yyyy-MM-dd HH:mm " + letters)
            for zone in ["+02", "+0200", "+02:00"] { #expect(date(pattern, "2024-05-01 14:00 " + zone) == noon, "\(letters) \(zone)") }
            for zone in ["+02:5", "+025", "+02:", "+02:5x", "+2", "+02:60"] { #expect(date(pattern, "2024-05-01 14:00 " + zone) == nil, "\(letters) \(zone)") }
        }
    }

    @Test func lettersOnlyFoundationReadsFallBackToIt() throws {
        let era = try DatePattern("yyyy-MM-dd G")
        #expect(!era.isCompiled)
        let day = Date(timeIntervalSince1970: 1_714_521_600)  // 2024-05-01T00:00:00Z
        #expect(date(era, "2024-05-01 AD") == day)
        #expect(era.string(from: day) == "2024-05-01 AD")
        let dayOfYear = try DatePattern("yyyy D")
        #expect(!dayOfYear.isCompiled)
        #expect(date(dayOfYear, "2024 122") == day)
        #expect(date(dayOfYear, "2024 122", offset: 3600) == day.addingTimeInterval(-3600))
        #expect(date(dayOfYear, "not a date") == nil)
        // Still refused: letters that are not pattern letters, and unclosed quotes.
        #expect(throws: MappingError.self) { try DatePattern("yyyy-jj") }
        #expect(throws: MappingError.self) { try DatePattern("yyyy 'G") }
    }

    /// A pattern longer than the flat import holds inline (24 fields, 40 bytes of literal text)
    /// is still compiled, and reads and writes as a shorter one: a pattern's length never
    /// changes what it means.
    @Test func patternsOfAnyLengthAreCompiled() throws {
        let day = Date(timeIntervalSince1970: 1_714_564_800 + 63)  // 2024-05-01T12:01:03Z
        let quoted = String(repeating: "x", count: 38)
        let cases = [
            // At the inline capacity: 24 fields (12 numbers, 12 literals); 40 bytes of literal text.
            ("yyyy-MM-dd'T'HH:mm:ss yyyy-MM-dd HH:mm:ss'Z'", "2024-05-01T12:01:03 2024-05-01 12:01:03Z"),
            ("'\(quoted)'yyyy-MM-dd HH:mm:ss", quoted + "2024-05-01 12:01:03"),
            // Past it, and far past it.
            ("yyyy-MM-dd'T'HH:mm:ss yyyy-MM-dd hh:mm:ss'Z'a", "2024-05-01T12:01:03 2024-05-01 12:01:03ZPM"),
            ("'\(quoted)x'yyyy-MM-dd HH:mm:ss", quoted + "x2024-05-01 12:01:03"),
            ("'Report generated on 'yyyy-MM-dd' at 'HH:mm:ss' (UTC, 24-hour clock)'", "Report generated on 2024-05-01 at 12:01:03 (UTC, 24-hour clock)"),
            (String(repeating: "yyyy-MM-dd HH:mm:ss ", count: 30) + "'end'", String(repeating: "2024-05-01 12:01:03 ", count: 30) + "end")
        ]
        for (pattern, text) in cases {
            let compiled = try DatePattern(pattern)
            #expect(compiled.isCompiled, "\(pattern)")
            #expect(date(compiled, text) == day, "\(pattern)")
            #expect(date(compiled, text + "x") == nil, "\(pattern)")
            #expect(compiled.string(from: day) == text, "\(pattern)")
        }
    }

    @Test func fallbackDatesStayInRange() throws {
        let era = try DatePattern("yyyy-MM-dd G")
        #expect(date(era, "0001-01-01 BC") == nil, "year 0 (1 BC) lies outside years 1 to 9999")
    }

    @Test func theFallbackKeepsTheGregorianCalendarAndItsOffsets() throws {
        let era = try DatePattern("yyyy-MM-dd G")
        let compiled = try DatePattern("yyyy-MM-dd")
        for text in ["0001-01-01", "1000-01-01", "1582-10-10", "2024-02-29"] {
            #expect(date(era, text + " AD") == date(compiled, text), "\(text)")
            #expect(date(era, text + " AD", offset: -5 * 3600) == date(compiled, text, offset: -5 * 3600), "\(text)")
        }
        // An offset DateFormatter's zones cannot hold is refused when the mapping is built.
        let model = try Model { Entity("Event") { Attribute("when", .date) } }
        #expect(throws: MappingError.self) {
            try Mapping(model: model) { EntityMapping("Event") { AttributeMap("when", date: .pattern("yyyy-MM-dd G", offset: 19 * 3600)) } }
        }
        _ = try Mapping(model: model) { EntityMapping("Event") { AttributeMap("when", date: .pattern("yyyy-MM-dd", offset: 19 * 3600)) } }
    }
}
