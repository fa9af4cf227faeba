import CCairnSupport

/// Numbers read from their text without making a String.
enum NumberText {
    /// The nearest finite `Double` to JSON number text (checked against JSON's grammar by the
    /// scanner), read in the POSIX locale; nil when it is beyond `Double`'s range, or longer
    /// than 63 bytes and not of the exact kind (the caller then takes the general path).
    static func double(_ bytes: UnsafeRawBufferPointer) -> Double? {
        if let exact = exactDouble(bytes) { return exact }
        guard !bytes.isEmpty, bytes.count < 64 else { return nil }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer -> Double? in
            guard let base = buffer.baseAddress else { return nil }
            for index in 0..<bytes.count { base[index] = CChar(bitPattern: bytes[index]) }
            base[bytes.count] = 0
            var end: UnsafeMutablePointer<CChar>?
            let value = cairn_strtod_posix(base, &end)
            guard let end, end - base == bytes.count, value.isFinite else { return nil }
            return value
        }
    }

    /// Powers of ten a double holds exactly.
    private static let exactPowersOfTen: [Double] = (0...22).map { power in (0..<power).reduce(1.0) { value, _ in value * 10 } }

    /// Decimal text of at most 15 significant digits and a power of ten within ±22 (the
    /// common case: `1234.56`, `-0.001`, `2.5e3`), computed without `strtod`: the digits are a
    /// double exactly, and so is the power of ten, so one multiplication or division rounds
    /// once, correctly (Clinger's fast path), as `strtod` rounds; nil for anything else.
    private static func exactDouble(_ bytes: UnsafeRawBufferPointer) -> Double? {
        var index = 0
        let count = bytes.count
        let negative = count > 0 && bytes[0] == UInt8(ascii: "-")
        if negative { index = 1 }
        var mantissa: UInt64 = 0
        var significant = 0
        var scale = 0
        var sawDigit = false
        var inFraction = false
        while index < count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "."), !inFraction {
                inFraction = true
                index += 1
                continue
            }
            let digit = byte &- UInt8(ascii: "0")
            guard digit < 10 else { break }
            sawDigit = true
            if mantissa != 0 || digit != 0 { significant += 1 }
            guard significant <= 15 else { return nil }
            mantissa = mantissa * 10 + UInt64(digit)
            if inFraction { scale -= 1 }
            index += 1
        }
        guard sawDigit else { return nil }
        if index < count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            var exponentNegative = false
            if index < count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                exponentNegative = bytes[index] == UInt8(ascii: "-")
                index += 1
            }
            var exponent = 0
            var exponentDigits = 0
            while index < count, bytes[index] &- UInt8(ascii: "0") < 10 {
                exponent = exponent * 10 + Int(bytes[index] &- UInt8(ascii: "0"))
                exponentDigits += 1
                guard exponentDigits <= 4 else { return nil }
                index += 1
            }
            guard exponentDigits > 0 else { return nil }
            scale += exponentNegative ? -exponent : exponent
        }
        guard index == count else { return nil }
        if mantissa == 0 { return negative ? -0.0 : 0.0 }
        guard scale >= -22, scale <= 22 else { return nil }
        let value = exactPowersOfTen.withUnsafeBufferPointer { powers in
            scale < 0 ? Double(mantissa) / powers[-scale] : Double(mantissa) * powers[scale]
        }
        return negative ? -value : value
    }

    /// The integer that number text without fraction or exponent writes (`-?[0-9]+`, checked
    /// by the caller), when it fits an `Int64`.
    static func integer(_ bytes: UnsafeRawBufferPointer) -> Int64? {
        var index = 0
        let negative = index < bytes.count && bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        guard index < bytes.count else { return nil }
        // Accumulated as a negative number, whose range is one larger (Int64.min).
        var value: Int64 = 0
        while index < bytes.count {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (shifted, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (next, overflowB) = shifted.subtractingReportingOverflow(Int64(digit))
            guard !overflowA, !overflowB else { return nil }
            value = next
            index += 1
        }
        if negative { return value }
        return value == Int64.min ? nil : -value
    }
}
