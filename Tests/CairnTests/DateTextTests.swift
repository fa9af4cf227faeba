import CairnTestSupport
import Foundation
import Testing
@testable import Cairn

/// The one date format of the command line (`DateText`): ISO 8601, UTC, milliseconds, `Z`.
@Suite struct DateTextTests {
    /// The date `seconds` after 1970-01-01T00:00:00Z.
    func text(_ seconds: Double) -> String { DateText.iso8601(Date(timeIntervalSince1970: seconds)) }

    /// Seconds since 1970 of a proleptic Gregorian date and time in UTC (days counted by hand:
    /// Hinnant's `days_from_civil`, an independent check of `civil(daysSince1970:)`).
    func seconds(_ year: Int64, _ month: Int64, _ day: Int64, _ hour: Int64 = 0, _ minute: Int64 = 0, _ second: Int64 = 0) -> Double {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Double(days * 86400 + hour * 3600 + minute * 60 + second)
    }

    @Test func knownInstants() {
        #expect(text(0) == "1970-01-01T00:00:00.000Z")
        #expect(DateText.iso8601(Date(timeIntervalSinceReferenceDate: 0)) == "2001-01-01T00:00:00.000Z")
        #expect(text(seconds(2026, 11, 24, 18, 56, 34) + 0.31) == "2026-11-24T18:56:34.310Z")
        #expect(DateText.iso8601(Date(timeIntervalSinceReferenceDate: 0.0015)) == "2001-01-01T00:00:00.002Z", "rounded to the millisecond")
        #expect(DateText.iso8601(Date(timeIntervalSinceReferenceDate: 59.9996)) == "2001-01-01T00:01:00.000Z", "rounding carries")
    }

    @Test func beforeNineteenSeventy() {
        #expect(text(-0.001) == "1969-12-31T23:59:59.999Z")
        #expect(text(-1) == "1969-12-31T23:59:59.000Z")
        #expect(text(-86400) == "1969-12-31T00:00:00.000Z")
        #expect(text(-86400.001) == "1969-12-30T23:59:59.999Z")
        #expect(text(-2_208_988_800) == "1900-01-01T00:00:00.000Z")
        #expect(text(seconds(1066, 10, 14, 9, 30)) == "1066-10-14T09:30:00.000Z", "proleptic Gregorian, no Julian switch")
    }

    @Test func leapYears() {
        for (year, leap) in [(1600, true), (1700, false), (1900, false), (2000, true), (2023, false), (2024, true), (2100, false), (2400, true)] {
            let february28 = seconds(Int64(year), 2, 28, 12)
            #expect(text(february28) == "\(year)-02-28T12:00:00.000Z")
            #expect(text(february28 + 86400) == (leap ? "\(year)-02-29T12:00:00.000Z" : "\(year)-03-01T12:00:00.000Z"), "\(year)")
            #expect(text(seconds(Int64(year), 12, 31, 23, 59, 59)) == "\(year)-12-31T23:59:59.000Z")
            #expect(text(seconds(Int64(year), 12, 31, 23, 59, 59) + 1) == "\(year + 1)-01-01T00:00:00.000Z")
        }
    }

    @Test func farYearsTakeTheExpandedForm() {
        #expect(text(seconds(9999, 12, 31, 23, 59, 59) + 0.999) == "9999-12-31T23:59:59.999Z")
        #expect(text(seconds(10000, 1, 1)) == "+10000-01-01T00:00:00.000Z")
        #expect(text(seconds(275_760, 9, 13)) == "+275760-09-13T00:00:00.000Z")
        #expect(text(seconds(1, 1, 1)) == "0001-01-01T00:00:00.000Z")
        #expect(text(seconds(0, 2, 29)) == "0000-02-29T00:00:00.000Z", "year 0 (1 BC) is a leap year")
        #expect(text(seconds(-1, 12, 31, 23)) == "-0001-12-31T23:00:00.000Z")
        #expect(text(seconds(-44, 3, 15)) == "-0044-03-15T00:00:00.000Z")
        #expect(text(seconds(-271_821, 4, 20)) == "-271821-04-20T00:00:00.000Z")
    }

    @Test func datesNoCalendarHoldsAreWrittenWithoutTrapping() {
        for seconds in [Double.nan, .infinity, -.infinity, 1e300, -1e300, 1e16] {
            let written = DateText.iso8601(Date(timeIntervalSinceReferenceDate: seconds))
            #expect(written.hasSuffix("s since 2001-01-01T00:00:00Z"), "\(written)")
        }
    }

    @Test func agreesWithFoundationOnWholeSeconds() {
        // Foundation's ISO 8601 style is the reference from 1600 on (before 1582 it switches to
        // the Julian calendar, which ISO 8601 does not use).
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        var random = TestSeed.generator()
        let low = seconds(1600, 1, 1)
        let high = seconds(9999, 12, 31)
        for _ in 0..<2000 {
            let date = Date(timeIntervalSince1970: Double.random(in: low...high, using: &random).rounded(.down))
            #expect(DateText.iso8601(date) == date.formatted(style))
        }
    }
}
