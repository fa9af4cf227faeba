import CairnSupport
import CairnTestSupport
import Foundation
import Testing

@testable import Cairn

/// The decimal written straight from number text is byte for byte the `Decimal` that
/// `Decimal(string:)` reads from it, as the store writes it.
@Suite struct DecimalTextTests {
    /// The bytes the general path writes: `Decimal(string:)`, kept when exact (at most 38
    /// significant digits), then ``ValueEncoding/write(_:_:)-(Value,_)``.
    private func general(_ text: String) -> [UInt8]? {
        guard let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), !value.isNaN else { return nil }
        return ValueEncoding.encoded(.decimal(value))
    }

    private func fast(_ text: String) -> [UInt8]? {
        var writer = ByteWriter(capacity: 64)
        let written = Array(text.utf8).withUnsafeBytes { ValueEncoding.writeDecimal(numberText: $0, &writer) }
        return written ? writer.bytes : nil
    }

    @Test(arguments: [
        "0", "-0", "0.000", "-0.0", "0e10", "0.0e-5", "1", "-1", "10", "100", "1.50", "-100.00", "1e3", "1E+2", "5e-1", "-5e-1",
        "0.1", "0.00012300", "1.5e-10", "123.456e-2", "120.0e-1", "10.5", "1234.56", "-99999.99", "12345678901234567890123456789012345678",
        "0.12345678901234567890123456789012345678", "1234567890.0987654321", "1e64", "1e-64", "99e62", "7.25e+3"
    ])
    func writesWhatTheGeneralPathWrites(_ text: String) {
        #expect(fast(text) != nil, "\(text) is on the fast path")
        #expect(fast(text) == general(text), "\(text)")
    }

    @Test(arguments: [
        "", "-", "01", "1.", ".5", "1e", "1e+", "+1", "1.2.3", "12a", "NaN", "Infinity", " 1", "1 ", "0x10", "1e99999",
        // Beyond the fast path: more than 38 digits, or a power of ten beyond ±64.
        "123456789012345678901234567890123456789", "1e65", "1e-65", "0e200", "0E-130", "-0e129", "0." + String(repeating: "0", count: 200)
    ])
    func leavesOtherTextToTheGeneralPath(_ text: String) {
        #expect(fast(text) == nil, "\(text)")
    }

    /// Random number text of every shape: signs, leading zeros of the fraction, trailing zeros,
    /// exponents; each within the fast path is written as the general path writes it.
    @Test func randomTextAgreesWithDecimal() {
        var generator = SeededRandom(seed: 0xDEC1_3A1)
        var taken = 0
        for _ in 0..<20_000 {
            var text = Bool.random(using: &generator) ? "-" : ""
            let whole = Int.random(in: 0...20, using: &generator)
            text += whole == 0 ? "0" : String(Int.random(in: 1...9, using: &generator)) + digits(whole - 1, &generator)
            if Bool.random(using: &generator) {
                text +=
                    "." + String(repeating: "0", count: Int.random(in: 0...6, using: &generator))
                    + digits(Int.random(in: 1...20, using: &generator), &generator)
            }
            if Int.random(in: 0..<3, using: &generator) == 0 {
                text += ["e", "E"].randomElement(using: &generator)! + ["", "+", "-"].randomElement(using: &generator)!
                text += String(Int.random(in: 0...70, using: &generator))
            }
            guard let written = fast(text) else { continue }
            taken += 1
            #expect(written == general(text), "\(text)")
        }
        #expect(taken > 15_000)
    }

    private func digits(_ count: Int, _ generator: inout SeededRandom) -> String {
        String((0..<count).map { _ in Character(String(Int.random(in: 0...9, using: &generator))) })
    }

    /// Stored decimal text of up to 38 bytes passes the commit's quick check exactly when the
    /// full check (``ValueEncoding/isPlainDecimalText(_:)``) passes it: random text of digits,
    /// signs, points and exponents, and every kind of what may not pass.
    @Test func theQuickCheckOfShortDecimalTextAgreesWithTheFullOne() {
        var generator = SeededRandom(seed: 38)
        let alphabet = Array("0123456789-.e+x ".utf8)
        var texts = ["", "0", "-0", "00", "01", "-01", "1.", ".5", "-", "1.5", "0.0", "-0.00", "1e5", "1.5.5", "--1", String(repeating: "9", count: 38)]
        texts.append(String(repeating: "9", count: 39))
        for _ in 0..<50_000 {
            let length = Int.random(in: 0...40, using: &generator)
            let weighted = Bool.random(using: &generator)  // mostly digits: more texts that pass
            texts.append(
                String(
                    decoding: (0..<length).map { _ in
                        weighted && Int.random(in: 0..<4, using: &generator) > 0
                            ? UInt8.random(in: 48...57, using: &generator) : alphabet.randomElement(using: &generator) ?? 0
                    }, as: UTF8.self))
        }
        let kind = StoredKind.decimal
        for text in texts {
            let bytes = Array(text.utf8)
            guard bytes.count < 0x80 else { continue }
            let stored = [ValueTag.decimal.rawValue, UInt8(bytes.count)] + bytes
            let quick = stored.withUnsafeBytes { ValueEncoding.quickSize($0, at: 0, kind) }
            let full = bytes.withUnsafeBytes { ValueEncoding.isPlainDecimalText($0) }
            if bytes.count <= ValueEncoding.decimalDigits {
                #expect((quick == stored.count) == full, "\(text.debugDescription)")
            } else {
                #expect(quick == 0, "\(text.debugDescription): longer text is left to the full check")
            }
            #expect(quick == 0 || quick == stored.count)
        }
    }

}
