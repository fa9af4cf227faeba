import Foundation

/// A number of JSON text: its bytes, checked against JSON's number grammar; converted on demand,
/// exactly or not at all.
public struct JSONNumberText: Equatable, Sendable {
    /// The number's bytes.
    public var range: Range<Int>
    /// Whether it has a fraction or an exponent (`1.5`, `2e3`): not written as an integer.
    public var hasFractionOrExponent: Bool
}

extension JSONScanner {
    /// The number's text, as written.
    public func text(_ number: JSONNumberText) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes[number.range]), as: UTF8.self)
    }

    /// The number as an `Int64` when it is an integer written without fraction or exponent
    /// that fits; nil otherwise.
    public func integer(_ number: JSONNumberText) -> Int64? {
        guard !number.hasFractionOrExponent else { return nil }
        return NumberText.integer(bytes.piece(number.range))
    }

    /// The number as the nearest `Double`; nil when it is beyond `Double`'s range (`1e400`).
    public func double(_ number: JSONNumberText) -> Double? {
        guard let value = Double(text(number)), value.isFinite else { return nil }
        return value
    }

    /// The number as an exact `Decimal`; nil when `Decimal` cannot hold it exactly (more than 38
    /// significant digits, or an exponent beyond its range).
    public func decimal(_ number: JSONNumberText) -> Decimal? {
        ValueReader.exactDecimal(text(number))
    }

    /// Scans a number starting at `offset`; leaves `offset` after it.
    mutating func scanNumber() throws(JSONSyntaxError) -> JSONNumberText {
        let start = offset
        var index = offset
        func digit(_ at: Int) -> Bool { at < bytes.count && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[at]) }
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard digit(index) else { throw failure("a '-' must be followed by a digit", at: index) }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if digit(index) { throw failure("a number may not start with 0 followed by digits", at: start) }
        } else {
            while digit(index) { index += 1 }
        }
        var fractionOrExponent = false
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digit(index) else { throw failure("a '.' in a number must be followed by a digit", at: index) }
            while digit(index) { index += 1 }
            fractionOrExponent = true
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digit(index) else { throw failure("an exponent needs a digit", at: index) }
            while digit(index) { index += 1 }
            fractionOrExponent = true
        }
        offset = index
        return JSONNumberText(range: start..<index, hasFractionOrExponent: fractionOrExponent)
    }
}
