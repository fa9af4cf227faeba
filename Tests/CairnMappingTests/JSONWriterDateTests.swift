import Foundation
import Testing

@testable import Cairn
@testable import CairnMapping

/// The exporter writes dates through `DateText`'s byte writer: the text is `DateText`'s, quoted.
@Suite struct JSONWriterDateTests {
    @Test func writesEveryDateAsDateTextDoes() {
        let seconds: [Double] = [
            0, -1, 1.5, 946_684_800.123, -62_135_596_800, -62_167_219_200, -62_167_219_200.001, 253_402_300_799.999,
            253_402_300_800, -63_587_203_200, 1e13, -1e13, .nan, .infinity, -.infinity
        ]
        for second in seconds {
            let date = Date(timeIntervalSince1970: second)
            var writer = JSONWriter(sink: { _ in })
            writer.isoDate(date)
            #expect(String(decoding: writer.buffer, as: UTF8.self) == "\"" + DateText.iso8601(date) + "\"", "at \(second) s")
        }
    }
}
