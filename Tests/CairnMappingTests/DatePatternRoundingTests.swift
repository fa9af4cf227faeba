import Cairn
import Foundation
import Testing
@testable import CairnMapping

/// A pattern writes a date rounded to its finest fraction of a second when it has one (as ISO
/// 8601 export rounds to the millisecond), the instant's own fields when it has none, and never
/// a text its import refuses.
@Suite struct DatePatternRoundingTests {
    /// Month and day names: whole or their first three letters, in either case; anything else
    /// is not a date of the pattern.
    @Test func namesReadWholeOrByTheirFirstThreeLetters() throws {
        let pattern = try DatePattern("EEE, MMMM d, yyyy")
        let fifth = Date(timeIntervalSince1970: 1_725_494_400)  // 2024-09-05
        for text in ["Thu, September 5, 2024", "THURSDAY, sep 5, 2024", "thu, SEPTEMBER 5, 2024", "Thursday, Sep 5, 2024"] {
            #expect(Array(text.utf8).withUnsafeBytes { pattern.date($0) } == fifth, "\(text)")
        }
        for text in ["Thu, Sept 5, 2024", "Th, Sep 5, 2024", "Thu, Septembe 5, 2024", "Thu, 5, 2024", "Thu, Se"] {
            #expect(Array(text.utf8).withUnsafeBytes { pattern.date($0) } == nil, "\(text)")
        }
        #expect(Array("May 1".utf8).withUnsafeBytes { try? DatePattern("MMM d").date($0) } == Date(timeIntervalSince1970: 10_368_000))
    }

    @Test func everyMonthAndDayNameReadsInEveryForm() throws {
        let pattern = try DatePattern("EEE d MMM yyyy")
        let months = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"]
        let days = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
        #expect(months.count == 12)
        for (number, month) in months.enumerated() {
            let expected = Date(timeIntervalSince1970: Double(Self.daysSince1970(year: 2001, month: number + 1, day: 1) * 86_400))
            for form in [month, String(month.prefix(3)), month.uppercased(), month.capitalized, String(month.prefix(3)).uppercased()] {
                let text = "Mon 1 \(form) 2001"
                #expect(Array(text.utf8).withUnsafeBytes { pattern.date($0) } == expected, "\(text)")
            }
        }
        // Every day name, in every form (the reader reads the name and leaves the date to the
        // day of the month).
        let first = Date(timeIntervalSince1970: Double(Self.daysSince1970(year: 2001, month: 1, day: 1) * 86_400))
        for day in days {
            for form in [day, String(day.prefix(3)), day.uppercased(), day.capitalized, String(day.prefix(3)).uppercased()] {
                let text = "\(form) 1 Jan 2001"
                #expect(Array(text.utf8).withUnsafeBytes { pattern.date($0) } == first, "\(text)")
            }
        }
        for text in ["Thx 1 jan 2001", "Mon 1 jam 2001", "Mon 1 ja 2001", "Mon 1 j@n 2001", "M0n 1 jan 2001", "Mon 1 Jan.2001"] {
            #expect(Array(text.utf8).withUnsafeBytes { pattern.date($0) } == nil, "\(text)")
        }
    }

    /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar.
    private static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        var components = DateComponents()
        (components.year, components.month, components.day) = (year, month, day)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
        return Int((calendar.date(from: components)?.timeIntervalSince1970 ?? 0) / 86_400)
    }

    @Test func aFractionRoundsToItsDigitsAcrossEveryBoundary() throws {
        let milliseconds = try DatePattern("yyyy-MM-dd HH:mm:ss.SSS")
        let cases: [(Double, String)] = [
            (1_700_000_000.123, "2023-11-14 22:13:20.123"),  // stored as .12299…
            (86_399.9996, "1970-01-02 00:00:00.000"),  // over a second, minute, hour and day
            (-0.0004, "1970-01-01 00:00:00.000"),
            (-0.0006, "1969-12-31 23:59:59.999"),
            (-1.5, "1969-12-31 23:59:58.500"),
            (253_402_300_799.9996, "9999-12-31 23:59:59.999")  // the last instant stays in year 9999
        ]
        for (seconds, text) in cases { #expect(milliseconds.string(from: Date(timeIntervalSince1970: seconds)) == text, "\(seconds)") }
        #expect(try DatePattern("ss.S").string(from: Date(timeIntervalSince1970: 0.96)) == "01.0")
        #expect(try DatePattern("HH:mm:ss").string(from: Date(timeIntervalSince1970: 37_259.7)) == "10:20:59")
    }

    /// A pattern without seconds names the calendar fields of the instant, as at 6a9857d
    /// (and as DateFormatter and strftime do): rounding to the second first moves the last
    /// half second of a day into the next day, of a minute into the next minute.
    @Test func aPatternWithoutSecondsKeepsTheInstantsDayAndMinute() throws {
        #expect(try DatePattern("yyyy-MM-dd").string(from: Date(timeIntervalSince1970: 86_399.6)) == "1970-01-01")
        #expect(try DatePattern("HH:mm").string(from: Date(timeIntervalSince1970: 37_259.7)) == "10:20")
    }

    /// A date the exporter's range check accepts is written in the attribute's pattern, so that
    /// import reads it back: at +01:00, 9999-12-31T23:59:59.9996 local passes the check (it
    /// rounds in UTC only) but `DatePattern.string` (which rounds at the offset) falls back to
    /// ISO 8601 `…Z`, which the pattern import refuses.
    @Test func aPatternDateNearYear10000AtAnOffsetRoundTrips() async throws {
        let model = try Model { Entity("T", attributes: [Attribute("id", .integer64), Attribute("when", .date)], uniquenessConstraints: [["id"]]) }
        let store = Store(inMemory: model)
        let context = store.newBackgroundContext()
        let thing = try context.insert("T")
        try thing.setValue(Int64(1), forKey: "id")
        try thing.setValue(Date(timeIntervalSince1970: 253_402_300_799.9996 - 3600), forKey: "when")
        try await context.save()
        let mapping = try Mapping(model: model, dateFormat: .pattern("yyyy-MM-dd'T'HH:mm:ss.SSS", offset: 3600))
        let output = try store.viewContext.exportJSON(FetchRequest("T"), mapping: mapping)
        #expect(!String(decoding: output, as: UTF8.self).contains("Z\""), "\(String(decoding: output, as: UTF8.self))")
        let copy = Store(inMemory: model)
        await #expect(throws: Never.self) { _ = try await copy.importJSON(output, into: "T", mapping: mapping) }
    }
}
