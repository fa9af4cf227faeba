import CCairnSupport

/// Numbers read from their text without making a String.
enum NumberText {
    /// The nearest finite `Double` to JSON number text (checked against JSON's grammar by the
    /// scanner), read in the POSIX locale; nil when it is beyond `Double`'s range or longer than
    /// 63 bytes (the caller then takes the general path).
    static func double(_ bytes: UnsafeRawBufferPointer) -> Double? {
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

    /// The double that JSON number text (checked by the caller; `isInteger`: without fraction
    /// or exponent) writes, as ``double(_:)`` reads it: an integer of at most 2^53 in
    /// magnitude (every one a double holds exactly) without `strtod`.
    static func double(_ bytes: UnsafeRawBufferPointer, isInteger: Bool) -> Double? {
        // (Zero goes to strtod, which keeps the sign of `-0`.)
        if isInteger, let value = integer(bytes), value != 0, value.magnitude <= 1 << 53 { return Double(value) }
        return double(bytes)
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
