/// A string as a double-quoted literal with JSON's escapes (RFC 8259): what JSON export, the
/// command line's JSON and the predicate syntax write, one rule for all three.
///
/// `"` and `\` are escaped with a backslash; newline, carriage return and tab as `\n`, `\r`,
/// `\t`; every other control character (U+0000–U+001F) and DEL as `\u00xx`. Everything else is
/// copied as it is (UTF-8 in, UTF-8 out).
package enum QuotedString {
    /// Whether `byte` is written escaped.
    @inline(__always)
    package static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == 0x7F
    }

    /// Appends the UTF-8 `bytes`, quoted and escaped, to `out`.
    package static func append(utf8 bytes: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var start = 0
        for index in 0..<bytes.count where needsEscape(bytes[index]) {
            if index > start { out.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<index])) }
            appendEscape(bytes[index], to: &out)
            start = index + 1
        }
        if bytes.count > start { out.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<bytes.count])) }
        out.append(UInt8(ascii: "\""))
    }

    /// `text`, quoted and escaped.
    package static func quoted(_ text: String) -> String {
        var text = text
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 2)
        text.withUTF8 { append(utf8: UnsafeRawBufferPointer($0), to: &out) }
        return String(decoding: out, as: UTF8.self)
    }

    private static func appendEscape(_ byte: UInt8, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(byte)
        case 0x0A: out.append(UInt8(ascii: "n"))
        case 0x0D: out.append(UInt8(ascii: "r"))
        case 0x09: out.append(UInt8(ascii: "t"))
        default:
            // `\u00` and two lowercase hex digits (the byte is below 0x80).
            func hex(_ digit: UInt8) -> UInt8 { digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10 }
            out.append(UInt8(ascii: "u"))
            out.append(UInt8(ascii: "0"))
            out.append(UInt8(ascii: "0"))
            out.append(hex(byte >> 4))
            out.append(hex(byte & 0xF))
        }
    }
}
