import CairnSupport

extension ValueEncoding {
    /// The most significant digits a decimal holds exactly (`Decimal`'s 128-bit mantissa).
    package static let decimalDigits = 38

    /// The powers of ten a decimal read from number text may have on the fast path; beyond them
    /// (still within `Decimal`'s −128…127) the text goes through `Decimal(string:)`.
    static let fastDecimalExponents = -64...64

    /// Writes a decimal given as number text (JSON's grammar: `-12.50`, `1e3`, `0.000123`)
    /// straight from its bytes, exactly as ``write(_:_:)-(Value,_)`` writes the `Decimal` the
    /// text reads as: every digit kept, trailing zeros and the sign of zero dropped, in plain
    /// notation (`Decimal.description`). No `Decimal` and no `String` is made.
    ///
    /// - Returns: false, writing nothing, when the bytes are not number text, hold more than
    ///   ``decimalDigits`` significant digits, or a power of ten beyond ``fastDecimalExponents``:
    ///   the caller then takes the general path, which reads or refuses the text.
    package static func writeDecimal(numberText bytes: UnsafeRawBufferPointer, _ writer: inout ByteWriter) -> Bool {
        guard let number = DecimalText(bytes) else { return false }
        writer.writeByte(ValueTag.decimal.rawValue)
        writer.writeVarint(UInt64(number.textLength))
        number.write(bytes, &writer)
        return true
    }
}

extension ValueEncoding {
    /// Whether stored decimal text is plain number text that `Decimal(string:)` reads exactly
    /// (`-?(0|[1-9][0-9]*)(.[0-9]+)?`, at most ``decimalDigits`` significant digits, a power of
    /// ten within ``fastDecimalExponents``): what ``writeDecimal(numberText:_:)`` writes,
    /// checked without making a `Decimal`. False says only "not on the fast path".
    static func isPlainDecimalText(_ bytes: UnsafeRawBufferPointer) -> Bool {
        DecimalText(bytes, exponentAllowed: false) != nil
    }
}

/// A decimal's significant digits found in number text: where they lie and their power of ten.
private struct DecimalText {
    let negative: Bool
    /// The bytes of the significant digits, from the first nonzero to the last (they may span
    /// the `.`); empty for zero.
    let digits: Range<Int>
    /// Where the `.` is, when it lies inside `digits`.
    let point: Int?
    /// How many significant digits (the `.` not counted).
    let count: Int
    /// The power of ten of the last significant digit.
    let exponent: Int
    /// Whether the text already is the plain text (no exponent, no trailing zero of a fraction,
    /// not zero): written as it is, in one copy.
    let isVerbatim: Bool
    /// The text's length in bytes.
    let byteCount: Int

    /// Reads number text; nil when it is not JSON number text (without an exponent, unless
    /// `exponentAllowed`) or lies beyond the fast path.
    init?(_ bytes: UnsafeRawBufferPointer, exponentAllowed: Bool = true) {
        var index = 0
        let end = bytes.count
        byteCount = end
        func isDigit(_ at: Int) -> Bool { at < end && bytes[at] &- UInt8(ascii: "0") < 10 }
        negative = end > 0 && bytes[0] == UInt8(ascii: "-")
        if negative { index = 1 }
        let wholeStart = index
        while isDigit(index) { index += 1 }
        let wholeEnd = index
        guard wholeEnd > wholeStart, !(wholeEnd - wholeStart > 1 && bytes[wholeStart] == UInt8(ascii: "0")) else { return nil }
        var fractionEnd = wholeEnd
        if index < end && bytes[index] == UInt8(ascii: ".") {
            index += 1
            let fractionStart = index
            while isDigit(index) { index += 1 }
            guard index > fractionStart else { return nil }
            fractionEnd = index
        }
        var written = 0
        if index < end && bytes[index] | 0x20 == UInt8(ascii: "e") {
            guard exponentAllowed else { return nil }
            index += 1
            var sign = 1
            if index < end && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) {
                sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
                index += 1
            }
            let exponentStart = index
            while isDigit(index) {
                // More than four digits of exponent is far beyond the fast path.
                guard index - exponentStart < 4 else { return nil }
                written = written * 10 + Int(bytes[index] &- UInt8(ascii: "0"))
                index += 1
            }
            guard index > exponentStart else { return nil }
            written *= sign
        }
        guard index == end else { return nil }
        // The significant digits: from the first nonzero digit to the last.
        var first = wholeStart
        while first < fractionEnd && (bytes[first] == UInt8(ascii: "0") || bytes[first] == UInt8(ascii: ".")) { first += 1 }
        guard first < fractionEnd else {
            // Zero: its power of ten (the written exponent less the fraction's digits) within
            // the same range, as `Decimal(string:)` refuses `0e200`.
            let fractionDigits = fractionEnd > wholeEnd ? fractionEnd - wholeEnd - 1 : 0
            guard ValueEncoding.fastDecimalExponents.contains(written - fractionDigits) else { return nil }
            self.digits = 0..<0
            point = nil
            count = 0
            exponent = 0
            isVerbatim = false
            return
        }
        var last = fractionEnd - 1
        while bytes[last] == UInt8(ascii: "0") || bytes[last] == UInt8(ascii: ".") { last -= 1 }
        digits = first..<(last + 1)
        // The point lies among the digits when a fraction follows and digits lie on both sides.
        point = wholeEnd < fractionEnd && first < wholeEnd && last > wholeEnd ? wholeEnd : nil
        count = last + 1 - first - (point == nil ? 0 : 1)
        // The place of the last significant digit: 10^(digits after it in the whole part), or
        // 10^-(its place in the fraction).
        let place = last < wholeEnd ? wholeEnd - 1 - last : -(last - wholeEnd)
        exponent = place + written
        isVerbatim = fractionEnd == end && (fractionEnd == wholeEnd || bytes[fractionEnd - 1] != UInt8(ascii: "0"))
        guard count <= ValueEncoding.decimalDigits, ValueEncoding.fastDecimalExponents.contains(exponent) else { return nil }
    }

    /// How many digits sit before the decimal point of the plain text (≤ 0: "0." and zeros).
    private var leading: Int { count + exponent }

    /// The length of the plain text.
    var textLength: Int {
        guard count > 0 else { return 1 }
        if isVerbatim { return byteCount }
        let sign = negative ? 1 : 0
        if exponent >= 0 { return sign + count + exponent }
        return sign + (leading > 0 ? count + 1 : 2 - leading + count)
    }

    /// Writes the plain text: `-`, the digits with a `.` where the exponent puts it, zeros.
    func write(_ bytes: UnsafeRawBufferPointer, _ writer: inout ByteWriter) {
        guard count > 0 else {
            writer.writeByte(UInt8(ascii: "0"))
            return
        }
        if isVerbatim {
            writer.write(bytes: bytes)
            return
        }
        if negative { writer.writeByte(UInt8(ascii: "-")) }
        if leading <= 0 {
            writer.writeByte(UInt8(ascii: "0"))
            writer.writeByte(UInt8(ascii: "."))
            for _ in 0..<(-leading) { writer.writeByte(UInt8(ascii: "0")) }
        }
        var written = 0
        for index in digits where index != point {
            if written == leading && leading > 0 { writer.writeByte(UInt8(ascii: ".")) }
            writer.writeByte(bytes[index])
            written += 1
        }
        for _ in 0..<max(exponent, 0) { writer.writeByte(UInt8(ascii: "0")) }
    }
}
