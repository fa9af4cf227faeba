import Cairn
import CairnSupport
import Foundation

/// Writes JSON text into a byte buffer, handing full buffers to a sink: export streams, whatever
/// the size of the result.
struct JSONWriter {
    private(set) var buffer: [UInt8] = []
    /// Bytes handed to the sink so far.
    private(set) var flushed = 0
    private let sink: (UnsafeRawBufferPointer) throws -> Void
    private static let flushSize = 1 << 16

    init(sink: @escaping (UnsafeRawBufferPointer) throws -> Void) {
        self.sink = sink
        buffer.reserveCapacity(Self.flushSize + 4096)
    }

    /// Hands what is buffered to the sink once the buffer is full (or always, with `force`).
    mutating func flush(force: Bool = false) throws {
        guard force ? !buffer.isEmpty : buffer.count >= Self.flushSize else { return }
        try buffer.withUnsafeBytes { try sink($0) }
        flushed += buffer.count
        buffer.removeAll(keepingCapacity: true)
    }

    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { buffer.append(contentsOf: $0) }
    }

    mutating func byte(_ byte: UInt8) { buffer.append(byte) }

    /// Bytes already in JSON form.
    mutating func bytes(_ json: [UInt8]) { buffer.append(contentsOf: json) }

    mutating func raw(_ text: String) {
        var text = text
        text.withUTF8 { buffer.append(contentsOf: $0) }
    }

    /// A string, quoted and escaped as RFC 8259 requires.
    mutating func string(_ text: String) {
        var text = text
        text.withUTF8 { string(utf8: UnsafeRawBufferPointer($0)) }
    }

    /// A string given as its UTF-8 bytes, quoted and escaped (only what JSON requires).
    mutating func string(utf8 bytes: UnsafeRawBufferPointer) {
        buffer.append(UInt8(ascii: "\""))
        var start = 0
        for index in 0..<bytes.count {
            let byte = bytes[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            if index > start { append(bytes.piece(start..<index)) }
            escape(byte)
            start = index + 1
        }
        if bytes.count > start { append(bytes.piece(start..<bytes.count)) }
        buffer.append(UInt8(ascii: "\""))
    }

    private mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        buffer.append(contentsOf: UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: bytes.count))
    }

    private mutating func escape(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): raw("\\\"")
        case UInt8(ascii: "\\"): raw("\\\\")
        case 0x0A: raw("\\n")
        case 0x0D: raw("\\r")
        case 0x09: raw("\\t")
        case 0x08: raw("\\b")
        case 0x0C: raw("\\f")
        default:
            let hex: StaticString = "0123456789abcdef"
            raw("\\u00")
            hex.withUTF8Buffer { digits in
                buffer.append(digits[Int(byte >> 4)])
                buffer.append(digits[Int(byte & 0xF)])
            }
        }
    }

    /// An integer, in decimal, without making a String.
    mutating func integer(_ number: Int64) {
        if number < 0 { buffer.append(UInt8(ascii: "-")) }
        var magnitude = number.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for 20 digits, written backwards
        var count = 0
        withUnsafeMutableBytes(of: &digits) { room in
            repeat {
                room[23 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            buffer.append(contentsOf: room[(24 - count)...])
        }
    }

    /// A date as ISO 8601 in UTC with milliseconds (`2024-05-01T10:20:30.123Z`), as `DateText`
    /// writes it, without making a String; a date outside years 0–9999 through `DateText`.
    mutating func isoDate(_ date: Date) {
        guard let milliseconds = DateText.millisecondsSince1970(date),
            case let time = DateText.fields(millisecondsSince1970: milliseconds), (0...9999).contains(time.year)
        else { return string(DateText.iso8601(date)) }
        func digits(_ value: Int64, _ width: Int) {
            var divisor: Int64 = 1
            for _ in 1..<width { divisor *= 10 }
            var rest = value
            while divisor > 0 {
                buffer.append(UInt8(ascii: "0") + UInt8(rest / divisor))
                rest %= divisor
                divisor /= 10
            }
        }
        buffer.append(UInt8(ascii: "\""))
        digits(time.year, 4)
        buffer.append(UInt8(ascii: "-"))
        digits(time.month, 2)
        buffer.append(UInt8(ascii: "-"))
        digits(time.day, 2)
        buffer.append(UInt8(ascii: "T"))
        digits(time.hour, 2)
        buffer.append(UInt8(ascii: ":"))
        digits(time.minute, 2)
        buffer.append(UInt8(ascii: ":"))
        digits(time.second, 2)
        buffer.append(UInt8(ascii: "."))
        digits(time.millisecond, 3)
        buffer.append(contentsOf: [UInt8(ascii: "Z"), UInt8(ascii: "\"")])
    }

    /// A tree of JSON.
    mutating func value(_ json: JSONValue) {
        switch json {
        case .null: raw("null")
        case .boolean(let flag): flag ? raw("true") : raw("false")
        case .number(let text): raw(text)
        case .string(let text): string(text)
        case .array(let items):
            byte(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { byte(UInt8(ascii: ",")) }
                value(item)
            }
            byte(UInt8(ascii: "]"))
        case .object(let members):
            byte(UInt8(ascii: "{"))
            for (index, member) in members.enumerated() {
                if index > 0 { byte(UInt8(ascii: ",")) }
                string(member.key)
                byte(UInt8(ascii: ":"))
                value(member.value)
            }
            byte(UInt8(ascii: "}"))
        }
    }
}
