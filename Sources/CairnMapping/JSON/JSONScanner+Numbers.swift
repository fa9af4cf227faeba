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
        guard let number = Self.numberText(bytes, at: offset) else { throw numberError(at: offset) }
        offset = number.range.upperBound
        return number
    }

    /// The number that starts at `start` in `bytes`, checked against JSON's grammar (a `-`, `0`
    /// or digits from 1 to 9, a fraction, an exponent); nil when the text there is not one,
    /// without saying why (``numberError(at:)`` does): the loop every number of an import goes
    /// through. Static, so that a caller's loop keeps its offset in a register.
    @inline(__always)
    static func numberText(_ bytes: UnsafeRawBufferPointer, at start: Int) -> JSONNumberText? {
        let count = bytes.count
        var index = start
        @inline(__always) func isDigit(_ at: Int) -> Bool { at < count && bytes[at] &- UInt8(ascii: "0") < 10 }
        @inline(__always) func digits() { repeat { index += 1 } while isDigit(index) }
        if index < count && bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard isDigit(index) else { return nil }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            guard !isDigit(index) else { return nil }
        } else {
            digits()
        }
        var fractionOrExponent = false
        if index < count && bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard isDigit(index) else { return nil }
            digits()
            fractionOrExponent = true
        }
        if index < count && bytes[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            if index < count && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) { index += 1 }
            guard isDigit(index) else { return nil }
            digits()
            fractionOrExponent = true
        }
        return JSONNumberText(range: start..<index, hasFractionOrExponent: fractionOrExponent)
    }

    /// Why the text at `start` is not a number (``numberText(_:at:)`` is nil there).
    private func numberError(at start: Int) -> JSONSyntaxError {
        var index = start
        func digit(_ at: Int) -> Bool { at < bytes.count && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[at]) }
        if index < bytes.count && bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard digit(index) else { return failure("a '-' must be followed by a digit", at: index) }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if digit(index) { return failure("a number may not start with 0 followed by digits", at: start) }
        } else {
            while digit(index) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digit(index) else { return failure("a '.' in a number must be followed by a digit", at: index) }
            while digit(index) { index += 1 }
        }
        // What is left is an exponent without a digit.
        index += 1
        if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
        return failure("an exponent needs a digit", at: index)
    }
}
