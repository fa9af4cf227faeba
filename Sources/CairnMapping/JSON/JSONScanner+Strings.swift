/// A string of JSON text: the bytes between its quotes, checked; decoded on demand with
/// ``JSONScanner/string(_:)``.
public struct JSONStringText: Equatable, Sendable {
    /// The bytes between the quotes.
    public var range: Range<Int>
    /// Whether the text holds escapes (`\n`, `\u00e9`…), so that decoding must unescape.
    public var hasEscapes: Bool
}

extension JSONScanner {
    /// The text of a string or key.
    public func string(_ text: JSONStringText) -> String {
        let slice = UnsafeRawBufferPointer(rebasing: bytes[text.range])
        guard text.hasEscapes else { return String(decoding: slice, as: UTF8.self) }
        return String(decoding: Self.unescaped(slice), as: UTF8.self)
    }

    /// Whether a string or key is exactly `word` (without decoding it when it has no escapes).
    public func string(_ text: JSONStringText, equals word: String) -> Bool {
        guard text.hasEscapes else {
            return word.utf8.elementsEqual(UnsafeRawBufferPointer(rebasing: bytes[text.range]))
        }
        return string(text) == word
    }

    /// Scans a string whose opening quote is at `offset`; leaves `offset` after the closing one.
    mutating func scanString() throws(JSONSyntaxError) -> JSONStringText {
        let start = offset + 1
        var index = start
        var escapes = false
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                offset = index + 1
                return JSONStringText(range: start..<index, hasEscapes: escapes)
            }
            if byte == UInt8(ascii: "\\") {
                escapes = true
                index = try scanEscape(at: index)
            } else if byte < 0x20 {
                throw failure("a control character (byte 0x\(String(byte, radix: 16, uppercase: true))) inside a string must be escaped", at: index)
            } else if byte < 0x80 {
                index += 1
            } else {
                index = try scanUTF8(at: index)
            }
        }
        throw truncation("the input ends inside a string", at: offset)
    }

    /// Checks the escape at `index` (a backslash); returns the offset after it.
    private func scanEscape(at index: Int) throws(JSONSyntaxError) -> Int {
        guard index + 1 < bytes.count else { throw truncation("the input ends inside an escape", at: index) }
        switch bytes[index + 1] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            return index + 2
        case UInt8(ascii: "u"):
            let unit = try hexUnit(at: index + 2)
            switch unit {
            case 0xD800...0xDBFF:
                // A high surrogate: a low one must follow, as an escape of its own.
                guard index + 7 < bytes.count, bytes[index + 6] == UInt8(ascii: "\\"), bytes[index + 7] == UInt8(ascii: "u"),
                    (0xDC00...0xDFFF).contains(try hexUnit(at: index + 8))
                else {
                    let message = "a \\u escape of a high surrogate is not followed by one of a low surrogate"
                    // Input that ends before the low surrogate's escape would: more might bring it.
                    throw index + 12 > bytes.count ? truncation(message, at: index) : failure(message, at: index)
                }
                return index + 12
            case 0xDC00...0xDFFF:
                throw failure("a \\u escape of a low surrogate without a high one before it", at: index)
            default:
                return index + 6
            }
        default:
            throw failure("an invalid escape \\\(Self.describe(bytes[index + 1]))", at: index)
        }
    }

    /// The four hex digits at `index`.
    private func hexUnit(at index: Int) throws(JSONSyntaxError) -> UInt16 {
        guard index + 4 <= bytes.count else { throw truncation("the input ends inside a \\u escape", at: index) }
        var unit: UInt16 = 0
        for position in index..<(index + 4) {
            guard let digit = Self.hexValue(bytes[position]) else {
                throw failure("a \\u escape needs four hex digits, found \(Self.describe(bytes[position]))", at: position)
            }
            unit = unit << 4 | UInt16(digit)
        }
        return unit
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Checks the UTF-8 sequence that starts at `index` (a byte ≥ 0x80); returns the offset
    /// after it. Refuses overlong forms, surrogates, and scalars above U+10FFFF.
    private func scanUTF8(at index: Int) throws(JSONSyntaxError) -> Int {
        let lead = bytes[index]
        let length: Int
        var lower: UInt8 = 0x80
        var upper: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: (length, lower) = (3, 0xA0)
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: (length, upper) = (3, 0x9F)
        case 0xF0: (length, lower) = (4, 0x90)
        case 0xF1...0xF3: length = 4
        case 0xF4: (length, upper) = (4, 0x8F)
        default: throw failure("invalid UTF-8 (byte 0x\(String(lead, radix: 16, uppercase: true)) cannot start a character)", at: index)
        }
        guard index + length <= bytes.count else { throw truncation("the input ends inside a UTF-8 character", at: index) }
        for position in (index + 1)..<(index + length) {
            let byte = bytes[position]
            let (low, high) = position == index + 1 ? (lower, upper) : (UInt8(0x80), UInt8(0xBF))
            guard byte >= low && byte <= high else { throw failure("invalid UTF-8 (byte 0x\(String(byte, radix: 16, uppercase: true)))", at: position) }
        }
        return index + length
    }

    /// The bytes of a checked string with its escapes replaced.
    static func unescaped(_ slice: UnsafeRawBufferPointer) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(slice.count)
        var index = 0
        func unit(at position: Int) -> UInt32 {
            var value: UInt32 = 0
            for offset in position..<(position + 4) { value = value << 4 | UInt32(hexValue(slice[offset]) ?? 0) }
            return value
        }
        while index < slice.count {
            let byte = slice[index]
            guard byte == UInt8(ascii: "\\") else {
                out.append(byte)
                index += 1
                continue
            }
            let kind = slice[index + 1]
            index += 2
            switch kind {
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = unit(at: index)
                index += 4
                if (0xD800...0xDBFF).contains(scalar) {
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (unit(at: index + 2) - 0xDC00)
                    index += 6
                }
                out.append(contentsOf: Unicode.Scalar(scalar).map { Array(String($0).utf8) } ?? [0xEF, 0xBF, 0xBD])
            default: out.append(kind)  // " \ /
            }
        }
        return out
    }
}
