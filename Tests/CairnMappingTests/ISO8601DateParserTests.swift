import Cairn
import CairnTestSupport
import Foundation
import Testing
@testable import CairnMapping

/// ISO 8601 dates read by hand.
@Suite struct ISO8601DateParserTests {
    /// Seconds since 1970, to the microsecond (a `Date` keeps seconds since 2001 in a double, so
    /// digits beyond that are noise).
    static func seconds(_ text: String, offset: Int = 0) -> Double? {
        ISO8601DateParser.date(text, defaultOffset: offset).map { ($0.timeIntervalSince1970 * 1e6).rounded() / 1e6 }
    }

    @Test func theFormsAnImportMeets() {
        #expect(Self.seconds("1970-01-01") == 0)
        #expect(Self.seconds("1970-01-01T00:00:00Z") == 0)
        #expect(Self.seconds("2026-11-24T18:56:34Z") == 1_795_546_594)
        #expect(Self.seconds("2026-11-24T18:56:34.310Z") == 1_795_546_594.31)
        #expect(Self.seconds("2026-11-24t18:56:34,310z") == 1_795_546_594.31)
        #expect(Self.seconds("2026-11-24 18:56:34.310+01:00") == 1_795_542_994.31)
        #expect(Self.seconds("2026-11-24T18:56:34-0530") == 1_795_566_394.0)
        #expect(Self.seconds("2026-11-24T18:56:34+02") == 1_795_539_394.0)
        #expect(Self.seconds("2026-11-24T18:56") == 1_795_546_560)
        #expect(Self.seconds("2026-11-24T18:56:34", offset: 3600) == 1_795_542_994.0)
        #expect(Self.seconds("2026-11-24T18:56:34.123456789123Z") == 1_795_546_594.123457)
        #expect(Self.seconds("1969-12-31T23:59:59.999Z") == -0.001)
        #expect(Self.seconds("2000-02-29T00:00:00Z") == 951_782_400)
        #expect(Self.seconds("0001-01-01T00:00:00Z") == -62_135_596_800)
    }

    @Test(arguments: [
        "", "2026", "2026-11", "2026-13-01", "2026-00-10", "2026-11-31", "2025-02-29", "1900-02-29", "2026-11-24T24:00:00Z",
        "2026-11-24T18:60:00Z", "2026-11-24T18:56:60Z", "2026-11-24T18:56:34.Z", "2026-11-24T18:56:34+2400",
        "2026-11-24T18:56:34+01:60", "2026-11-24T18:56:34ZZ", "2026-11-24X18:56", "26-11-24", "2026-11-24T18", " 2026-11-24",
        "2026-11-24T18:56:34+1"
    ])
    func malformedDatesAreRefused(text: String) {
        #expect(ISO8601DateParser.date(text) == nil, "\(text.debugDescription)")
    }

    @Test func everyMillisecondThatCairnWritesReadsBack() {
        var random = TestSeed.generator()
        // Years 0001 to 9999, the ones written with four digits.
        let range: ClosedRange<Int64> = -62_135_596_800_000...253_402_300_799_999
        for _ in 0..<20_000 {
            let milliseconds = Int64.random(in: range, using: &random)
            let text = DateText.iso8601(millisecondsSince1970: milliseconds)
            guard let date = ISO8601DateParser.date(text) else {
                Issue.record("\(text) does not read")
                return
            }
            #expect((date.timeIntervalSince1970 * 1000).rounded() == Double(milliseconds), "\(text)")
        }
    }
}
