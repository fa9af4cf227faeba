import CairnSupport
import Foundation

/// The words a boolean attribute reads from a string: `true`, `yes`, `y`, `1` and `false`,
/// `no`, `n`, `0`, in any case.
enum BooleanWord {
    private static let words: [(word: [UInt8], value: Bool)] = [
        ("true", true), ("yes", true), ("y", true), ("1", true), ("false", false), ("no", false), ("n", false), ("0", false)
    ].map { (Array($0.0.utf8), $0.1) }

    /// The boolean the bytes spell, or nil.
    static func value(_ bytes: UnsafeRawBufferPointer) -> Bool? {
        guard bytes.count <= 5 else { return nil }
        for (word, value) in words where word.count == bytes.count {
            var index = 0
            while index < word.count {
                let byte = bytes[index]
                let lower = byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
                guard lower == word[index] else { break }
                index += 1
            }
            if index == word.count { return value }
        }
        return nil
    }
}

/// A UUID's text, read in place: 36 characters, hexadecimal digits of either case with hyphens
/// after the 8th, 12th, 16th and 20th digit (what `UUID(uuidString:)` reads).
enum UUIDText {
    /// The UUID the bytes write, or nil.
    static func uuid(_ bytes: UnsafeRawBufferPointer) -> uuid_t? {
        guard bytes.count == 36 else { return nil }
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let read = withUnsafeMutableBytes(of: &uuid) { out -> Bool in
            var index = 0
            for position in 0..<16 {
                if index == 8 || index == 13 || index == 18 || index == 23 {
                    guard bytes[index] == UInt8(ascii: "-") else { return false }
                    index += 1
                }
                guard let high = HexDigit.value(bytes[index]), let low = HexDigit.value(bytes[index + 1]) else { return false }
                out[position] = high << 4 | low
                index += 2
            }
            return true
        }
        return read ? uuid : nil
    }

}

/// A hexadecimal digit of either case.
enum HexDigit {
    /// The digit's value, or nil.
    static func value(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// Padded standard base64 (`A–Z a–z 0–9 + /`, `=` only as the last one or two characters),
/// decoded in place as `Data(base64Encoded:)` decodes it (bits after the last byte ignored).
enum Base64Text {
    /// Per byte, its six bits in the standard alphabet, or 0xFF.
    private static let sextets: [UInt8] = (0...255).map { byte -> UInt8 in
        switch UInt8(byte) {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): UInt8(byte) - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): UInt8(byte) - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt8(byte) - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: 0xFF
        }
    }

    /// The number of bytes the text decodes to, or nil when it is not padded standard base64.
    static func decodedCount(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count % 4 == 0 else { return nil }
        var padding = 0
        if bytes.count >= 4 {
            if bytes[bytes.count - 1] == UInt8(ascii: "=") { padding += 1 }
            if padding == 1 && bytes[bytes.count - 2] == UInt8(ascii: "=") { padding += 1 }
        }
        let valid = sextets.withUnsafeBufferPointer { table in
            var seen: UInt8 = 0
            for index in 0..<(bytes.count - padding) { seen |= table[Int(bytes[index])] }
            return seen & 0xC0 == 0  // 0xFF, the mark of a byte outside the alphabet, has them
        }
        return valid ? bytes.count / 4 * 3 - padding : nil
    }

    /// Writes the bytes of text that ``decodedCount(_:)`` accepted into `out`, which holds as
    /// many bytes as it counted (it writes no further than `out` holds).
    static func decode(_ bytes: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) {
        sextets.withUnsafeBufferPointer { table in
            var index = 0
            var position = 0
            while index + 3 < bytes.count && position < out.count {
                // A padding `=` reads as 0xFF: its bits are shifted out of the bytes written.
                let a = UInt32(table[Int(bytes[index])] & 0x3F), b = UInt32(table[Int(bytes[index + 1])] & 0x3F)
                let c = UInt32(table[Int(bytes[index + 2])] & 0x3F), d = UInt32(table[Int(bytes[index + 3])] & 0x3F)
                let group = a << 18 | b << 12 | c << 6 | d
                // Three bytes a group, fewer in a padded last one.
                let count = min(3, out.count - position)
                out[position] = UInt8(truncatingIfNeeded: group >> 16)
                if count > 1 { out[position + 1] = UInt8(truncatingIfNeeded: group >> 8) }
                if count > 2 { out[position + 2] = UInt8(truncatingIfNeeded: group) }
                position += 3
                index += 4
            }
        }
    }
}

/// The URIs the importer takes without Foundation's parser: `scheme://host[:port]` and then a
/// path, query and fragment of RFC 3986's characters (percent signs before two hexadecimal
/// digits). `URL(string:)` reads every one of them; others go to it.
enum URIText {
    /// Whether the bytes are such a URI.
    static func isPlain(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        let end = bytes.count
        func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) &- UInt8(ascii: "a") < 26 }
        func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }
        // The scheme, then "://".
        guard end > 0, isLetter(bytes[0]) else { return false }
        while index < end,
            isLetter(bytes[index]) || isDigit(bytes[index]) || bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: ".")
                || bytes[index] == UInt8(ascii: "-")
        {
            index += 1
        }
        guard index + 3 <= end, bytes[index] == UInt8(ascii: ":"), bytes[index + 1] == UInt8(ascii: "/"), bytes[index + 2] == UInt8(ascii: "/") else {
            return false
        }
        index += 3
        // The host: letters, digits, `.` and `-`; a port of one to five digits.
        let host = index
        while index < end, isLetter(bytes[index]) || isDigit(bytes[index]) || bytes[index] == UInt8(ascii: ".") || bytes[index] == UInt8(ascii: "-") {
            index += 1
        }
        guard index > host else { return false }
        if index < end && bytes[index] == UInt8(ascii: ":") {
            index += 1
            let port = index
            while index < end, isDigit(bytes[index]) { index += 1 }
            guard (1...5).contains(index - port) else { return false }
        }
        guard index == end || bytes[index] == UInt8(ascii: "/") || bytes[index] == UInt8(ascii: "?") || bytes[index] == UInt8(ascii: "#") else {
            return false
        }
        // The rest: RFC 3986's unreserved and reserved characters but brackets; `%` and two hex digits.
        while index < end {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < end, HexDigit.value(bytes[index + 1]) != nil, HexDigit.value(bytes[index + 2]) != nil else { return false }
                index += 3
                continue
            }
            guard isAllowed(byte) else { return false }
            index += 1
        }
        return true
    }

    /// Whether a path, query or fragment holds the byte as itself: letters, digits and
    /// `-._~:/?#@!$&'()*+,;=` (``allowedCharacters``), one bit a byte of ASCII in two masks, so
    /// that the loop over every byte reads no table.
    @inline(__always)
    static func isAllowed(_ byte: UInt8) -> Bool {
        if byte < 64 { return (allowedBelow64 >> UInt64(byte)) & 1 == 1 }
        return byte < 128 && (allowedFrom64 >> UInt64(byte &- 64)) & 1 == 1
    }

    /// The characters besides letters and digits that ``isAllowed(_:)`` takes.
    static let allowedCharacters = "-._~:/?#@!$&'()*+,;="
    /// ``isAllowed(_:)``'s bits for bytes 0–63: `!#$&'()*+,-./`, the digits, `:;=?`.
    private static let allowedBelow64: UInt64 = 0xAFFF_FFDA_0000_0000
    /// ``isAllowed(_:)``'s bits for bytes 64–127: `@`, the letters, `_`, `~`.
    private static let allowedFrom64: UInt64 = 0x47FF_FFFE_87FF_FFFF

}
