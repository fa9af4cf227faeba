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

    @Test func patternsBeyondTheCompiledCapacityFallBackToDateFormatter() throws {
        let day = Date(timeIntervalSince1970: 1_714_521_600)  // 2024-05-01T00:00:00Z
        // At the capacity: 24 fields (12 numbers, 12 literals), 40 bytes of literal text.
        let fields = try DatePattern("yyyy-MM-dd'T'HH:mm:ss yyyy-MM-dd HH:mm:ss'Z'")
        #expect(fields.isCompiled)
        #expect(date(fields, "2024-05-01T00:00:00 2024-05-01 00:00:00Z") == day)
        let quoted = String(repeating: "x", count: 38)
        let literal = try DatePattern("'\(quoted)'yyyy-MM-dd")
        #expect(literal.isCompiled)
        #expect(date(literal, quoted + "2024-05-01") == day)
        // One past it: read (and written) by DateFormatter, alike.
        for (pattern, text) in [
            ("yyyy-MM-dd'T'HH:mm:ss yyyy-MM-dd HH:mm:ss'Z'a", "2024-05-01T00:00:00 2024-05-01 00:00:00ZAM"),
            ("'\(quoted)x'yyyy-MM-dd", quoted + "x2024-05-01"),
            ("'\(quoted)'yyyy-MM-dd '\(quoted)'", quoted + "2024-05-01 " + quoted)
        ] {
            let long = try DatePattern(pattern)
            #expect(!long.isCompiled, "\(pattern)")
            #expect(date(long, text) == day, "\(pattern)")
            #expect(long.string(from: day) == text, "\(pattern)")
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
